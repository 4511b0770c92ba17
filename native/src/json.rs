//! A strict JSON (RFC 8259) parser into a borrowed tree, with the answers orjson gives: the
//! same numbers (integers in i64/u64, anything wider a float), the same strings, the same
//! refusals. Anything it refuses is handed back to the Python reference decoder, which words
//! the error (orjson's message), so this parser only has to be no more lenient than orjson.
//!
//! Duplicate members are found here as the reference finds them: the first object to *close*
//! with a member twice names the first member seen twice (stdlib json's object_pairs_hook
//! order), and only once the whole document parsed (a syntax error anywhere wins).

use std::borrow::Cow;

/// Deeper documents go to the reference decoder (orjson's limit is 1024, orjson.dumps's 254,
/// stdlib json's the recursion limit; real YANG data is a few dozen levels deep).
pub const MAX_DEPTH: usize = 128;

#[derive(Debug)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

pub type Member<'a> = (Cow<'a, str>, Value<'a>);

impl<'a> Value<'a> {
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// Python's truth value of the decoded value.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::UInt(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Object(m) => !m.is_empty(),
        }
    }

    /// The name of the Python type the reference decoder would see.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::UInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
    }
}

/// ``dict.get`` over members: the last of a name wins, as in a dict built from them (only
/// text-embedded JSON may repeat a name; the document itself is refused when it does).
pub fn get<'v, 'a>(members: &'v [Member<'a>], name: &str) -> Option<&'v Value<'a>> {
    members.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
}

#[derive(Debug)]
pub enum JsonError {
    /// Malformed, unsupported or too deep: the reference decoder words it.
    Refused,
    /// A member twice in one object (its name).
    Duplicate(String),
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    depth: usize,
    check_duplicates: bool,
    duplicate: Option<String>,
}

/// Parse a whole document. ``check_duplicates`` false parses as orjson.loads alone does
/// (the last value of a repeated name wins, where a dict is built from the members).
pub fn parse(text: &[u8], check_duplicates: bool) -> Result<Value<'_>, JsonError> {
    let mut p = Parser { text, at: 0, depth: 0, check_duplicates, duplicate: None };
    p.skip_ws();
    let value = p.value().ok_or(JsonError::Refused)?;
    p.skip_ws();
    if p.at != text.len() {
        return Err(JsonError::Refused);
    }
    match p.duplicate {
        Some(name) => Err(JsonError::Duplicate(name)),
        None => Ok(value),
    }
}

impl<'a> Parser<'a> {
    #[inline]
    fn skip_ws(&mut self) {
        while let Some(&b) = self.text.get(self.at) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn literal(&mut self, word: &[u8], value: Value<'a>) -> Option<Value<'a>> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Some(value)
        } else {
            None
        }
    }

    fn value(&mut self) -> Option<Value<'a>> {
        match self.peek()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string().map(Value::Str),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            None
        } else {
            Some(())
        }
    }

    fn object(&mut self) -> Option<Value<'a>> {
        self.enter()?;
        self.at += 1;
        let mut members: Vec<Member<'a>> = Vec::new();
        self.skip_ws();
        if self.peek()? == b'}' {
            self.at += 1;
            self.depth -= 1;
            return Some(Value::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek()? != b'"' {
                return None;
            }
            let name = self.string()?;
            self.skip_ws();
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            self.skip_ws();
            let value = self.value()?;
            members.push((name, value));
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
        if self.check_duplicates && self.duplicate.is_none() {
            self.duplicate = first_repeated(&members);
        }
        self.depth -= 1;
        Some(Value::Object(members))
    }

    fn array(&mut self) -> Option<Value<'a>> {
        self.enter()?;
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek()? == b']' {
            self.at += 1;
            self.depth -= 1;
            return Some(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
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
        self.depth -= 1;
        Some(Value::Array(items))
    }

    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.at += 1; // the opening quote
        let start = self.at;
        let text = self.text;
        // The common case: no escape, borrowed from the input.
        let mut i = start;
        while i < text.len() {
            let b = text[i];
            if b == b'"' {
                let s = std::str::from_utf8(&text[start..i]).ok()?;
                self.at = i + 1;
                return Some(Cow::Borrowed(s));
            }
            if b == b'\\' {
                break;
            }
            if b < 0x20 {
                return None;
            }
            i += 1;
        }
        if i >= text.len() {
            return None;
        }
        let mut out = String::with_capacity(i - start + 16);
        out.push_str(std::str::from_utf8(&text[start..i]).ok()?);
        let mut run = i;
        loop {
            let b = *text.get(i)?;
            match b {
                b'"' => {
                    out.push_str(std::str::from_utf8(&text[run..i]).ok()?);
                    self.at = i + 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    out.push_str(std::str::from_utf8(&text[run..i]).ok()?);
                    let escape = *text.get(i + 1)?;
                    i += 2;
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
                            let high = hex4(text.get(i..i + 4)?)?;
                            i += 4;
                            let code = if (0xD800..0xDC00).contains(&high) {
                                if text.get(i..i + 2)? != b"\\u" {
                                    return None;
                                }
                                let low = hex4(text.get(i + 2..i + 6)?)?;
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
                    run = i;
                }
                0..=0x1f => return None,
                _ => i += 1,
            }
        }
    }

    fn number(&mut self) -> Option<Value<'a>> {
        let text = self.text;
        let start = self.at;
        let mut i = start;
        if text[i] == b'-' {
            i += 1;
        }
        match text.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                while matches!(text.get(i), Some(b'0'..=b'9')) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let mut integer = true;
        if text.get(i) == Some(&b'.') {
            integer = false;
            i += 1;
            if !matches!(text.get(i), Some(b'0'..=b'9')) {
                return None;
            }
            while matches!(text.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        if matches!(text.get(i), Some(b'e' | b'E')) {
            integer = false;
            i += 1;
            if matches!(text.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !matches!(text.get(i), Some(b'0'..=b'9')) {
                return None;
            }
            while matches!(text.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        // A digit straight after a leading zero ("01") is refused, as orjson does.
        if matches!(text.get(i), Some(b'0'..=b'9')) {
            return None;
        }
        self.at = i;
        // Only ASCII digits, sign, point and exponent were accepted above.
        let s = unsafe { std::str::from_utf8_unchecked(&text[start..i]) };
        if integer {
            if let Ok(n) = s.parse::<i64>() {
                return Some(Value::Int(n));
            }
            if let Ok(n) = s.parse::<u64>() {
                return Some(Value::UInt(n));
            }
        }
        let f: f64 = s.parse().ok()?;
        if f.is_infinite() {
            return None; // orjson: "number is infinity when parsed as double"
        }
        Some(Value::Float(f))
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    let mut code = 0u32;
    for &d in digits {
        code = code * 16 + (d as char).to_digit(16)?;
    }
    Some(code)
}

/// The first member name of ``members`` that an earlier member already has.
fn first_repeated(members: &[Member<'_>]) -> Option<String> {
    if members.len() < 2 {
        return None;
    }
    if members.len() <= 16 {
        for (i, (name, _)) in members.iter().enumerate().skip(1) {
            if members[..i].iter().any(|(earlier, _)| earlier == name) {
                return Some(name.to_string());
            }
        }
        return None;
    }
    let mut seen = std::collections::HashSet::with_capacity(members.len());
    for (name, _) in members {
        if !seen.insert(name.as_ref()) {
            return Some(name.to_string());
        }
    }
    None
}
