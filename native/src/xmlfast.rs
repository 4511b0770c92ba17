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

#[path = "xmlattrs.rs"]
mod attrs;
#[path = "xmlchars.rs"]
mod chars;
#[path = "xmlspare.rs"]
mod spare;
#[cfg(test)]
#[path = "xmlscantest.rs"]
mod tests;

use attrs::{Known, Run, MEMO_FROM, NAME_SLOTS};
use chars::{decode, is_ws, name_start, not_name, stops, word, Text, NAME, STOP};
pub use chars::{same_bytes, utf8};
use spare::{keep_scope, lend_scope, relent, spare_arena, BUFFERS};

pub const NONE: u32 = u32::MAX;
/// As xmlparse.rs: deeper, longer or larger documents go to the full parser.
const MAX_DEPTH: usize = 128;
const MAX_NAME: usize = 50_000;
const MAX_DOCUMENT: usize = 10_000_000;

/// The reader does not take this document: the full parser reads it.
pub struct Other;

pub(crate) type F<T> = Result<T, Other>;

/// A namespace declaration [`P::attributes`] read: the prefix's input offsets (None:
/// ``xmlns``), the namespace name's.
type ReadDecl = (Option<(usize, usize)>, (usize, usize));

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
    /// The innermost prefixed declaration in scope at the element (its own too) plus one
    /// (an index in [`Fast::decls`] + 1, or 0: none; see [`El::scope`]), and in the high bit
    /// whether the text holds a ':' ([`El::colon`]): one word, so an element is 32 bytes
    /// (a cache line holds two; the walk reads the arena again after the scan).
    scope_colon: u32,
}

impl El<'_> {
    /// The innermost prefixed declaration in scope at the element: an index in
    /// [`Fast::decls`], or [`NONE`] (see [`Fast::qname`]).
    #[inline]
    pub fn scope(&self) -> u32 {
        (self.scope_colon & !COLON).wrapping_sub(1)
    }

    /// Whether the text holds a ':' (only then can it be ``prefix:name``: [`Fast::qname`]).
    #[inline]
    pub fn colon(&self) -> bool {
        self.scope_colon & COLON != 0
    }
}

/// [`El::colon`]'s bit.
const COLON: u32 = 1 << 31;

