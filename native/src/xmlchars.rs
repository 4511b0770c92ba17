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
        return (quad(a, 0) ^ quad(b, 0)) | (quad(a, n - 4) ^ quad(b, n - 4)) == 0;
    }
    if n >= 2 {
        return (pair(a, 0) ^ pair(b, 0)) | (pair(a, n - 2) ^ pair(b, n - 2)) == 0;
    }
    n == 0 || a[0] == b[0]
}

/// ``s[a..a + len] == s[b..b + len]`` (both within ``s``): a name of up to sixteen bytes
/// compared in one sixteen-byte step (SSE2) where both have sixteen bytes to read, else
/// [`same_bytes`].
#[inline(always)]
pub(super) fn same_in(s: &[u8], a: usize, b: usize, len: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    if len <= 16 && a.max(b) + 16 <= s.len() {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; both loads read within the slice (checked above).
        let equal = unsafe {
            let x = _mm_loadu_si128(s.as_ptr().add(a) as *const __m128i);
            let y = _mm_loadu_si128(s.as_ptr().add(b) as *const __m128i);
            _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) as u32
        };
        // (the bits from 16 on are set: a mask of 16 equal bytes gives 16)
        return (!equal).trailing_zeros() as usize >= len;
    }
    same_bytes(&s[a..a + len], &s[b..b + len])
}

/// Four bytes of ``s`` from ``at`` as a word (functions, not closures: a closure of an
/// inlined function was left out of line, a call per name).
#[inline(always)]
fn quad(s: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]])
}

#[inline(always)]
fn pair(s: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([s[at], s[at + 1]])
}

/// The eight bytes of ``s`` from ``at`` as a little-endian word (``at + 8 <= s.len()``).
#[inline(always)]
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

/// Whether ``s`` holds a space: eight bytes at a time (the last word read again overlapping
/// the one before), a text shorter than a word byte by byte (a byte loop cost four
/// instructions a byte on an identity's text).
#[inline]
pub(super) fn has_space(s: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = s.len();
    if n < 8 {
        return s.contains(&b' ');
    }
    let space = |w: u64| {
        let x = w ^ (ONES * b' ' as u64);
        x.wrapping_sub(ONES) & !x & HIGH
    };
    let mut at = 0;
    while at + 8 < n {
        if space(word(s, at)) != 0 {
            return true;
        }
        at += 8;
    }
    space(word(s, n - 8)) != 0
}

#[inline]
pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Bytes a name may start with: ASCII letters and '_' (a table: one load where the reader
/// tells a start tag from the rest, once an element).
static START: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphabetic() || b == b'_' as usize;
        b += 1;
    }
    table
};

#[inline(always)]
pub(super) fn name_start(b: u8) -> bool {
    START[b as usize]
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

/// Whether [`scan16`] scans (else the caller's eight-byte scan does it all).
pub(super) const SCAN16: bool = cfg!(target_arch = "x86_64");

/// From ``at``, sixteen bytes at a time (SSE2), the first byte text scanning must look at
/// ([`STOP`]'s but ':', tab and line feed, which text may hold), or the first of the last
/// block shorter than sixteen bytes; and whether the bytes passed hold a ':'.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn scan16(s: &[u8], mut at: usize) -> (usize, bool) {
    use std::arch::x86_64::*;
    let mut colon = false;
    // SAFETY: SSE2 is part of x86_64; every load reads s[at..at + 16], within the slice.
    unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let (lt, amp, bracket, ef, colons) = (
            splat(b'<'),
            splat(b'&'),
            splat(b']'),
            splat(0xEF),
            splat(b':'),
        );
        let (below, tab, newline) = (splat(0x1F), splat(b'\t'), splat(b'\n'));
        while at + 16 <= s.len() {
            let x = _mm_loadu_si128(s.as_ptr().add(at) as *const __m128i);
            // bytes below 0x20, but tab and line feed
            let control = _mm_andnot_si128(
                _mm_or_si128(_mm_cmpeq_epi8(x, tab), _mm_cmpeq_epi8(x, newline)),
                _mm_cmpeq_epi8(_mm_min_epu8(x, below), x),
            );
            let stop = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(x, lt), _mm_cmpeq_epi8(x, amp)),
                _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(x, bracket), _mm_cmpeq_epi8(x, ef)),
                    control,
                ),
            );
            let stop = _mm_movemask_epi8(stop) as u32;
            let found = _mm_movemask_epi8(_mm_cmpeq_epi8(x, colons)) as u32;
            if stop != 0 {
                let n = stop.trailing_zeros();
                colon |= found & ((1u32 << n) - 1) != 0;
                return (at + n as usize, colon);
            }
            colon |= found != 0;
            at += 16;
        }
    }
    (at, colon)
}

