//! A strict JSON (RFC 8259) parser into a tape (tape.rs), with the answers orjson gives: the same
//! numbers (integers in i64/u64, anything wider a float), the same strings, the same refusals.
//! Anything it refuses is handed back to the Python reference decoder, which words the error
//! (orjson's message), so this parser only has to be no more lenient than orjson.
//!
//! Duplicate members are found here as the reference finds them: the first object to *close*
//! with a member twice names the first member seen twice (stdlib json's object_pairs_hook
//! order), and only once the whole document parsed (a syntax error anywhere wins).

/// Deeper documents go to the reference decoder (orjson's limit is 1024, orjson.dumps's 254,
/// stdlib json's the recursion limit; real YANG data is a few dozen levels deep).
pub const MAX_DEPTH: usize = 128;

use crate::tape::{spare_tape, Doc, Node, Str, V};

#[derive(Debug)]
pub enum JsonError {
    /// Malformed, unsupported or too deep: the reference decoder words it.
    Refused,
    /// A member twice in one object (its name).
    Duplicate(String),
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: usize,
    check_duplicates: bool,
    duplicate: Option<String>,
    doc: Doc<'a>,
}

/// Parse a whole document. ``check_duplicates`` false parses as orjson.loads alone does
/// (the last value of a repeated name wins, where a dict is built from the members).
pub fn parse(data: &[u8], check_duplicates: bool) -> Result<Doc<'_>, JsonError> {
    // One validation of the whole input (orjson refuses invalid UTF-8 anywhere too): strings
    // are then slices of valid text.
    let text = if ascii(data) {
        // SAFETY: every byte is ASCII, and ASCII is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(data) }
    } else {
        std::str::from_utf8(data).map_err(|_| JsonError::Refused)?
    };
    if data.len() >= crate::tape::OWNED as usize {
        return Err(JsonError::Refused); // string offsets are 32-bit: the reference takes it
    }
    let mut p = Parser {
        text,
        bytes: data,
        at: 0,
        depth: 0,
        check_duplicates,
        duplicate: None,
        doc: Doc {
            input: text,
            nodes: spare_tape(data.len() / 8 + 4),
            owned: Vec::new(),
        },
    };
    p.skip_ws();
    p.value().ok_or(JsonError::Refused)?;
    p.skip_ws();
    if p.at != data.len() {
        return Err(JsonError::Refused);
    }
    match p.duplicate {
        Some(name) => Err(JsonError::Duplicate(name)),
        None => Ok(p.doc),
    }
}

/// Whether every byte is ASCII, 32 bytes a step (the usual notification: its validation as
/// UTF-8 is then done; ``from_utf8``'s own ASCII path was ~0.55 instructions a byte).
#[inline]
fn ascii(data: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut blocks = data.chunks_exact(32);
    for block in &mut blocks {
        let word = |i: usize| u64::from_le_bytes(block[i..i + 8].try_into().unwrap_or_default());
        if (word(0) | word(8) | word(16) | word(24)) & HIGH != 0 {
            return false;
        }
    }
    blocks.remainder().is_ascii()
}

/// Bytes of a word in which a byte is '"', '\\' or below 0x20 (SWAR).
#[inline]
fn special(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = word ^ (ONES * b'"' as u64);
    let slash = word ^ (ONES * b'\\' as u64);
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    zero(quote) | zero(slash) | control
}

impl<'a> Parser<'a> {
    /// Past any whitespace. Compact JSON has none: a byte above the space is tested first.
    #[inline(always)]
    fn skip_ws(&mut self) {
        match self.bytes.get(self.at) {
            Some(&b) if b <= b' ' => self.skip_spaces(),
            _ => {}
        }
    }

