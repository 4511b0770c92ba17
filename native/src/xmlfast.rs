//! The key pass's fast XML reader (``Decoder.keys_xml``): one scan of the bytes into a lean
//! element arena (local name, namespace, first child, next sibling, the text before the first
//! child, and for ``prefix:name`` text the namespace its prefix has in scope), from which
//! fastframe.rs reads the framing and xmlkeys.rs writes the datastore contents into the JSON
//! tape as ``XmlConverter.members`` makes them.
//!
//! It reads a strict subset of XML 1.0 with namespaces, where every document it takes is well
//! formed and means what libxml2 reads: ASCII names, namespace declarations with plain URIs,
//! unprefixed other attributes, text with the predefined entities and character references.
//! Anything else (a comment, CDATA, a processing instruction, a DTD, a carriage return,
//! a prefixed attribute, an undeclared prefix, non-ASCII names, IOS-XE's
//! ``datastore-contents-xml`` holding XML text, a header field to refuse...) is not refused
//! here: the caller then reads the document with the full parser (roxmltree, xmlframe.rs),
//! whose answer or deferral stands. So this reader only has to be exact on what it takes.

use crate::tape::Str;
use crate::xmlparse::plain_uri;

pub const NONE: u32 = u32::MAX;
/// As xmlparse.rs: deeper, longer or larger documents go to the full parser.
const MAX_DEPTH: usize = 128;
const MAX_NAME: usize = 50_000;
const MAX_DOCUMENT: usize = 10_000_000;

/// The reader does not take this document: the full parser reads it.
pub struct Other;

pub(crate) type F<T> = Result<T, Other>;

/// A name's (prefix, local name) as input offsets.
type QName = (Option<(usize, usize)>, (usize, usize));

pub struct El<'a> {
    /// The local name: input bytes ``at..at + len``.
    pub local: (u32, u32),
    /// Index in [`Fast::namespaces`] (0: no namespace).
    pub ns: u32,
    pub first: u32,
    pub next: u32,
    /// ``element.text``: the text before the first child (no comment or PI is taken).
    pub text: Str<'a>,
    /// For text ``prefix:name`` (no space) whose prefix is declared in scope: that
    /// namespace's index (``XmlConverter.leaf``), else [`NONE`].
    pub qname: u32,
    /// Whether the text holds a ':' (only then can it be ``prefix:name``).
    pub colon: bool,
}

pub struct Fast<'a> {
    pub input: &'a str,
    pub els: Vec<El<'a>>,
    /// Text with references, decoded: [`Str::owned`]'s strings (the tape's ``owned``).
    pub owned: Vec<String>,
    pub namespaces: Vec<&'a str>,
}

impl<'a> Fast<'a> {
    #[inline]
    pub fn local(&self, el: u32) -> &'a str {
        let (at, len) = self.els[el as usize].local;
        let (at, end) = (at as usize, (at + len) as usize);
        debug_assert!(self.input.is_char_boundary(at) && self.input.is_char_boundary(end));
        // SAFETY: the reader takes only ASCII names, and makes ``local`` of a name's bytes in
        // this input (so character boundaries, within it).
        unsafe { self.input.get_unchecked(at..end) }
    }

    pub fn text(&self, el: u32) -> &str {
        let s = self.els[el as usize].text;
        crate::tape::str_text(self.input, &self.owned, s)
    }

    pub fn children(&self, el: u32) -> Children<'_, 'a> {
        Children {
            fast: self,
            at: self.els[el as usize].first,
        }
    }
}

pub struct Children<'f, 'a> {
    fast: &'f Fast<'a>,
    at: u32,
}

impl Iterator for Children<'_, '_> {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.at == NONE {
            return None;
        }
        let at = self.at;
        self.at = self.fast.els[at as usize].next;
        Some(at)
    }
}

struct Open {
    el: u32,
    name: (usize, usize),
    scope: usize,
    last: u32,
    /// The default namespace in scope inside it.
    default: u32,
}

