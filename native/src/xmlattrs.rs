//! The fast XML reader's start tags (xmlfast.rs): their attributes and namespace
//! declarations (the scope, the document's namespace names), the XML declaration, and the
//! memos of repeated markup: a tag whose attributes repeat, byte for byte, those of an
//! earlier tag, and a tag name read before, are taken without reading them again.

use super::chars::{in_value, same_bytes};
use super::{Other, QName, F, P};
use crate::xmlparse::plain_uri;

/// Documents from this size on use [`P`]'s memos.
pub(super) const MEMO_FROM: usize = 2048;

const NAME_BITS: u32 = 7;
pub(super) const NAME_SLOTS: usize = 1 << NAME_BITS;

/// Where [`P::tag_name`] keeps a name starting at ``s[at..]``: a hash of its first two bytes
/// and its fifth (``oper-status`` and ``operation`` apart), read as one word; or None near
/// the end.
#[inline(always)]
pub(super) fn name_slot(s: &[u8], at: usize) -> Option<usize> {
    let b = s.get(at..at + 8)?;
    let word = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let key = word & 0xFF_0000_FFFF;
    Some((key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - NAME_BITS)) as usize)
}

/// A start tag's attributes as read once: the input bytes from after its name through its
/// ``>`` or ``/>``, and what they did (every check passed).
pub(super) struct Run {
    at: (usize, usize),
    /// ``xmlns``'s namespace, if it declared one.
    default: Option<u32>,
    /// Its prefixed declarations, in order: a range of [`P::declared`].
    declared: (usize, usize),
    empty: bool,
}

/// How many attribute runs a document keeps (each declared element names the few
/// namespaces of its module).
pub(super) const RUNS: usize = 8;

/// An attribute run (as [`Run`]'s bytes) that passed every check in an earlier document, kept
/// from one document to the next: a producer starts every notification with the same tags
/// (the envelope's, the module's), whose reading costs as much as a small notification's
/// other elements. Its namespace declarations in order, as offsets in the run: the prefix
/// (None: ``xmlns``) and the namespace name.
pub(super) struct Known {
    bytes: Box<[u8]>,
    decls: Box<[KnownDecl]>,
    empty: bool,
}

/// A [`Known`] run's declaration: the prefix's (at, len) in the run (None: ``xmlns``), the
/// namespace name's.
type KnownDecl = (Option<(u32, u32)>, (u32, u32));

/// How many [`Known`] runs a thread keeps (a new one replaces the oldest), and the longest.
pub(super) const KNOWN: usize = 16;
const KNOWN_LEN: usize = 1024;

thread_local! {
    /// Namespace names [`plain_uri`] took (a producer declares the same few in every
    /// notification): compared, not checked again.
    static PLAIN: std::cell::RefCell<Vec<Box<str>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`plain_uri`], remembered for the first 32 names it took.
