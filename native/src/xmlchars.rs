//! The fast XML reader's byte classes (xmlfast.rs): which bytes end a text, an attribute
//! value or a name, tested eight at a time (SWAR) where a scan is hot; short names compared
//! without a call; character references decoded.

use super::{Other, F};

/// Bytes text scanning stops at: '<', '&', ']', controls, 0xEF (U+FFFE/U+FFFF start so).
pub(super) static STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'<' as usize] = true;
    table[b'&' as usize] = true;
    table[b']' as usize] = true;
    table[b':' as usize] = true;
    table[0xEF] = true;
    table
};

/// The bytes of a word that [`STOP`] holds (SWAR: the lowest flagged byte is exact).
#[inline]
pub(super) fn stops(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    control
        | zero(word ^ (ONES * b'<' as u64))
        | zero(word ^ (ONES * b'&' as u64))
        | zero(word ^ (ONES * b']' as u64))
        | zero(word ^ (ONES * b':' as u64))
        | zero(word ^ (ONES * 0xEF))
}

/// The bytes of a word an attribute value's scan looks at: its quote, '<', '&', controls,
/// 0xEF (SWAR, as [`stops`]).
#[inline]
pub(super) fn in_value(word: u64, quote: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    control
        | zero(word ^ (ONES * quote as u64))
        | zero(word ^ (ONES * b'<' as u64))
        | zero(word ^ (ONES * b'&' as u64))
        | zero(word ^ (ONES * 0xEF))
}

/// NCName characters after the first (ASCII only).
pub(super) static NAME: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.';
        b += 1;
    }
    table
};

/// ``a == b`` for the short names of a document, without a call to bcmp (a call per
/// element cost more than the scan): eight bytes at a time, the last (partial) word read
/// again overlapping the one before, a short name as two overlapping halves (no byte loop).
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        let mut diff = 0u64;
        let mut at = 0;
        while at + 8 < n {
            diff |= word(a, at) ^ word(b, at);
            at += 8;
        }
        return diff | (word(a, n - 8) ^ word(b, n - 8)) == 0;
    }
    if n >= 4 {
        let half =
            |s: &[u8], at: usize| u32::from_le_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]]);
        return (half(a, 0) ^ half(b, 0)) | (half(a, n - 4) ^ half(b, n - 4)) == 0;
    }
    if n >= 2 {
        let half = |s: &[u8], at: usize| u16::from_le_bytes([s[at], s[at + 1]]);
        return (half(a, 0) ^ half(b, 0)) | (half(a, n - 2) ^ half(b, n - 2)) == 0;
    }
    n == 0 || a[0] == b[0]
}

/// The eight bytes of ``s`` from ``at`` as a little-endian word (``at + 8 <= s.len()``).
#[inline]
pub(super) fn word(s: &[u8], at: usize) -> u64 {
    let w = &s[at..at + 8];
    u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
}

/// The bytes of a word that are not NCName characters after the first (ASCII letters,
/// digits, '_', '-', '.'): exact per byte (no carry crosses a byte), so any flagged byte is
/// one, the lowest the first.
#[inline]
pub(super) fn not_name(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let t = word & LOW;
    // the high bit of each byte set where lo <= byte <= hi (bytes below 0x80)
    let between = |x: u64, lo: u8, hi: u8| {
        x.wrapping_add(ONES * (0x80 - lo as u64))
            & !x.wrapping_add(ONES * (0x7F - hi as u64))
            & HIGH
    };
    let digit = between(t, b'0', b'9');
    let letter = between(t | (ONES * 0x20), b'a', b'z');
    let dash_dot = between(t, b'-', b'.');
    // exact zero test: the high bit set where the byte is not zero
    let nonzero = |x: u64| ((x & LOW).wrapping_add(LOW) | x) & HIGH;
    let underscore = nonzero(t ^ (ONES * b'_' as u64)) ^ HIGH;
    let name = (digit | letter | dash_dot | underscore) & !(word & HIGH);
    !name & HIGH
}

#[inline]
pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

#[inline]
pub(super) fn name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// An XML Char (XML 1.0 section 2.2) a character reference may name.
pub(super) fn xml_char(c: u32) -> bool {
    matches!(c, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

/// Text with references -> its characters.
pub(super) fn decode(text: &str) -> F<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let end = after.find(';').ok_or(Other)?;
        let name = &after[..end];
        match name {
            "lt" => out.push('<'),
            "gt" => out.push('>'),
            "amp" => out.push('&'),
            "apos" => out.push('\''),
            "quot" => out.push('"'),
            _ => {
                let number = if let Some(hex) = name.strip_prefix("#x") {
                    if hex.is_empty()
                        || hex.len() > 8
                        || !hex.bytes().all(|b| b.is_ascii_hexdigit())
                    {
                        return Err(Other);
                    }
                    u32::from_str_radix(hex, 16).map_err(|_| Other)?
                } else if let Some(digits) = name.strip_prefix('#') {
                    if digits.is_empty()
                        || digits.len() > 8
                        || !digits.bytes().all(|b| b.is_ascii_digit())
                    {
                        return Err(Other);
                    }
                    digits.parse::<u32>().map_err(|_| Other)?
                } else {
                    return Err(Other); // an entity: the reference refuses it
                };
                if !xml_char(number) {
                    return Err(Other);
                }
                out.push(char::from_u32(number).ok_or(Other)?);
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