struct P<'a> {
    s: &'a [u8],
    input: &'a str,
    at: usize,
    fast: Fast<'a>,
    /// In-scope declarations, innermost last: (prefix, "" for the default; namespace).
    scope: Vec<(&'a str, u32)>,
    open: Vec<Open>,
    /// The last attribute runs read (see [`P::attributes_again`]), and their prefixed
    /// declarations: (the prefix's input offsets, namespace).
    runs: Vec<Run>,
    declared: Vec<((usize, usize), u32)>,
    /// Unprefixed start tag names read before, by [`name_slot`]: (input offset, length,
    /// ``epoch``); an entry of another document's epoch is empty.
    names: Vec<(u32, u32, u32)>,
    epoch: u32,
    /// Whether the memos above are used: a small document repeats too little to pay them.
    memo: bool,
}

/// Documents from this size on use [`P`]'s memos.
const MEMO_FROM: usize = 2048;

const NAME_SLOTS: usize = 128;

/// Where [`P::tag_name`] keeps a name starting at ``s[at..]``: a hash of its first two bytes
/// and its fifth (``oper-status`` and ``operation`` apart), or None near the end.
#[inline]
fn name_slot(s: &[u8], at: usize) -> Option<usize> {
    let b = s.get(at..at + 5)?;
    let key = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[4]) << 16;
    Some((key.wrapping_mul(0x9E37_79B1) >> 25) as usize)
}

/// A start tag's attributes as read once: the input bytes from after its name through its
/// ``>`` or ``/>``, and what they did (every check passed).
struct Run {
    at: (usize, usize),
    /// ``xmlns``'s namespace, if it declared one.
    default: Option<u32>,
    /// Its prefixed declarations, in order: a range of [`P::declared`].
    declared: (usize, usize),
    empty: bool,
}

/// How many attribute runs a document keeps (each declared element names the few
/// namespaces of its module).
const RUNS: usize = 8;