pub(super) fn checked_uri(uri: &str) -> bool {
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

impl<'a> P<'a> {
    /// The index of a declared namespace name (not empty) in [`Fast::namespaces`]; checked by
    /// [`plain_uri`] the first time the document declares it.
    pub(super) fn intern(&mut self, uri: &'a str) -> F<u32> {
        match self.interned(uri) {
            Some(at) => Ok(at),
            None if checked_uri(uri) => {
                self.fast.namespaces.push(uri);
                Ok((self.fast.namespaces.len() - 1) as u32)
            }
            None => Err(Other),
        }
    }

    pub(super) fn lookup(&self, prefix: &str) -> Option<u32> {
        self.scope
            .iter()
            .rev()
            .find(|(p, _)| same_bytes(p.as_bytes(), prefix.as_bytes()))
            .map(|(_, ns)| *ns)
    }

    /// An attribute value: no '<', no reference, no control but tab and line feed.
    pub(super) fn value(&mut self) -> F<(usize, usize)> {
        let quote = self.peek().ok_or(Other)?;
        if quote != b'"' && quote != b'\'' {
            return Err(Other);
        }
        self.at += 1;
        let start = self.at;
        loop {
            // Sixteen bytes at a time, then eight, to the first that needs a look (namespace
            // names are long).
            self.at = super::chars::value16(self.s, self.at, quote);
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
    pub(super) fn declaration(&mut self) -> F<()> {
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
    pub(super) fn attributes_again(&mut self, default: &mut u32) -> F<bool> {
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
                self.scope
                    .extend_from_slice(&self.declared[run.declared.0..run.declared.1]);
                return Ok(run.empty);
            }
        }
        let (start, mark) = (self.at, self.scope.len());
        let (empty, declared) = match self.known_again() {
            Some(read) => read,
            None => {
                let (empty, declared) = self.attributes()?;
                self.know(start, empty);
                (empty, declared)
            }
        };
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
        self.declared.extend_from_slice(&self.scope[mark..]);
        self.runs.push(Run {
            at: (start, self.at),
            default: declared,
            declared: (first, self.declared.len()),
            empty,
        });
        Ok(empty)
    }

    /// Where the input repeats a [`Known`] run: what [`P::attributes`] would do there (the
    /// same bytes pass the same checks and declare the same namespace names, interned in
    /// the same order; only their indexes are this document's).
    fn known_again(&mut self) -> Option<(bool, Option<u32>)> {
        let at = self.at;
        let rest = &self.s[at..];
        let run = self.known.iter().position(|k| rest.starts_with(&k.bytes))?;
        let input = self.input;
        let mut default = None;
        for i in 0..self.known[run].decls.len() {
            let (prefix, (from, len)) = self.known[run].decls[i];
            let uri = &input[at + from as usize..at + (from + len) as usize];
            let ns = self.intern_known(uri);
            match prefix {
                None => default = Some(ns),
                Some((from, len)) => {
                    let prefix = &input[at + from as usize..at + (from + len) as usize];
                    self.scope.push((prefix, ns));
                }
            }
        }
        let k = &self.known[run];
        self.at += k.bytes.len();
        Some((k.empty, default))
    }

    /// [`P::intern`] of a namespace name [`plain_uri`] took before.
    fn intern_known(&mut self, uri: &'a str) -> u32 {
        self.interned(uri).unwrap_or_else(|| {
            self.fast.namespaces.push(uri);
            (self.fast.namespaces.len() - 1) as u32
        })
    }

    /// The index of namespace name ``uri`` in [`Fast::namespaces`], if the document has it.
    #[inline]
    fn interned(&self, uri: &str) -> Option<u32> {
        (self.fast.namespaces.iter())
            .position(|n| same_bytes(n.as_bytes(), uri.as_bytes()))
            .map(|at| at as u32)
    }

    /// Keeps the attribute run just read (from ``start``; its declarations in
    /// [`P::read`]) as a [`Known`] one, if it declared a namespace (other attributes are
    /// read quickly, and may differ from tag to tag).
    #[cold]
    fn know(&mut self, start: usize, empty: bool) {
        if self.read.is_empty() || self.at - start > KNOWN_LEN {
            return;
        }
        let relative = |(from, to): (usize, usize)| ((from - start) as u32, (to - from) as u32);
        let known = Known {
            bytes: self.s[start..self.at].into(),
            decls: (self.read.iter())
                .map(|&(prefix, uri)| (prefix.map(relative), relative(uri)))
                .collect(),
            empty,
        };
        if self.known.len() < KNOWN {
            self.known.push(known);
        } else {
            self.known.rotate_left(1);
            self.known[KNOWN - 1] = known;
        }
    }

    /// The rest of a start tag after its name: its attributes (namespace declarations pushed
    /// on the scope), then ``>`` or ``/>``; whether it was ``/>``, and the namespace ``xmlns``
    /// declared.
    #[inline(never)]
    pub(super) fn attributes(&mut self) -> F<(bool, Option<u32>)> {
        let mut default = None;
        self.read.clear();
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
                    self.read.push((None, value));
                }
                (Some("xmlns"), declared) => {
                    if declared == "xml" || declared == "xmlns" || uri.is_empty() {
                        return Err(Other);
                    }
                    let ns = self.intern(uri)?;
                    self.scope.push((declared, ns));
                    self.read.push((Some(attr_local), value));
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
    #[inline(always)]
    pub(super) fn tag_name(&mut self) -> F<QName> {
        // An unprefixed name (its first byte checked a name start by the caller) that ends
        // before the input's last sixteen bytes: SSE2 steps, one for most names, cheaper
        // than the memo below (x86_64; elsewhere name16 gives None and the memo or the
        // scan reads it).
        let start = self.at;
        if let Some(end) = super::chars::name16(self.s, start + 1) {
            if self.s[end] != b':' && end - start <= super::MAX_NAME {
                self.at = end;
                return Ok((None, (start, end)));
            }
        }
        if !self.memo {
            return self.qname();
        }
        let slot = name_slot(self.s, start);
        if let Some(slot) = slot {
            let (at, len, epoch) = self.names[slot];
            let (at, end) = (at as usize, start + len as usize);
            if epoch == self.epoch
                && end < self.s.len()
                && matches!(self.s[end], b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r')
                && super::chars::same_in(self.s, start, at, len as usize)
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
}
