//! The tape a JSON document is parsed into (json.rs), and how the framing reads it: one
//! vector for the whole document (no allocation per object). An object is a header (member
//! count, index past its last descendant) followed by key and value of each member; an array a
//! header followed by its items. Strings without escapes borrow from the input. [`V`] is a
//! value in it; only what Python must see becomes Python objects (pyconv).

/// A string of the document: ``len`` bytes of the input from byte ``at`` (its text as
/// written), or, with ``len`` [`OWNED`], [`Doc::owned`]'s string ``at`` (it had escapes).
/// Both offsets in one word, not an enum holding a ``&str``: a node is then 16 bytes, and
/// the string is built in a register (the enum's copy, and two 32-bit fields read back as one
/// word, stalled store forwarding at every string the parser pushed).
#[derive(Clone, Copy, Debug)]
pub struct Str<'a> {
    /// ``at`` in the low 32 bits, ``len`` in the high ones.
    bits: u64,
    text: std::marker::PhantomData<&'a str>,
}

/// [`Str`]'s ``len`` of a string kept in [`Doc::owned`].
pub const OWNED: u32 = u32::MAX;

impl Str<'_> {
    #[inline]
    fn new(at: usize, len: u32) -> Self {
        Str {
            bits: at as u32 as u64 | (len as u64) << 32,
            text: std::marker::PhantomData,
        }
    }

    /// Input bytes ``at..at + len`` (both below [`OWNED`]).
    #[inline]
    pub fn borrowed(at: usize, len: usize) -> Self {
        Str::new(at, len as u32)
    }

    /// [`Doc::owned`]'s string ``index``.
    #[inline]
    pub fn owned(index: usize) -> Self {
        Str::new(index, OWNED)
    }

    #[inline]
    fn at(self) -> usize {
        self.bits as u32 as usize
    }

    #[inline]
    fn len(self) -> u32 {
        (self.bits >> 32) as u32
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(Str<'a>),
    /// ``len`` items follow; ``end`` is the index past the last node of the array.
    Array {
        len: u32,
        end: u32,
    },
    /// ``len`` (key, value) pairs follow, each key a ``Str`` node.
    Object {
        len: u32,
        end: u32,
    },
}

pub struct Doc<'a> {
    /// The whole input (valid UTF-8, shorter than [`OWNED`] bytes): borrowed strings' text.
    pub input: &'a str,
    pub nodes: Vec<Node<'a>>,
    pub owned: Vec<String>,
}

impl<'a> Doc<'a> {
    pub fn root(&self) -> V<'_, 'a> {
        V { doc: self, at: 0 }
    }

    /// Inlined at every member compared (it was a call per member name read); a string with
    /// escapes out of line.
    #[inline(always)]
    pub fn text(&self, s: Str<'a>) -> &str {
        if s.len() == OWNED {
            return self.owned_text(s.at());
        }
        let (at, end) = (s.at(), s.at() + s.len() as usize);
        debug_assert!(self.input.is_char_boundary(at) && self.input.is_char_boundary(end));
        // SAFETY: the parser makes a borrowed Str only of the text between a string's quotes
        // (ASCII, so character boundaries) of this input, which is valid UTF-8.
        unsafe { self.input.get_unchecked(at..end) }
    }

    #[cold]
    #[inline(never)]
    fn owned_text(&self, index: usize) -> &str {
        &self.owned[index]
    }

    /// The index past the subtree at ``at``.
    #[inline]
    pub fn next(&self, at: usize) -> usize {
        match self.nodes[at] {
            Node::Array { end, .. } | Node::Object { end, .. } => end as usize,
            _ => at + 1,
        }
    }
}

/// [`Doc::text`] of a string before its document is built (xmlfast.rs): ``owned`` is what
/// will be [`Doc::owned`].
#[inline]
pub fn str_text<'s>(input: &'s str, owned: &'s [String], s: Str<'_>) -> &'s str {
    if s.len() == OWNED {
        &owned[s.at()]
    } else {
        &input[s.at()..s.at() + s.len() as usize]
    }
}

thread_local! {
    /// The tape of the last document, kept for the next: a large allocation per notification
    /// would cost page faults each time.
    static SPARE: std::cell::RefCell<Vec<Node<'static>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Tapes over this many nodes are not kept (8 MB).
const SPARE_MAX: usize = 1 << 18;

pub fn spare_tape<'a>(capacity: usize) -> Vec<Node<'a>> {
    let mut tape = SPARE.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
    tape.reserve(capacity);
    // SAFETY: the vector is empty; Node<'static> and Node<'a> differ in lifetime only.
    unsafe { std::mem::transmute::<Vec<Node<'static>>, Vec<Node<'a>>>(tape) }
}

impl Drop for Doc<'_> {
    fn drop(&mut self) {
        let mut tape = std::mem::take(&mut self.nodes);
        if tape.capacity() <= SPARE_MAX {
            tape.clear();
            // SAFETY: the vector is empty (no reference to the input is kept).
            let tape = unsafe { std::mem::transmute::<Vec<Node<'_>>, Vec<Node<'static>>>(tape) };
            SPARE.with(|spare| *spare.borrow_mut() = tape);
        }
    }
}