/// Where the text from ``at`` ends when [`scan16`] stops at a '<' (the text plain
/// characters, tab and line feed, ':' allowed), and whether it holds a ':'; None for
/// anything else (a reference, a control, ']', 0xEF, the document's last sixteen bytes):
/// the full scan decides.
#[inline(always)]
pub(super) fn plain16(s: &[u8], at: usize) -> Option<(usize, bool)> {
    if !SCAN16 {
        return None;
    }
    let (end, colon) = scan16(s, at);
    (end + 16 <= s.len() && s[end] == b'<').then_some((end, colon))
}

/// Where the NCName characters after the first (ASCII letters, digits, '_', '-', '.') that
/// start at ``at`` end (SSE2: sixteen bytes at a time while a whole block is left); None
/// when they run into the input's last fifteen bytes: the caller's scan decides.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn name16(s: &[u8], mut at: usize) -> Option<usize> {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86_64; every load reads s[at..at + 16], within the slice.
    unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        // signed compares: bytes from 0x80 on are negative, below every bound
        let within = |x: __m128i, lo: u8, hi: u8| {
            _mm_and_si128(
                _mm_cmpgt_epi8(x, splat(lo - 1)),
                _mm_cmplt_epi8(x, splat(hi + 1)),
            )
        };
        while at + 16 <= s.len() {
            let x = _mm_loadu_si128(s.as_ptr().add(at) as *const __m128i);
            let letter = within(_mm_or_si128(x, splat(0x20)), b'a', b'z');
            let digit_dash_dot = within(x, b'-', b'9'); // - . / 0-9
            let slash = _mm_cmpeq_epi8(x, splat(b'/'));
            let underscore = _mm_cmpeq_epi8(x, splat(b'_'));
            let name = _mm_or_si128(
                _mm_or_si128(letter, underscore),
                _mm_andnot_si128(slash, digit_dash_dot),
            );
            let not_name = !(_mm_movemask_epi8(name) as u32) & 0xFFFF;
            if not_name != 0 {
                return Some(at + not_name.trailing_zeros() as usize);
            }
            at += 16;
        }
    }
    None
}

/// The text after a start tag's '>' as [`element32`] found it.
#[derive(Clone, Copy)]
pub(super) enum Text {
    /// It ends at this '<', plain ([`plain16`]'s: no byte [`scan16`] stops at but the '<');
    /// whether it holds a ':'.
    Ends(usize, bool),
    /// Plain up to this offset, the window's end (and whether that holds a ':'): the rest is
    /// scanned on.
    Plain(usize, bool),
    /// A byte [`scan16`] stops at, not a '<': the full scan reads it.
    Other,
}

/// A start tag's name and the start of its text read from one window of 32 bytes (two
/// loads, neither waiting on the other, where [`name16`] then [`plain16`] wait one on the
/// other): from ``at``, a name's first byte (checked by the caller), where the NCName
/// characters end, when a '>' ends them within sixteen bytes (else None: the caller reads the
/// tag as before; and in the input's last 32 bytes); then the [`Text`] after the '>'.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn element32(s: &[u8], at: usize) -> Option<(usize, Text)> {
    use std::arch::x86_64::*;
    if at + 32 > s.len() {
        return None;
    }
    // SAFETY: SSE2 is part of x86_64; the loads read s[at..at + 32], within the slice.
    let (names, gts, stops, lts, colons) = unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let x = _mm_loadu_si128(s.as_ptr().add(at) as *const __m128i);
        let y = _mm_loadu_si128(s.as_ptr().add(at + 16) as *const __m128i);
        // name16's classes: signed compares, bytes from 0x80 on below every bound
        let within = |x: __m128i, lo: u8, hi: u8| {
            _mm_and_si128(
                _mm_cmpgt_epi8(x, splat(lo - 1)),
                _mm_cmplt_epi8(x, splat(hi + 1)),
            )
        };
        let letter = within(_mm_or_si128(x, splat(0x20)), b'a', b'z');
        let digit_dash_dot = within(x, b'-', b'9'); // - . / 0-9
        let name = _mm_or_si128(
            _mm_or_si128(letter, _mm_cmpeq_epi8(x, splat(b'_'))),
            _mm_andnot_si128(_mm_cmpeq_epi8(x, splat(b'/')), digit_dash_dot),
        );
        // scan16's stops: '<', '&', ']', 0xEF, controls but tab and line feed
        let stop = |x: __m128i| {
            let control = _mm_andnot_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(x, splat(b'\t')),
                    _mm_cmpeq_epi8(x, splat(b'\n')),
                ),
                _mm_cmpeq_epi8(_mm_min_epu8(x, splat(0x1F)), x),
            );
            _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(x, splat(b'<')),
                    _mm_cmpeq_epi8(x, splat(b'&')),
                ),
                _mm_or_si128(
                    _mm_or_si128(
                        _mm_cmpeq_epi8(x, splat(b']')),
                        _mm_cmpeq_epi8(x, splat(0xEF)),
                    ),
                    control,
                ),
            )
        };
        let mask = |v: __m128i| _mm_movemask_epi8(v) as u32;
        let both =
            |b: u8| mask(_mm_cmpeq_epi8(x, splat(b))) | mask(_mm_cmpeq_epi8(y, splat(b))) << 16;
        (
            mask(name),
            mask(_mm_cmpeq_epi8(x, splat(b'>'))),
            mask(stop(x)) | mask(stop(y)) << 16,
            both(b'<'),
            both(b':'),
        )
    };
    let end = (!names & 0xFFFF).trailing_zeros(); // 16: no end within the first block
    if end == 16 || gts >> end & 1 == 0 {
        return None;
    }
    // the text's bits: from end + 1 on
    let text = !((2u32 << end) - 1);
    let stop = (stops & text).trailing_zeros(); // 32: none in the window
    let colon = colons & text & ((1u64 << stop) - 1) as u32 != 0;
    let (end, stop) = (end as usize, stop as usize);
    let text = match (lts as u64) >> stop & 1 {
        _ if stop == 32 => Text::Plain(at + 32, colon),
        1 => Text::Ends(at + stop, colon),
        _ => Text::Other,
    };
    Some((at + end, text))
}