/// Bytes text scanning stops at: '<', '&', ']', controls, 0xEF (U+FFFE/U+FFFF start so).
static STOP: [bool; 256] = {
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
fn stops(word: u64) -> u64 {
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
fn in_value(word: u64, quote: u8) -> u64 {
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
static NAME: [bool; 256] = {
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
fn word(s: &[u8], at: usize) -> u64 {
    let w = &s[at..at + 8];
    u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
}

/// The bytes of a word that are not NCName characters after the first (ASCII letters,
/// digits, '_', '-', '.'): exact per byte (no carry crosses a byte), so any flagged byte is
/// one, the lowest the first.
#[inline]
fn not_name(word: u64) -> u64 {
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
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

#[inline]
fn name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// An XML Char (XML 1.0 section 2.2) a character reference may name.
fn xml_char(c: u32) -> bool {
    matches!(c, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

impl<'a> P<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn skip_ws(&mut self) -> bool {
        let start = self.at;
        while self.peek().is_some_and(is_ws) {
            self.at += 1;
        }
        self.at > start
    }

    fn expect(&mut self, b: u8) -> F<()> {
        if self.peek() == Some(b) {
            self.at += 1;
            Ok(())
        } else {
            Err(Other)
        }
    }

    fn ncname(&mut self) -> F<(usize, usize)> {
        let start = self.at;
        if !self.peek().is_some_and(name_start) {
            return Err(Other);
        }
        self.at += 1;
        // Eight bytes at a time (a name ends within a word or two), the document's last
        // bytes one at a time.
        while self.at + 8 <= self.s.len() {
            let found = not_name(word(self.s, self.at));
            if found != 0 {
                self.at += (found.trailing_zeros() / 8) as usize;
                return Ok((start, self.at));
            }
            self.at += 8;
        }
        while self.at < self.s.len() && NAME[self.s[self.at] as usize] {
            self.at += 1;
        }
        Ok((start, self.at))
    }

    /// A QName: (prefix, local), each as input offsets.
    fn qname(&mut self) -> F<QName> {
        let start = self.at;
        let first = self.ncname()?;
        let result = if self.peek() == Some(b':') {
            self.at += 1;
            (Some(first), self.ncname()?)
        } else {
            (None, first)
        };
        if self.at - start > MAX_NAME {
            return Err(Other);
        }
        Ok(result)
    }

    fn slice(&self, (a, b): (usize, usize)) -> &'a str {
        &self.input[a..b]
    }

    /// The index of a declared namespace name (not empty) in [`Fast::namespaces`]; checked by
    /// [`plain_uri`] the first time the document declares it.
    fn intern(&mut self, uri: &'a str) -> F<u32> {
        match self
            .fast
            .namespaces
            .iter()
            .position(|n| same_bytes(n.as_bytes(), uri.as_bytes()))
        {
            Some(at) => Ok(at as u32),
            None if checked_uri(uri) => {
                self.fast.namespaces.push(uri);
                Ok((self.fast.namespaces.len() - 1) as u32)
            }
            None => Err(Other),
        }
    }

    fn lookup(&self, prefix: &str) -> Option<u32> {
        self.scope
            .iter()
            .rev()
            .find(|(p, _)| same_bytes(p.as_bytes(), prefix.as_bytes()))
            .map(|(_, ns)| *ns)
    }

    /// Text up to the next '<' (which must come): checked as XML content, decoded when it
    /// holds references; stored as a tape string when ``keep``.
    #[inline(always)]
    fn text(&mut self, keep: bool) -> F<(Str<'a>, bool)> {
        if self.s.get(self.at) == Some(&b'<') {
            return Ok((Str::borrowed(self.at, 0), false)); // a container's, or no tail
        }
        self.text_run(keep)
    }

    /// [`P::text`] of text that is not empty, out of line (most text is empty: a
    /// container's, a tail without indentation).
    #[inline(never)]
    fn text_run(&mut self, keep: bool) -> F<(Str<'a>, bool)> {
        let start = self.at;
        let mut references = false;
        let mut colon = false;
        loop {
            while self.at + 8 <= self.s.len() {
                let chunk = &self.s[self.at..self.at + 8];
                let word = u64::from_le_bytes([
                    chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
                ]);
                let found = stops(word);
                if found != 0 {
                    self.at += (found.trailing_zeros() / 8) as usize;
                    break;
                }
                self.at += 8;
            }
            while self.at < self.s.len() && !STOP[self.s[self.at] as usize] {
                self.at += 1;
            }
            let Some(b) = self.peek() else {
                return Err(Other); // unclosed element
            };
            match b {
                b'<' => break,
                b'&' => references = true,
                b':' => colon = true,
                b'\t' | b'\n' => {}
                0..=0x1f => return Err(Other), // controls; CR: line ends normalized
                b']' if self.s[self.at..].starts_with(b"]]>") => return Err(Other),
                0xEF if matches!(
                    self.s.get(self.at + 1..self.at + 3),
                    Some([0xBF, 0xBE | 0xBF])
                ) =>
                {
                    return Err(Other); // U+FFFE, U+FFFF
                }
                _ => {}
            }
            self.at += 1;
        }
        let end = self.at;
        if !references {
            return Ok((Str::borrowed(start, end - start), colon));
        }
        let decoded = decode(&self.input[start..end])?;
        if !keep {
            return Ok((Str::borrowed(start, 0), colon));
        }
        let colon = decoded.contains(':');
        self.fast.owned.push(decoded);
        Ok((Str::owned(self.fast.owned.len() - 1), colon))
    }

    /// An attribute value: no '<', no reference, no control but tab and line feed.
    fn value(&mut self) -> F<(usize, usize)> {
        let quote = self.peek().ok_or(Other)?;
        if quote != b'"' && quote != b'\'' {
            return Err(Other);
        }
        self.at += 1;
        let start = self.at;
        loop {
            // Eight bytes at a time to the first that needs a look (namespace names are long).
            while self.at + 8 <= self.s.len() {
                let chunk = &self.s[self.at..self.at + 8];
                let word = u64::from_le_bytes([
                    chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
                ]);
                let found = in_value(word, quote);
                if found != 0 {
                    self.at += (found.trailing_zeros() / 8) as usize;
                    break;
                }
                self.at += 8;
            }
            let b = self.peek().ok_or(Other)?;
            if b == quote {
                break;
            }
            if b == b'<' || b == b'&' || (b < 0x20 && b != b'\t' && b != b'\n') {
                return Err(Other);
            }
            if b == 0xEF
                && matches!(
                    self.s.get(self.at + 1..self.at + 3),
                    Some([0xBF, 0xBE | 0xBF])
                )
            {
                return Err(Other);
            }
            self.at += 1;
        }
        let end = self.at;
        self.at += 1;
        Ok((start, end))
    }

    /// ``<?xml ...?>`` as libxml2 takes it: version 1.0, encoding UTF-8 (any case),
    /// standalone yes or no, in that order.
    fn declaration(&mut self) -> F<()> {
        self.at += "<?xml".len();
        let mut seen_version = false;
        let mut order = 0;
        loop {
            let ws = self.skip_ws();
            if self.s[self.at..].starts_with(b"?>") {
                self.at += 2;
                return if seen_version { Ok(()) } else { Err(Other) };
            }
            if !ws {
                return Err(Other);
            }
            let name = self.ncname()?;
            self.skip_ws();
            self.expect(b'=')?;
            self.skip_ws();
            let value = self.value()?;
            let (name, value) = (self.slice(name), self.slice(value));
            let rank = match name {
                "version" if value == "1.0" => 1,
                "encoding" if value.eq_ignore_ascii_case("utf-8") => 2,
                "standalone" if value == "yes" || value == "no" => 3,
                _ => return Err(Other),
            };
            if rank <= order || (rank > 1 && !seen_version) {
                return Err(Other);
            }
            seen_version |= rank == 1;
            order = rank;
        }
    }

    /// [`P::attributes`], or, where the input repeats byte for byte the attributes of a tag
    /// read before (devices declare a module's namespaces on every entry of a list, every
    /// edit's value), what those did: the same bytes pass the same checks and declare the
    /// same namespaces (a document's namespace indexes do not change).
    fn attributes_again(&mut self, default: &mut u32) -> F<bool> {
        if self.memo {
            let rest = &self.s[self.at..];
            if let Some(run) = self.runs.iter().rev().find(|run| {
                let bytes = &self.s[run.at.0..run.at.1];
                rest.starts_with(bytes)
            }) {
                self.at += run.at.1 - run.at.0;
                if let Some(ns) = run.default {
                    *default = ns;
                }
                let input = self.input;
                for &((from, to), ns) in &self.declared[run.declared.0..run.declared.1] {
                    self.scope.push((&input[from..to], ns));
                }
                return Ok(run.empty);
            }
        }
        let (start, mark) = (self.at, self.scope.len());
        let (empty, declared) = self.attributes()?;
        if let Some(ns) = declared {
            *default = ns;
        }
        if !self.memo {
            return Ok(empty);
        }
        if self.runs.len() == RUNS {
            self.runs.clear();
            self.declared.clear();
        }
        let first = self.declared.len();
        let base = self.input.as_ptr() as usize;
        for &(prefix, ns) in &self.scope[mark..] {
            // the prefix's offsets in the input (``scope`` holds slices of it)
            let from = prefix.as_ptr() as usize - base;
            self.declared.push(((from, from + prefix.len()), ns));
        }
        self.runs.push(Run {
            at: (start, self.at),
            default: declared,
            declared: (first, self.declared.len()),
            empty,
        });
        Ok(empty)
    }

    /// The rest of a start tag after its name: its attributes (namespace declarations pushed
    /// on the scope), then ``>`` or ``/>``; whether it was ``/>``, and the namespace ``xmlns``
    /// declared.
    #[inline(never)]
    fn attributes(&mut self) -> F<(bool, Option<u32>)> {
        let mut default = None;
        // The names of its attributes (a tag with more goes to the full parser).
        let mut attributes = [(0usize, 0usize); 8];
        let mut count = 0;
        let empty = loop {
            let ws = self.skip_ws();
            match self.peek() {
                Some(b'>') => {
                    self.at += 1;
                    break false;
                }
                Some(b'/') => {
                    self.at += 1;
                    self.expect(b'>')?;
                    break true;
                }
                _ if !ws => return Err(Other),
                _ => {}
            }
            let name_start = self.at;
            let (attr_prefix, attr_local) = self.qname()?;
            let whole = (name_start, self.at);
            let name = &self.s[whole.0..whole.1];
            if count == attributes.len()
                || attributes[..count]
                    .iter()
                    .any(|a| same_bytes(&self.s[a.0..a.1], name))
            {
                return Err(Other);
            }
            attributes[count] = whole;
            count += 1;
            self.skip_ws();
            self.expect(b'=')?;
            self.skip_ws();
            let value = self.value()?;
            let uri = self.slice(value);
            match (attr_prefix.map(|p| self.slice(p)), self.slice(attr_local)) {
                (None, "xmlns") => {
                    if uri.is_empty() {
                        return Err(Other);
                    }
                    default = Some(self.intern(uri)?);
                }
                (Some("xmlns"), declared) => {
                    if declared == "xml" || declared == "xmlns" || uri.is_empty() {
                        return Err(Other);
                    }
                    let ns = self.intern(uri)?;
                    self.scope.push((declared, ns));
                }
                (Some(_), _) => return Err(Other), // xml:lang, a prefixed attribute
                (None, _) => {}                    // an attribute the converter never reads
            }
        };
        Ok((empty, default))
    }

    /// A start tag's [`P::qname`]; where the input repeats an unprefixed name read before,
    /// followed by what ends a tag's name ('>', '/', white space), that name without a scan:
    /// its bytes passed the scan, which would stop at the same byte.
    #[inline]
    fn tag_name(&mut self) -> F<QName> {
        if !self.memo {
            return self.qname();
        }
        let start = self.at;
        let slot = name_slot(self.s, start);
        if let Some(slot) = slot {
            let (at, len, epoch) = self.names[slot];
            let (at, end) = (at as usize, start + len as usize);
            if epoch == self.epoch
                && end < self.s.len()
                && matches!(self.s[end], b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r')
                && same_bytes(&self.s[start..end], &self.s[at..at + len as usize])
            {
                self.at = end;
                return Ok((None, (start, end)));
            }
        }
        let name = self.qname()?;
        if let (Some(slot), None) = (slot, name.0) {
            self.names[slot] = (start as u32, (self.at - start) as u32, self.epoch);
        }
        Ok(name)
    }

    fn start_tag(&mut self) -> F<()> {
        self.at += 1; // '<'
        let (prefix, local) = self.tag_name()?;
        let name_end = self.at;
        let mark = self.scope.len();
        let mut default = self.open.last().map_or(0, |o| o.default);
        let empty = if self.peek() == Some(b'>') {
            self.at += 1; // most tags: no attribute, no space
            false
        } else {
            self.attributes_again(&mut default)?
        };
        let ns = match prefix.map(|p| self.slice(p)) {
            Some("xml" | "xmlns") => return Err(Other),
            Some(p) => self.lookup(p).ok_or(Other)?,
            None => default,
        };
        if self.open.len() >= MAX_DEPTH {
            return Err(Other);
        }
        let index = self.fast.els.len() as u32;
        match self.open.last_mut() {
            Some(parent) => {
                if parent.last == NONE {
                    self.fast.els[parent.el as usize].first = index;
                } else {
                    self.fast.els[parent.last as usize].next = index;
                }
                parent.last = index;
            }
            None if !self.fast.els.is_empty() => return Err(Other), // a second root
            None => {}
        }
        self.fast.els.push(El {
            local: (local.0 as u32, (local.1 - local.0) as u32),
            ns,
            first: NONE,
            next: NONE,
            text: Str::borrowed(0, 0),
            qname: NONE,
            colon: false,
        });
        if empty {
            self.scope.truncate(mark);
            return Ok(());
        }
        let start = prefix.map_or(local.0, |p| p.0);
        self.open.push(Open {
            el: index,
            name: (start, name_end),
            scope: mark,
            last: NONE,
            default,
        });
        let (text, colon) = self.text(true)?;
        let el = &mut self.fast.els[index as usize];
        el.text = text;
        el.colon = colon;
        Ok(())
    }

    fn end_tag(&mut self) -> F<()> {
        self.at += 2; // '</'
        let open = self.open.pop().ok_or(Other)?;
        // The open tag's name (checked there), then what may end a name: the same name.
        let name = &self.s[open.name.0..open.name.1];
        let end = self.at + name.len();
        if end > self.s.len() || !same_bytes(&self.s[self.at..end], name) {
            return Err(Other);
        }
        self.at = end;
        self.skip_ws();
        self.expect(b'>')?;
        let el = open.el as usize;
        if self.fast.els[el].first == NONE && self.fast.els[el].colon {
            // ``XmlConverter.leaf``: resolved with the element's own declarations in scope.
            let text = crate::tape::str_text(self.input, &self.fast.owned, self.fast.els[el].text);
            // The prefix looked up before the text is searched for a space: a long text with a
            // ':' (a yang-patch target, a URL) rarely starts with a declared prefix.
            if let Some(colon) = memchr::memchr(b':', text.as_bytes()) {
                let prefix = &text[..colon];
                if !prefix.is_empty() && prefix != "xml" {
                    if let Some(ns) = self.lookup(prefix) {
                        if memchr::memchr(b' ', text.as_bytes()).is_none() {
                            self.fast.els[el].qname = ns;
                        }
                    }
                }
            }
        }
        self.scope.truncate(open.scope);
        Ok(())
    }
}

/// Text with references -> its characters.
fn decode(text: &str) -> F<String> {
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

thread_local! {
    /// Namespace names [`plain_uri`] took (a producer declares the same few in every
    /// notification): compared, not checked again.
    static PLAIN: std::cell::RefCell<Vec<Box<str>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`plain_uri`], remembered for the first 32 names it took.
fn checked_uri(uri: &str) -> bool {
    PLAIN.with(|plain| {
        let mut plain = plain.borrow_mut();
        if plain
            .iter()
            .any(|p| same_bytes(p.as_bytes(), uri.as_bytes()))
        {
            return true;
        }
        if !plain_uri(uri) {
            return false;
        }
        if plain.len() < 32 {
            plain.push(uri.into());
        }
        true
    })
}

thread_local! {
    /// The arena of the last document, kept for the next (as the tape's: a large allocation
    /// per notification costs page faults each time).
    static SPARE: std::cell::RefCell<Vec<El<'static>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Arenas over this many elements are not kept (8 MB).
const SPARE_MAX: usize = 1 << 18;

fn spare_arena<'a>(capacity: usize) -> Vec<El<'a>> {
    let mut els = SPARE.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
    els.reserve(capacity);
    // SAFETY: the vector is empty; El<'static> and El<'a> differ in lifetime only.
    unsafe { std::mem::transmute::<Vec<El<'static>>, Vec<El<'a>>>(els) }
}

impl Drop for Fast<'_> {
    fn drop(&mut self) {
        let mut els = std::mem::take(&mut self.els);
        if els.capacity() <= SPARE_MAX {
            els.clear();
            // SAFETY: the vector is empty (no reference to the input is kept).
            let els = unsafe { std::mem::transmute::<Vec<El<'_>>, Vec<El<'static>>>(els) };
            SPARE.with(|spare| *spare.borrow_mut() = els);
        }
        let namespaces = keep(std::mem::take(&mut self.namespaces));
        BUFFERS.with(|b| b.borrow_mut().namespaces = namespaces);
    }
}

/// Per-document buffers kept for the next document (empty between documents): their
/// allocation cost as much as a small notification's scan.
#[derive(Default)]
struct Buffers {
    namespaces: Vec<&'static str>,
    scope: Vec<(&'static str, u32)>,
    open: Vec<Open>,
    runs: Vec<Run>,
    declared: Vec<((usize, usize), u32)>,
    names: Vec<(u32, u32, u32)>,
    epoch: u32,
}

thread_local! {
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::default());
}

/// An empty vector of ``&'static str``s as one of ``&'a str``s.
fn relent<'a, T>(mut v: Vec<&'static T>) -> Vec<&'a T>
where
    T: ?Sized,
{
    v.clear();
    // SAFETY: the vector is empty; the element types differ in lifetime only.
    unsafe { std::mem::transmute::<Vec<&'static T>, Vec<&'a T>>(v) }
}

/// The other way: an emptied vector kept past its document.
fn keep<T: ?Sized>(mut v: Vec<&T>) -> Vec<&'static T> {
    v.clear();
    // SAFETY: the vector is empty: no reference to the document is kept.
    unsafe { std::mem::transmute::<Vec<&T>, Vec<&'static T>>(v) }
}

fn keep_scope(mut v: Vec<(&str, u32)>) -> Vec<(&'static str, u32)> {
    v.clear();
    // SAFETY: as keep.
    unsafe { std::mem::transmute::<Vec<(&str, u32)>, Vec<(&'static str, u32)>>(v) }
}

fn lend_scope<'a>(mut v: Vec<(&'static str, u32)>) -> Vec<(&'a str, u32)> {
    v.clear();
    // SAFETY: as relent.
    unsafe { std::mem::transmute::<Vec<(&'static str, u32)>, Vec<(&'a str, u32)>>(v) }
}

/// Read ``input`` (UTF-8 text starting with '<') into the arena; [`Other`]: the full parser.
pub fn parse(input: &str) -> F<Fast<'_>> {
    if input.len() > MAX_DOCUMENT || input.len() >= crate::tape::OWNED as usize {
        return Err(Other);
    }
    let buffers = BUFFERS.with(|b| std::mem::take(&mut *b.borrow_mut()));
    let mut namespaces = relent(buffers.namespaces);
    namespaces.push("");
    let mut open = buffers.open;
    open.clear();
    let (mut runs, mut declared, mut names) = (buffers.runs, buffers.declared, buffers.names);
    runs.clear();
    declared.clear();
    // A new epoch empties the name table (cleared when the count wraps).
    let mut epoch = buffers.epoch.wrapping_add(1);
    if epoch == 0 || names.len() != NAME_SLOTS {
        names.clear();
        names.resize(NAME_SLOTS, (0, 0, 0));
        epoch = 1;
    }
    let mut p = P {
        s: input.as_bytes(),
        input,
        at: 0,
        fast: Fast {
            input,
            els: spare_arena(input.len() / 24 + 4),
            owned: Vec::new(),
            namespaces,
        },
        scope: lend_scope(buffers.scope),
        open,
        runs,
        declared,
        names,
        epoch,
        memo: input.len() >= MEMO_FROM,
    };
    let read = p.document();
    let scope = keep_scope(std::mem::take(&mut p.scope));
    let mut open = std::mem::take(&mut p.open);
    open.clear();
    let (runs, declared, names) = (
        std::mem::take(&mut p.runs),
        std::mem::take(&mut p.declared),
        std::mem::take(&mut p.names),
    );
    BUFFERS.with(|b| {
        let mut b = b.borrow_mut();
        b.scope = scope;
        b.open = open;
        b.runs = runs;
        b.declared = declared;
        b.names = names;
        b.epoch = epoch;
    });
    read.map(|()| p.fast)
}

impl<'a> P<'a> {
    fn document(&mut self) -> F<()> {
        let p = self;
        let input = p.input;
        if input.starts_with("<?xml") {
            p.declaration()?;
            p.skip_ws();
        }
        if p.peek() != Some(b'<') || !p.s.get(p.at + 1).copied().is_some_and(name_start) {
            return Err(Other);
        }
        p.start_tag()?;
        while !p.open.is_empty() {
            // at a '<' (text() stops only there)
            match p.s.get(p.at + 1) {
                Some(b'/') => p.end_tag()?,
                Some(b) if name_start(*b) => p.start_tag()?,
                _ => return Err(Other), // comment, CDATA, PI, or no markup
            }
            if !p.open.is_empty() {
                p.text(false)?; // the tail: checked, not kept
            }
        }
        p.skip_ws();
        if p.at != p.s.len() {
            return Err(Other); // anything after the root element
        }
        Ok(())
    }
}