    #[inline(never)]
    fn skip_spaces(&mut self) {
        while let Some(&b) = self.bytes.get(self.at) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn literal(&mut self, word: &[u8], node: Node<'a>) -> Option<()> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            self.doc.nodes.push(node);
            Some(())
        } else {
            None
        }
    }

    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => {
                let s = self.string()?;
                self.doc.nodes.push(Node::Str(s));
                Some(())
            }
            b't' => self.literal(b"true", Node::Bool(true)),
            b'f' => self.literal(b"false", Node::Bool(false)),
            b'n' => self.literal(b"null", Node::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn object(&mut self) -> Option<()> {
        self.enter()?;
        self.at += 1;
        let header = self.doc.nodes.len();
        self.doc.nodes.push(Node::Object { len: 0, end: 0 });
        let mut len = 0u32;
        // Duplicates of the first 16 names are looked for as the names come (a fingerprint,
        // then the text); larger objects once they close.
        // Left uninitialised: only the first ``len`` are read, each written first (zeroing
        // both arrays cost every object ~10 stores).
        let mut prints = [std::mem::MaybeUninit::<u64>::uninit(); 16];
        let mut keys = [std::mem::MaybeUninit::<u32>::uninit(); 16]; // tape index of each name
        let mut repeated: Option<usize> = None;
        self.skip_ws();
        if self.peek()? == b'}' {
            self.at += 1;
        } else {
            loop {
                self.skip_ws();
                if self.peek()? != b'"' {
                    return None;
                }
                let name = self.string()?;
                if self.check_duplicates && repeated.is_none() && (len as usize) < 16 {
                    let text = self.doc.text(name);
                    let print = fingerprint(text);
                    let i = len as usize;
                    for k in 0..i {
                        // SAFETY: entries below ``len`` were written (below).
                        if unsafe { prints[k].assume_init() } == print {
                            let earlier = unsafe { keys[k].assume_init() } as usize;
                            let Node::Str(earlier) = self.doc.nodes[earlier] else {
                                continue;
                            };
                            if self.doc.text(earlier) == text {
                                repeated = Some(self.doc.nodes.len());
                                break;
                            }
                        }
                    }
                    prints[i].write(print);
                    keys[i].write(self.doc.nodes.len() as u32);
                }
                self.doc.nodes.push(Node::Str(name));
                self.skip_ws();
                if self.peek()? != b':' {
                    return None;
                }
                self.at += 1;
                self.skip_ws();
                // A string value read here, not in a call of ``value`` (a call's saving and
                // restoring of registers cost as much as a short string's scan).
                if self.peek()? == b'"' {
                    let value = self.string()?;
                    self.doc.nodes.push(Node::Str(value));
                } else {
                    self.value()?;
                }
                len += 1;
                self.skip_ws();
                match self.peek()? {
                    b',' => self.at += 1,
                    b'}' => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        let end = self.doc.nodes.len() as u32;
        self.doc.nodes[header] = Node::Object { len, end };
        if self.check_duplicates && self.duplicate.is_none() {
            if let Some(Node::Str(name)) = repeated.map(|at| self.doc.nodes[at]) {
                self.duplicate = Some(self.doc.text(name).to_string());
            } else if len > 16 {
                self.duplicate = first_repeated(&self.doc, header);
            }
        }
        self.depth -= 1;
        Some(())
    }

    fn array(&mut self) -> Option<()> {
        self.enter()?;
        self.at += 1;
        let header = self.doc.nodes.len();
        self.doc.nodes.push(Node::Array { len: 0, end: 0 });
        let mut len = 0u32;
        self.skip_ws();
        if self.peek()? == b']' {
            self.at += 1;
        } else {
            loop {
                self.skip_ws();
                self.value()?;
                len += 1;
                self.skip_ws();
                match self.peek()? {
                    b',' => self.at += 1,
                    b']' => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        let end = self.doc.nodes.len() as u32;
        self.doc.nodes[header] = Node::Array { len, end };
        self.depth -= 1;
        Some(())
    }

    /// The index of the next '"', '\\' or control character from ``i``.
    #[inline]
    fn scan(&self, mut i: usize) -> Option<usize> {
        let bytes = self.bytes;
        // 16 bytes a step where SSE2 is (every x86_64): a third of the SWAR word's
        // instructions per byte.
        #[cfg(target_arch = "x86_64")]
        while i + 16 <= bytes.len() {
            use std::arch::x86_64::*;
            // SAFETY: i + 16 <= len, an unaligned read of 16 bytes in bounds; SSE2 is part
            // of x86_64.
            let hits = unsafe {
                let block = _mm_loadu_si128(bytes.as_ptr().add(i).cast::<__m128i>());
                let quote = _mm_cmpeq_epi8(block, _mm_set1_epi8(b'"' as i8));
                let slash = _mm_cmpeq_epi8(block, _mm_set1_epi8(b'\\' as i8));
                // below 0x20: unchanged by an unsigned min with 0x1f
                let control = _mm_cmpeq_epi8(_mm_min_epu8(block, _mm_set1_epi8(0x1f)), block);
                _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), control)) as u32
            };
            if hits != 0 {
                return Some(i + hits.trailing_zeros() as usize);
            }
            i += 16;
        }
        while i + 8 <= bytes.len() {
            // SAFETY: i + 8 <= len, an unaligned read of 8 bytes in bounds.
            let word =
                u64::from_le(unsafe { bytes.as_ptr().add(i).cast::<u64>().read_unaligned() });
            let hits = special(word);
            if hits != 0 {
                return Some(i + (hits.trailing_zeros() / 8) as usize);
            }
            i += 8;
        }
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'"' || b == b'\\' || b < 0x20 {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// A string from its opening quote. Inlined, so the common string without escapes comes
    /// back in registers (a returned value stored and reloaded cost a store-forwarding stall).
    #[inline(always)]
    fn string(&mut self) -> Option<Str<'a>> {
        self.at += 1; // the opening quote
        let start = self.at;
        let i = self.scan(start)?;
        if self.bytes[i] == b'"' {
            self.at = i + 1;
            // Quotes are ASCII: both ends are character boundaries of the valid text.
            return Some(Str::borrowed(start, i - start));
        }
        self.escaped(start, i)
    }

    /// The rest of a string with escapes (or a control character: refused) from ``i``.
    #[cold]
    #[inline(never)]
    fn escaped(&mut self, start: usize, mut i: usize) -> Option<Str<'a>> {
        let mut out = String::with_capacity(i - start + 16);
        let mut run = start;
        loop {
            match self.bytes[i] {
                b'"' => {
                    out.push_str(&self.text[run..i]);
                    self.at = i + 1;
                    let index = self.doc.owned.len();
                    self.doc.owned.push(out);
                    return Some(Str::owned(index));
                }
                b'\\' => {
                    out.push_str(&self.text[run..i]);
                    i = self.escape(i, &mut out)?;
                    run = i;
                }
                _ => return None, // a control character
            }
            i = self.scan(i)?;
        }
    }

    /// The escape at ``i`` (a backslash) appended to ``out``; the index past it.
    fn escape(&self, i: usize, out: &mut String) -> Option<usize> {
        let bytes = self.bytes;
        let escape = *bytes.get(i + 1)?;
        let mut i = i + 2;
        match escape {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let high = hex4(bytes.get(i..i + 4)?)?;
                i += 4;
                let code = if (0xD800..0xDC00).contains(&high) {
                    if bytes.get(i..i + 2)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(bytes.get(i + 2..i + 6)?)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    i += 6;
                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..0xE000).contains(&high) {
                    return None;
                } else {
                    high
                };
                out.push(char::from_u32(code)?);
            }
            _ => return None,
        }
        Some(i)
    }

    fn number(&mut self) -> Option<()> {
        let bytes = self.bytes;
        let start = self.at;
        let mut i = start;
        let negative = bytes[i] == b'-';
        if negative {
            i += 1;
        }
        let digits_start = i;
        match bytes.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                while matches!(bytes.get(i), Some(b'0'..=b'9')) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let digits_end = i;
        let mut integer = true;
        if bytes.get(i) == Some(&b'.') {
            integer = false;
            i += 1;
            if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
                return None;
            }
            while matches!(bytes.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            integer = false;
            i += 1;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
                return None;
            }
            while matches!(bytes.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        // A digit straight after a leading zero ("01") is refused, as orjson does.
        if matches!(bytes.get(i), Some(b'0'..=b'9')) {
            return None;
        }
        self.at = i;
        if integer && digits_end - digits_start <= 18 {
            // Fits i64 without overflow: accumulate directly.
            let mut n: i64 = 0;
            for &d in &bytes[digits_start..digits_end] {
                n = n * 10 + (d - b'0') as i64;
            }
            self.doc
                .nodes
                .push(Node::Int(if negative { -n } else { n }));
            return Some(());
        }
        let s = &self.text[start..i];
        if integer {
            if let Ok(n) = s.parse::<i64>() {
                self.doc.nodes.push(Node::Int(n));
                return Some(());
            }
            if let Ok(n) = s.parse::<u64>() {
                self.doc.nodes.push(Node::UInt(n));
                return Some(());
            }
        }
        let f: f64 = s.parse().ok()?;
        if f.is_infinite() {
            return None; // orjson: "number is infinity when parsed as double"
        }
        self.doc.nodes.push(Node::Float(f));
        Some(())
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    let mut code = 0u32;
    for &d in digits {
        code = code * 16 + (d as char).to_digit(16)?;
    }
    Some(code)
}

/// A name's fingerprint: equal names have equal ones (a match is then compared in full). Read
/// in whole words, not copied byte by byte into a buffer read back as a word: that copy's
/// store-forwarding stall was the parser's most expensive instruction.
#[inline(always)]
fn fingerprint(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let n = bytes.len();
    let word = if n >= 8 {
        u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default())
            ^ u64::from_le_bytes(bytes[n - 8..].try_into().unwrap_or_default()).rotate_left(7)
    } else if n >= 4 {
        let head = u32::from_le_bytes(bytes[..4].try_into().unwrap_or_default());
        let tail = u32::from_le_bytes(bytes[n - 4..].try_into().unwrap_or_default());
        head as u64 | (tail as u64) << 32
    } else if n > 0 {
        bytes[0] as u64 | (bytes[n / 2] as u64) << 8 | (bytes[n - 1] as u64) << 16
    } else {
        0
    };
    word ^ (n as u64).rotate_right(8)
}

/// The first member name of the object at ``header`` that an earlier member already has.
fn first_repeated(doc: &Doc<'_>, header: usize) -> Option<String> {
    let object = V { doc, at: header };
    let len = match doc.nodes[header] {
        Node::Object { len, .. } => len as usize,
        _ => return None,
    };
    let mut seen = std::collections::HashSet::with_capacity(len);
    for (name, _) in object.members() {
        if !seen.insert(name) {
            return Some(name.to_string());
        }
    }
    None
}