/// From ``at``, sixteen bytes at a time (SSE2), the first byte an attribute value's scan
/// looks at ([`in_value`]'s), or the first of the last block shorter than sixteen bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn value16(s: &[u8], mut at: usize, quote: u8) -> usize {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86_64; every load reads s[at..at + 16], within the slice.
    unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let (quote, lt, amp, ef, below) = (
            splat(quote),
            splat(b'<'),
            splat(b'&'),
            splat(0xEF),
            splat(0x1F),
        );
        while at + 16 <= s.len() {
            let x = _mm_loadu_si128(s.as_ptr().add(at) as *const __m128i);
            let look = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, lt)),
                _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(x, amp), _mm_cmpeq_epi8(x, ef)),
                    _mm_cmpeq_epi8(_mm_min_epu8(x, below), x),
                ),
            );
            let look = _mm_movemask_epi8(look) as u32;
            if look != 0 {
                return at + look.trailing_zeros() as usize;
            }
            at += 16;
        }
    }
    at
}

/// ``data`` as text when it is UTF-8 (``str::from_utf8``), an ASCII document checked
/// sixteen bytes at a time first (most notifications are ASCII).
pub fn utf8(data: &[u8]) -> Option<&str> {
    if ascii(data) {
        // SAFETY: ASCII is UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(data) });
    }
    std::str::from_utf8(data).ok()
}

/// Whether every byte of ``s`` is ASCII (SSE2: sixteen bytes at a time, the rest one by
/// one).
#[cfg(target_arch = "x86_64")]
pub(super) fn ascii(s: &[u8]) -> bool {
    use std::arch::x86_64::*;
    let mut at = 0;
    // SAFETY: SSE2 is part of x86_64; every load reads s[at..at + 16], within the slice.
    unsafe {
        let mut high = _mm_setzero_si128();
        while at + 64 <= s.len() {
            let p = s.as_ptr().add(at) as *const __m128i;
            let a = _mm_or_si128(_mm_loadu_si128(p), _mm_loadu_si128(p.add(1)));
            let b = _mm_or_si128(_mm_loadu_si128(p.add(2)), _mm_loadu_si128(p.add(3)));
            high = _mm_or_si128(high, _mm_or_si128(a, b));
            at += 64;
        }
        while at + 16 <= s.len() {
            high = _mm_or_si128(high, _mm_loadu_si128(s.as_ptr().add(at) as *const __m128i));
            at += 16;
        }
        if _mm_movemask_epi8(high) != 0 {
            return false;
        }
    }
    s[at..].is_ascii()
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn ascii(s: &[u8]) -> bool {
    s.is_ascii()
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn value16(_s: &[u8], at: usize, _quote: u8) -> usize {
    at
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn name16(_s: &[u8], _at: usize) -> Option<usize> {
    None
}

/// [`element32`] elsewhere: the caller reads the tag's name, then its text.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn element32(_s: &[u8], _at: usize) -> Option<(usize, Text)> {
    None
}

/// [`scan16`] elsewhere: the caller's scan does it all.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(super) fn scan16(_s: &[u8], at: usize) -> (usize, bool) {
    (at, false)
}

#[cfg(test)]
mod tests {
    use super::has_space;

    /// The word test against ``contains``: every length to 40, a space (or each byte value)
    /// at every place, the rest a text of every other byte value in turn.
    #[test]
    fn has_space_is_contains() {
        for length in 0..40 {
            for fill in 0..=255u8 {
                let fill = if fill == b' ' { b'x' } else { fill };
                let clean = vec![fill; length];
                assert!(!has_space(&clean), "{length} {fill}");
                for at in 0..length {
                    for byte in [b' ', 0x00, 0x1f, 0x21, 0xa0, fill] {
                        let mut text = clean.clone();
                        text[at] = byte;
                        assert_eq!(has_space(&text), byte == b' ', "{length} {at} {byte}");
                    }
                }
            }
        }
    }
}