/// A value in a document.
#[derive(Clone, Copy)]
pub struct V<'d, 'a> {
    pub doc: &'d Doc<'a>,
    pub at: usize,
}

impl<'d, 'a> V<'d, 'a> {
    #[inline]
    pub fn node(&self) -> Node<'a> {
        self.doc.nodes[self.at]
    }

    pub fn is_object(&self) -> bool {
        matches!(self.node(), Node::Object { .. })
    }

    pub fn is_null(&self) -> bool {
        matches!(self.node(), Node::Null)
    }

    pub fn as_str(&self) -> Option<&'d str> {
        match self.node() {
            Node::Str(s) => Some(self.doc.text(s)),
            _ => None,
        }
    }

    /// The members of an object (none for anything else), in document order.
    pub fn members(&self) -> Members<'d, 'a> {
        match self.node() {
            Node::Object { len, .. } => Members {
                doc: self.doc,
                at: self.at + 1,
                left: len,
            },
            _ => Members {
                doc: self.doc,
                at: 0,
                left: 0,
            },
        }
    }

    /// The items of an array.
    pub fn items(&self) -> Option<Items<'d, 'a>> {
        match self.node() {
            Node::Array { len, .. } => Some(Items {
                doc: self.doc,
                at: self.at + 1,
                left: len,
            }),
            _ => None,
        }
    }

    /// The value itself as the one item of an [`Items`] (a value that is not a list, walked
    /// as a list of one).
    #[inline]
    pub fn alone(&self) -> Items<'d, 'a> {
        Items {
            doc: self.doc,
            at: self.at,
            left: 1,
        }
    }

    /// ``dict.get(name)`` of an object: the last member of the name (only text-embedded JSON
    /// may repeat a name; the document itself is refused when it does).
    pub fn get(&self, name: &str) -> Option<V<'d, 'a>> {
        let mut found = None;
        for (key, value) in self.members() {
            if same_name(key, name) {
                found = Some(value);
            }
        }
        found
    }

    /// ``dict.get(name)`` of an object none of whose names is given twice (a JSON
    /// document's: the parse refused any that was): the first member of the name, the scan
    /// stopping there.
    #[inline]
    pub fn first(&self, name: &str) -> Option<V<'d, 'a>> {
        self.members()
            .find(|(key, _)| same_name(key, name))
            .map(|(_, value)| value)
    }

    /// Python's truth value of the decoded value.
    pub fn truthy(&self) -> bool {
        match self.node() {
            Node::Null => false,
            Node::Bool(b) => b,
            Node::Int(i) => i != 0,
            Node::UInt(u) => u != 0,
            Node::Float(f) => f != 0.0,
            Node::Str(s) => !self.doc.text(s).is_empty(),
            Node::Array { len, .. } | Node::Object { len, .. } => len != 0,
        }
    }

    /// The name of the Python type the reference decoder would see.
    pub fn type_name(&self) -> &'static str {
        match self.node() {
            Node::Null => "NoneType",
            Node::Bool(_) => "bool",
            Node::Int(_) | Node::UInt(_) => "int",
            Node::Float(_) => "float",
            Node::Str(_) => "str",
            Node::Array { .. } => "list",
            Node::Object { .. } => "dict",
        }
    }
}

/// ``a == b`` for member names: names of up to 16 bytes compared in two loads each, up to 32
/// (a module-qualified name) in four, longer ones by their first 8 bytes before the
/// library's compare. A member scan compares mostly names that differ, of a few bytes each;
/// the library compare was a call per member.
#[inline(always)]
pub fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u32::from_le_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]]);
    let long =
        |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or_default());
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4),
        9..=16 => long(a, 0) == long(b, 0) && long(a, n - 8) == long(b, n - 8),
        // a module-qualified name (``ietf-interfaces:interface``): four loads, no call
        17..=32 => {
            (long(a, 0) ^ long(b, 0)) | (long(a, 8) ^ long(b, 8)) == 0
                && (long(a, n - 16) ^ long(b, n - 16)) | (long(a, n - 8) ^ long(b, n - 8)) == 0
        }
        _ => long(a, 0) == long(b, 0) && a[8..] == b[8..],
    }
}

pub struct Members<'d, 'a> {
    doc: &'d Doc<'a>,
    at: usize,
    left: u32,
}

impl<'d, 'a> Iterator for Members<'d, 'a> {
    type Item = (&'d str, V<'d, 'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let Node::Str(key) = self.doc.nodes[self.at] else {
            unreachable!("a key is a string")
        };
        let value = V {
            doc: self.doc,
            at: self.at + 1,
        };
        self.at = self.doc.next(self.at + 1);
        Some((self.doc.text(key), value))
    }
}

pub struct Items<'d, 'a> {
    doc: &'d Doc<'a>,
    at: usize,
    left: u32,
}

impl<'d, 'a> Iterator for Items<'d, 'a> {
    type Item = V<'d, 'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let value = V {
            doc: self.doc,
            at: self.at,
        };
        self.at = self.doc.next(self.at);
        Some(value)
    }
}