const _: () = assert!(std::mem::size_of::<El<'static>>() == 32);

/// A prefixed namespace declaration, and the one in scope where it was made (the scope's
/// declarations as a chain, innermost first).
#[derive(Clone, Copy)]
pub struct Decl {
    /// The prefix: input bytes ``at..at + len``.
    prefix: (u32, u32),
    ns: u32,
    up: u32,
}

pub struct Fast<'a> {
    pub input: &'a str,
    pub els: Vec<El<'a>>,
    /// Text with references, decoded: [`Str::owned`]'s strings (the tape's ``owned``).
    pub owned: Vec<String>,
    pub namespaces: Vec<&'a str>,
    /// Every prefixed declaration, in document order (see [`Fast::qname`]).
    pub decls: Vec<Decl>,
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

    #[inline]
    pub fn text(&self, el: u32) -> &str {
        let s = self.els[el as usize].text;
        crate::tape::str_text(self.input, &self.owned, s)
    }

    /// ``XmlConverter.leaf``'s reading of a leaf's text as ``prefix:name``: the index of the
    /// namespace its prefix has in scope at the element (the innermost declaration over it,
    /// the element's own too), when the text starts as a name and holds no space; else
    /// [`NONE`]. Asked of the leaves a walk reads only, not of every leaf as it is read.
    pub fn qname(&self, el: u32) -> u32 {
        let element = &self.els[el as usize];
        if !element.colon() || element.first != NONE {
            return NONE;
        }
        let text = self.text(el).as_bytes();
        // A prefix in scope is a name: text that does not start as one (a path) has none.
        if !text.first().copied().is_some_and(name_start) {
            return NONE;
        }
        let Some(colon) = text.iter().position(|&b| b == b':') else {
            return NONE;
        };
        let prefix = &text[..colon];
        if prefix == b"xml" {
            return NONE;
        }
        let input = self.input.as_bytes();
        let mut at = element.scope();
        while at != NONE {
            let d = &self.decls[at as usize];
            let (from, len) = (d.prefix.0 as usize, d.prefix.1 as usize);
            if same_bytes(&input[from..from + len], prefix) {
                return if chars::has_space(text) { NONE } else { d.ns };
            }
            at = d.up;
        }
        NONE
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

/// An element's ``first`` or ``next`` as an index of the arena's 32-bit words ([`slot`]).
const WORDS: usize = std::mem::size_of::<El<'static>>() / 4;
const FIRST: usize = std::mem::offset_of!(El<'static>, first) / 4;
const NEXT: usize = std::mem::offset_of!(El<'static>, next) / 4;

/// Element ``el``'s field at word ``field`` ([`FIRST`] or [`NEXT`]) as an index of the
/// arena's 32-bit words.
#[inline(always)]
fn slot(el: u32, field: usize) -> usize {
    el as usize * WORDS + field
}

/// The arena's word ``slot`` (an element's ``first`` or ``next``, by [`slot`]) set to
/// ``index``.
#[inline(always)]
fn link(els: &mut [El<'_>], slot: usize, index: u32) {
    assert!(slot < els.len() * WORDS);
    // SAFETY: within the slice (asserted); an El is 32 bytes whose ``first`` and ``next``
    // are u32 fields at the words FIRST and NEXT (offset_of), the only words written so.
    unsafe { *(els.as_mut_ptr() as *mut u32).add(slot) = index }
}

const _: () = assert!(FIRST != NEXT && std::mem::align_of::<El<'static>>() >= 4);

struct Open {
    name: (usize, usize),
    scope: usize,
    /// Where its next child's index goes: its own ``first``, then its last child's
    /// ``next`` (a [`slot`]).
    link: usize,
    /// The default namespace in scope inside it.
    default: u32,
    /// Its own prefixed declarations: [`Fast::decls`] from this index, how many.
    decls: (u32, u32),
}

struct P<'a> {
    s: &'a [u8],
    input: &'a str,
    at: usize,
    fast: Fast<'a>,
    /// In-scope declarations, innermost last: (prefix, "" for the default; namespace).
    scope: Vec<(&'a str, u32)>,
    open: Vec<Open>,
    /// The default namespace in scope: the innermost open element's (kept here, not read
    /// from the open stack for every element).
    default: u32,
    /// The innermost prefixed declaration in scope ([`El::scope`]).
    innermost: u32,
    /// The last attribute runs read (see [`P::attributes_again`]), and their prefixed
    /// declarations: (prefix, namespace), as [`P::scope`]'s.
    runs: Vec<Run>,
    declared: Vec<(&'a str, u32)>,
    /// Unprefixed start tag names read before, by [`attrs::name_slot`]: (input offset, length,
    /// ``epoch``); an entry of another document's epoch is empty.
    names: Vec<(u32, u32, u32)>,
    epoch: u32,
    /// Whether the memos above are used: a small document repeats too little to pay them.
    memo: bool,
    /// Attribute runs of earlier documents ([`attrs::Known`]; kept in any document), and the
    /// namespace declarations of the last run [`P::attributes`] read: (the prefix's input
    /// offsets, None for ``xmlns``; the namespace name's).
    known: Vec<Known>,
    read: Vec<ReadDecl>,
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
        // Sixteen bytes at a time (most names end within them), then eight, the document's
        // last bytes one at a time.
        if let Some(end) = chars::name16(self.s, self.at) {
            self.at = end;
            return Ok((start, end));
        }
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

    /// Text up to the next '<' (which must come): checked as XML content, decoded when it
    /// holds references; stored as a tape string when ``keep``.
    #[inline(always)]
    fn text(&mut self, keep: bool) -> F<(Str<'a>, bool)> {
        if self.s.get(self.at) == Some(&b'<') {
            return Ok((Str::borrowed(self.at, 0), false)); // a container's, or no tail
        }
        // Most leaves' text: plain characters to the '<', read in line.
        if let Some((end, colon)) = chars::plain16(self.s, self.at) {
            let start = self.at;
            self.at = end;
            return Ok((Str::borrowed(start, end - start), colon));
        }
        self.text_run(keep)
    }

    /// Plain text from here to ``end`` (a '<'), found by the start tag's window.
    #[inline(always)]
    fn text_to(&mut self, end: usize, colon: bool) -> (Str<'a>, bool) {
        let from = std::mem::replace(&mut self.at, end);
        (Str::borrowed(from, end - from), colon)
    }

    /// [`P::text`] of text that is not empty, out of line (most text is empty: a
    /// container's, a tail without indentation).
    #[inline(never)]
    fn text_run(&mut self, keep: bool) -> F<(Str<'a>, bool)> {
        let start = self.at;
        let mut references = false;
        let mut colon = false;
        loop {
            // Sixteen bytes at a time to a byte [`STOP`] holds other than ':', tab and line
            // feed (noted, or taken, here), then eight, then one at a time near the end.
            let (at, colons) = chars::scan16(self.s, self.at);
            self.at = at;
            colon |= colons;
            // (past scan16's stop: straight to it)
            let wide = chars::SCAN16 && self.at + 16 <= self.s.len();
            while !wide && self.at + 8 <= self.s.len() {
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
            while !wide && self.at < self.s.len() && !STOP[self.s[self.at] as usize] {
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

    #[inline(always)]
    fn start_tag(&mut self) -> F<()> {
        // Most elements: the name and the text read from one window (chars::element32).
        self.at += 1; // '<'
        let window = chars::element32(self.s, self.at);
        #[cfg(test)]
        let window = window.filter(|_| tests::WINDOW.get());
        let (prefix, local) = match window {
            Some((end, _)) => {
                let start = self.at;
                self.at = end;
                (None, (start, end))
            }
            None => self.tag_name()?,
        };
        let name_end = self.at;
        let mark = self.scope.len();
        let mut default = self.default;
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
                // (no branch on whether it is the first child: one mispredicted in five)
                link(&mut self.fast.els, parent.link, index);
                parent.link = slot(index, NEXT);
            }
            None if !self.fast.els.is_empty() => return Err(Other), // a second root
            None => {}
        }
        let decls = self.declare(mark);
        // The element whole, its text read first: one write of each field.
        let (text, colon) = match window {
            _ if empty => (Str::borrowed(0, 0), false),
            Some((_, Text::Ends(end, colon))) => self.text_to(end, colon),
            Some((_, Text::Plain(on, colon))) => match chars::plain16(self.s, on) {
                Some((end, more)) => self.text_to(end, colon | more),
                None => self.text(true)?,
            },
            _ => self.text(true)?,
        };
        self.fast.els.push(El {
            local: (local.0 as u32, (local.1 - local.0) as u32),
            ns,
            first: NONE,
            next: NONE,
            text,
            // (a document of at most MAX_DOCUMENT bytes has fewer than 2^31 declarations)
            scope_colon: self.innermost.wrapping_add(1) | if colon { COLON } else { 0 },
        });
        if empty {
            self.close_decls(decls);
            self.scope.truncate(mark);
            return Ok(());
        }
        let start = prefix.map_or(local.0, |p| p.0);
        // A leaf closed right after its text by ``</name>`` (most elements): closed here,
        // without its entry on the open stack. Anything else (a child, white space before
        // the ``>``, another name) is read as before (``end_tag`` refuses a wrong name).
        let len = name_end - start;
        let end = self.at + 2 + len;
        if end < self.s.len()
            && self.s[self.at + 1] == b'/'
            && self.s[end] == b'>'
            && chars::same_in(self.s, self.at + 2, start, len)
        {
            self.at = end + 1;
            self.close_decls(decls);
            self.scope.truncate(mark);
            return Ok(());
        }
        self.open.push(Open {
            name: (start, name_end),
            scope: mark,
            link: slot(index, FIRST),
            default,
            decls,
        });
        self.default = default;
        Ok(())
    }

    /// Notes the declarations an element made (``scope`` from ``mark``), in scope until
    /// [`P::close_decls`] (its [`El::scope`]: ``innermost`` after this): where they are in
    /// [`Fast::decls`], how many.
    #[inline(always)]
    fn declare(&mut self, mark: usize) -> (u32, u32) {
        let at = self.fast.decls.len() as u32;
        if self.scope.len() == mark {
            return (at, 0); // most elements declare nothing
        }
        let base = self.input.as_ptr() as usize;
        for &(prefix, ns) in &self.scope[mark..] {
            // the prefix's offsets in the input (``scope`` holds slices of it)
            let from = (prefix.as_ptr() as usize - base) as u32;
            self.fast.decls.push(Decl {
                prefix: (from, prefix.len() as u32),
                ns,
                up: self.innermost,
            });
            self.innermost = self.fast.decls.len() as u32 - 1;
        }
        (at, (self.scope.len() - mark) as u32)
    }

    /// The element closed: the declarations in scope are those before its own.
    #[inline(always)]
    fn close_decls(&mut self, (at, count): (u32, u32)) {
        if count != 0 {
            self.innermost = self.fast.decls[at as usize].up;
        }
    }

    fn end_tag(&mut self) -> F<()> {
        self.at += 2; // '</'
        let open = self.open.pop().ok_or(Other)?;
        self.default = self.open.last().map_or(0, |o| o.default);
        // The open tag's name (checked there), then what may end a name: the same name.
        let len = open.name.1 - open.name.0;
        let end = self.at + len;
        if end > self.s.len() || !chars::same_in(self.s, self.at, open.name.0, len) {
            return Err(Other);
        }
        if self.s.get(end) == Some(&b'>') {
            self.at = end + 1; // most end tags: no white space before the '>'
        } else {
            self.at = end;
            self.skip_ws();
            self.expect(b'>')?;
        }
        self.close_decls(open.decls);
        self.scope.truncate(open.scope);
        Ok(())
    }
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
    let (mut runs, declared, mut names) = (buffers.runs, buffers.declared, buffers.names);
    runs.clear();
    let declared = lend_scope(declared);
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
            decls: {
                let mut decls = buffers.decls;
                decls.clear();
                decls
            },
        },
        scope: lend_scope(buffers.scope),
        open,
        default: 0,
        innermost: NONE,
        runs,
        declared,
        names,
        epoch,
        memo: input.len() >= MEMO_FROM,
        known: buffers.known,
        read: buffers.read,
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
    let (known, last_read) = (std::mem::take(&mut p.known), std::mem::take(&mut p.read));
    BUFFERS.with(|b| {
        let mut b = b.borrow_mut();
        b.scope = scope;
        b.open = open;
        b.runs = runs;
        b.declared = keep_scope(declared);
        b.names = names;
        b.epoch = epoch;
        b.known = known;
        b.read = last_read;
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
