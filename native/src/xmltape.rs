//! An XML document's datastore contents (or yang-patch edit values) -> the tape a JSON
//! document is parsed into, as the JSON-shaped tree of RFC 7951 that
//! ``yangkey.xmltree.XmlConverter.members`` builds: namespaces mapped to module names through
//! ``ns_modules``, a member qualified where its module changes, repeated elements as an array
//! at the first one's place, leaf text as lxml gives it, ``prefix:name`` text with a prefix in
//! scope of a known namespace noted as the reference's ``QNameText``. From roxmltree's tree or
//! the fast reader's arena (xmlfast.rs); the members no walk reads left out, or every one
//! (the instance feed's: xmlfeed.rs). Used by xmlkeys.rs, xmlpatch.rs and xmlfeed.rs.

use crate::tape::{Doc, Node as T, Str};
use crate::xmlconv::NsTable;
use crate::xmlfast::{same_bytes, Fast, NONE};
use crate::xmlparse::text;
use roxmltree::Node;
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

/// How many members [`Build::object_few`] takes.
const FEW: usize = 8;

/// The module of the contents element's parent: none, so every top member is qualified.
const TOP: u32 = u32::MAX;

/// Groups of a parent's children past which a map finds a child's group (a linear search
/// below: fewer distinct names is the common case, and no hashing).
const LINEAR: usize = 16;

/// The datastore contents -> the tape (``XmlConverter.members``).
struct Build<'a, 't> {
    input: &'a str,
    table: &'t NsTable,
    nodes: Vec<T<'a>>,
    owned: Vec<String>,
    qnames: Vec<(usize, Rc<str>)>,
    /// Namespaces the map does not name, and their module names (``{ns}``): ids after the
    /// map's.
    unknown: Vec<(String, String)>,
    /// Namespaces met, by address (a declaration's text is stored once): their module id.
    seen: Vec<(*const u8, usize, u32)>,
    /// The qualified member names written so far: (module, local name) -> owned string.
    qualified: Vec<(u32, &'a str, usize)>,
    /// ``module:name`` values of ``prefix:name`` leaves made so far.
    qname_values: Vec<(u32, String, Rc<str>)>,
    /// The fast path's buffers of children and member names (see ``object_fast``).
    kids: Vec<(u32, u32, u32)>,
    groups: Vec<(u32, &'a str, u32)>,
    /// The member names the walker reads (``object_fast`` leaves out any other), or all.
    reads: Option<&'t [String]>,
    /// The lengths of the names in ``reads``, as bits (63: any length from 63 on): a member
    /// name of a length none has is not read, without a comparison.
    read_lengths: u64,
    /// The last qualified member [`Build::read`] decided: (module, parent, local name,
    /// read). The same member repeats from entry to entry (every edit's value names its
    /// list), and its decision costs a dozen name comparisons.
    read_last: Cell<Option<(u32, u32, &'a str, bool)>>,
}

impl<'a> Build<'a, '_> {
    fn module_id(&mut self, ns: &str) -> u32 {
        let address = (ns.as_ptr(), ns.len());
        if let Some((_, _, id)) = self.seen.iter().find(|(p, l, _)| (*p, *l) == address) {
            return *id;
        }
        let id = match self.table.module_of(ns) {
            Some(id) => id,
            None => {
                let at = match self.unknown.iter().position(|(n, _)| n == ns) {
                    Some(at) => at,
                    None => {
                        self.unknown.push((ns.to_string(), format!("{{{ns}}}")));
                        self.unknown.len() - 1
                    }
                };
                (self.table.known() + at) as u32
            }
        };
        if self.seen.len() < 64 {
            self.seen.push((address.0, address.1, id));
        }
        id
    }

    fn module_name(&self, id: u32) -> &str {
        let known = self.table.known();
        if (id as usize) < known {
            self.table.module_name(id)
        } else {
            &self.unknown[id as usize - known].1
        }
    }

    /// A string of the tape: borrowed when it is a slice of the input, else owned.
    fn string(&mut self, text: &str) -> Str<'a> {
        let base = self.input.as_ptr() as usize;
        let at = text.as_ptr() as usize;
        if at >= base && at + text.len() <= base + self.input.len() {
            return Str::borrowed(at - base, text.len());
        }
        self.owned.push(text.to_string());
        Str::owned(self.owned.len() - 1)
    }

    /// The member name of an element of module ``module`` named ``local`` under a parent of
    /// module ``parent`` (``XmlConverter.name``).
    fn member(&mut self, module: u32, local: &'a str, parent: u32) -> Str<'a> {
        if module == parent {
            return self.string(local);
        }
        let found = self
            .qualified
            .iter()
            .find(|(m, l, _)| *m == module && same_bytes(l.as_bytes(), local.as_bytes()));
        if let Some((_, _, at)) = found {
            return Str::owned(*at);
        }
        let name = qualified(self.module_name(module), local);
        self.owned.push(name);
        let at = self.owned.len() - 1;
        if self.qualified.len() < 256 {
            self.qualified.push((module, local, at));
        }
        Str::owned(at)
    }

    /// ``XmlConverter.leaf``: the text as lxml gives it; ``prefix:name`` text whose prefix is
    /// in scope and names a namespace of the map is noted with its ``module:name``.
    fn leaf(&mut self, node: Node<'a, '_>) {
        let text = text(node);
        let index = self.nodes.len();
        let s = self.string(&text);
        self.nodes.push(T::Str(s));
        if let Some(colon) = text.find(':') {
            let prefix = &text[..colon];
            if !prefix.is_empty() && !text.contains(' ') && prefix != "xml" {
                if let Some(ns) = node.lookup_namespace_uri(Some(prefix)) {
                    if let Some(id) = self.table.module_of(ns) {
                        let module = self.table.module_name(id);
                        let value = format!("{module}:{}", &text[colon + 1..]);
                        self.qnames.push((index, Rc::from(value)));
                    }
                }
            }
        }
    }

    /// ``XmlConverter.members`` of ``element``'s children under a parent of module ``parent``:
    /// an object, a name met again an array at its first place.
    fn object(&mut self, element: Node<'a, '_>, parent: u32) {
        // (group, module, element) of each child element, in document order
        let mut kids: Vec<(u32, u32, Node<'a, '_>)> = Vec::new();
        // (module, local name, count) of each member name, in order of first appearance
        let mut groups: Vec<(u32, &'a str, u32)> = Vec::new();
        let mut index: HashMap<(u32, &'a str), u32> = HashMap::new();
        for child in element.children() {
            if !child.is_element() {
                continue;
            }
            let tag = child.tag_name();
            let module = self.module_id(tag.namespace().unwrap_or(""));
            let local: &'a str = tag.name();
            // The member name is one-to-one with (module, local) under one parent.
            let last = groups.len().checked_sub(1);
            let group = match last {
                Some(g) if groups[g].0 == module && groups[g].1 == local => Some(g),
                _ if groups.len() <= LINEAR => groups
                    .iter()
                    .position(|(m, l, _)| *m == module && *l == local),
                _ => index.get(&(module, local)).map(|g| *g as usize),
            };
            let group = match group {
                Some(g) => g,
                None => {
                    groups.push((module, local, 0));
                    let g = groups.len() - 1;
                    if groups.len() > LINEAR {
                        if index.is_empty() {
                            for (at, (m, l, _)) in groups.iter().enumerate() {
                                index.insert((*m, *l), at as u32);
                            }
                        } else {
                            index.insert((module, local), g as u32);
                        }
                    }
                    g
                }
            };
            groups[group].2 += 1;
            kids.push((group as u32, module, child));
        }
        let header = self.nodes.len();
        self.nodes.push(T::Object { len: 0, end: 0 });
        let contiguous = kids.windows(2).all(|w| w[0].0 <= w[1].0);
        if !contiguous {
            kids.sort_by_key(|(group, _, _)| *group); // stable: document order in a group
        }
        let mut at = 0;
        for &(module, local, count) in &groups {
            let key = self.member(module, local, parent);
            self.nodes.push(T::Str(key));
            if count == 1 {
                self.value(kids[at].2, module);
            } else {
                let array = self.nodes.len();
                self.nodes.push(T::Array { len: 0, end: 0 });
                for &(_, _, child) in &kids[at..at + count as usize] {
                    self.value(child, module);
                }
                self.nodes[array] = T::Array {
                    len: count,
                    end: self.nodes.len() as u32,
                };
            }
            at += count as usize;
        }
        self.nodes[header] = T::Object {
            len: groups.len() as u32,
            end: self.nodes.len() as u32,
        };
    }

    /// Whether the walker reads the member an element of ``module`` named ``local`` is
    /// under a parent of module ``parent`` (``XmlConverter.name``'s member).
    #[inline(always)]
    fn read(&self, module: u32, local: &'a str, parent: u32) -> bool {
        let Some(reads) = self.reads else {
            return true;
        };
        if module != parent {
            if let Some((m, p, l, read)) = self.read_last.get() {
                if m == module && p == parent && same_bytes(l.as_bytes(), local.as_bytes()) {
                    return read;
                }
            }
            let read = self.read_names(reads, module, local, parent);
            self.read_last.set(Some((module, parent, local, read)));
            return read;
        }
        // (most members: no name read has their length)
        self.read_lengths & length_bit(local.len()) != 0
            && self.read_names(reads, module, local, parent)
    }

    /// [`Build::read`] of a member, compared with the names read.
    fn read_names(&self, reads: &[String], module: u32, local: &str, parent: u32) -> bool {
        let length = if module == parent {
            local.len()
        } else {
            self.module_name(module).len() + 1 + local.len()
        };
        if self.read_lengths & length_bit(length) == 0 {
            return false;
        }
        if module == parent {
            return reads
                .iter()
                .any(|n| same_bytes(n.as_bytes(), local.as_bytes()));
        }
        let name = self.module_name(module);
        reads.iter().any(|n| {
            n.len() == name.len() + 1 + local.len()
                && n.as_bytes()[name.len()] == b':'
                && same_bytes(&n.as_bytes()[..name.len()], name.as_bytes())
                && same_bytes(&n.as_bytes()[name.len() + 1..], local.as_bytes())
        })
    }

    /// [`Build::object_fast`] of an element whose children the walker reads few of, each
    /// name once (the key pass's common case: no group, no array, document order): written
    /// straight into the tape. False, nothing written, for any other (more than [`FEW`]
    /// members read, or a name read twice): the general way reads it.
    fn object_few(&mut self, fast: &Fast<'a>, element: u32, parent: u32) -> bool {
        let mut read = [(0u32, "", 0u32); FEW];
        let mut count = 0;
        let (mut last_ns, mut module) = (NONE, NONE);
        for child in fast.children(element) {
            let el = &fast.els[child as usize];
            if el.ns != last_ns {
                last_ns = el.ns;
                module = self.module_id(fast.namespaces[el.ns as usize]);
            }
            let local: &'a str = fast.local(child);
            if !self.read(module, local, parent) {
                continue;
            }
            if count == FEW
                || read[..count]
                    .iter()
                    .any(|(m, l, _)| *m == module && same_bytes(l.as_bytes(), local.as_bytes()))
            {
                return false;
            }
            read[count] = (module, local, child);
            count += 1;
        }
        let header = self.nodes.len();
        self.nodes.push(T::Object { len: 0, end: 0 });
        for &(module, local, child) in &read[..count] {
            let key = self.member(module, local, parent);
            self.nodes.push(T::Str(key));
            self.value_fast(fast, child, module);
        }
        self.nodes[header] = T::Object {
            len: count as u32,
            end: self.nodes.len() as u32,
        };
        true
    }

    /// [`Build::object`] of an element of the fast reader's arena, members no walk reads
    /// left out (``reads``).
    fn object_fast(&mut self, fast: &Fast<'a>, element: u32, parent: u32) {
        if self.reads.is_some() && self.object_few(fast, element, parent) {
            return;
        }
        // This object's children and member names, above those of the objects around it in
        // the shared buffers (no allocation per object).
        let mut kids = std::mem::take(&mut self.kids);
        let mut groups = std::mem::take(&mut self.groups);
        let (kids_start, groups_start) = (kids.len(), groups.len());
        // Made only past LINEAR groups (``HashMap::new`` reads a thread-local per call).
        let mut index: Option<HashMap<(u32, &'a str), u32>> = None;
        let mut last_ns = NONE;
        let mut module = NONE;
        for child in fast.children(element) {
            let el = &fast.els[child as usize];
            if el.ns != last_ns {
                last_ns = el.ns;
                module = self.module_id(fast.namespaces[el.ns as usize]);
            }
            let local: &'a str = fast.local(child);
            if !self.read(module, local, parent) {
                continue;
            }
            let mine = &groups[groups_start..];
            let same = |(m, l, _): &(u32, &str, u32)| {
                *m == module && same_bytes(l.as_bytes(), local.as_bytes())
            };
            let group = match mine.last() {
                Some(g) if same(g) => Some(mine.len() - 1),
                _ if mine.len() <= LINEAR => mine.iter().position(same),
                _ => index
                    .as_ref()
                    .and_then(|index| index.get(&(module, local)))
                    .map(|g| *g as usize),
            };
            let group = match group {
                Some(g) => g,
                None => {
                    groups.push((module, local, 0));
                    let mine = &groups[groups_start..];
                    let g = mine.len() - 1;
                    if mine.len() > LINEAR {
                        let index = index.get_or_insert_with(HashMap::new);
                        if index.is_empty() {
                            for (at, (m, l, _)) in mine.iter().enumerate() {
                                index.insert((*m, *l), at as u32);
                            }
                        } else {
                            index.insert((module, local), g as u32);
                        }
                    }
                    g
                }
            };
            groups[groups_start + group].2 += 1;
            kids.push((group as u32, module, child));
        }
        let mine = &mut kids[kids_start..];
        if !mine.windows(2).all(|w| w[0].0 <= w[1].0) {
            mine.sort_by_key(|(group, _, _)| *group); // stable: document order in a group
        }
        let header = self.nodes.len();
        self.nodes.push(T::Object { len: 0, end: 0 });
        let count_groups = groups.len() - groups_start;
        let mut at = kids_start;
        for g in groups_start..groups.len() {
            let (module, local, count) = groups[g];
            let key = self.member(module, local, parent);
            self.nodes.push(T::Str(key));
            if count != 1 {
                self.nodes.push(T::Array { len: 0, end: 0 });
            }
            let array = self.nodes.len() - 1;
            for k in at..at + count as usize {
                let child = kids[k].2;
                // The buffers are lent to the objects below for the time of the call.
                self.kids = kids;
                self.groups = groups;
                self.value_fast(fast, child, module);
                kids = std::mem::take(&mut self.kids);
                groups = std::mem::take(&mut self.groups);
            }
            if count != 1 {
                self.nodes[array] = T::Array {
                    len: count,
                    end: self.nodes.len() as u32,
                };
            }
            at += count as usize;
        }
        self.nodes[header] = T::Object {
            len: count_groups as u32,
            end: self.nodes.len() as u32,
        };
        kids.truncate(kids_start);
        groups.truncate(groups_start);
        self.kids = kids;
        self.groups = groups;
    }

    fn value_fast(&mut self, fast: &Fast<'a>, el: u32, module: u32) {
        let element = &fast.els[el as usize];
        if element.first != NONE {
            self.object_fast(fast, el, module);
            return;
        }
        // The arena's strings are the tape's: the same input, and ``owned`` starts as the
        // arena's (see ``fast_keys``).
        let index = self.nodes.len();
        self.nodes.push(T::Str(element.text));
        // (``prefix:name`` text read as the reference reads it only where it can be one)
        let qname = if element.colon() {
            fast.qname(el)
        } else {
            NONE
        };
        if qname != NONE {
            let text = fast.text(el);
            if let Some(id) = self.table.module_of(fast.namespaces[qname as usize]) {
                let colon = text.bytes().position(|b| b == b':').unwrap_or_default();
                let name = &text[colon + 1..];
                // Devices repeat the same identity in every entry: one string for them all.
                let made = self
                    .qname_values
                    .iter()
                    .find(|(m, n, _)| *m == id && n.as_str() == name);
                let value = match made {
                    Some((_, _, value)) => value.clone(),
                    None => {
                        let value: Rc<str> = Rc::from(qualified(self.table.module_name(id), name));
                        if self.qname_values.len() < 64 {
                            self.qname_values
                                .push((id, name.to_string(), value.clone()));
                        }
                        value
                    }
                };
                self.qnames.push((index, value));
            }
        }
    }

    fn value(&mut self, node: Node<'a, '_>, module: u32) {
        if node.children().any(|c| c.is_element()) {
            self.object(node, module);
        } else {
            self.leaf(node);
        }
    }
}

/// A name length's bit in [`Build::read_lengths`].
#[inline]
fn length_bit(length: usize) -> u64 {
    1 << length.min(63)
}

/// ``module:name`` (``format!``'s machinery cost more than the rest of a small document's
/// tape).
fn qualified(module: &str, name: &str) -> String {
    let mut text = String::with_capacity(module.len() + 1 + name.len());
    text.push_str(module);
    text.push(':');
    text.push_str(name);
    text
}

/// ``object_fast``'s children and member names.
type Buffers = (Vec<(u32, u32, u32)>, Vec<(u32, &'static str, u32)>);

thread_local! {
    /// ``object_fast``'s buffers, kept for the next document (empty between documents).
    static BUFFERS: std::cell::RefCell<Buffers> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

impl Drop for Build<'_, '_> {
    fn drop(&mut self) {
        let mut kids = std::mem::take(&mut self.kids);
        let mut groups = std::mem::take(&mut self.groups);
        kids.clear();
        groups.clear();
        // SAFETY: the vector is empty: no reference to the document is kept.
        let groups = unsafe {
            std::mem::transmute::<Vec<(u32, &str, u32)>, Vec<(u32, &'static str, u32)>>(groups)
        };
        BUFFERS.with(|b| *b.borrow_mut() = (kids, groups));
    }
}

fn builder<'a, 't>(input: &'a str, table: &'t NsTable) -> Build<'a, 't> {
    let (mut kids, mut groups) = BUFFERS.with(|b| std::mem::take(&mut *b.borrow_mut()));
    kids.clear();
    groups.clear();
    // SAFETY: the vector is empty; the element types differ in lifetime only.
    let groups = unsafe {
        std::mem::transmute::<Vec<(u32, &'static str, u32)>, Vec<(u32, &'a str, u32)>>(groups)
    };
    Build {
        input,
        table,
        nodes: crate::tape::spare_tape(input.len() / 16 + 4),
        owned: Vec::new(),
        qnames: Vec::new(),
        unknown: Vec::new(),
        seen: Vec::new(),
        qualified: Vec::new(),
        qname_values: Vec::new(),
        kids,
        groups,
        reads: None,
        read_lengths: 0,
        read_last: Cell::new(None),
    }
}

fn finish<'a>(mut build: Build<'a, '_>) -> (Doc<'a>, Vec<(usize, Rc<str>)>) {
    let doc = Doc {
        input: build.input,
        nodes: std::mem::take(&mut build.nodes),
        owned: std::mem::take(&mut build.owned),
    };
    (doc, std::mem::take(&mut build.qnames))
}

/// The datastore contents element as the tape of its JSON-shaped tree, and its
/// ``prefix:name`` leaves.
pub(crate) fn tape<'a>(
    input: &'a str,
    table: &NsTable,
    contents: Node<'a, '_>,
) -> (Doc<'a>, Vec<(usize, Rc<str>)>) {
    let mut build = builder(input, table);
    build.object(contents, TOP);
    finish(build)
}

/// [`members_tape`]'s tape, its ``prefix:name`` leaves, and where each element's object is.
pub(crate) type Members<'a> = (Doc<'a>, Vec<(usize, Rc<str>)>, Vec<usize>);

/// The tape of each of ``elements``' children as ``XmlConverter.members(children, None)``
/// makes it (a push-update's datastore contents, an XML yang-patch's values), only the
/// members named in ``reads`` kept, or every one when it is None (the instance feed reads
/// every leaf below a target, by its local name too: xmlfeed.rs); where each is (the first
/// at the tape's root).
pub(crate) fn members_tape<'a>(
    fast: &Fast<'a>,
    table: &NsTable,
    elements: &[u32],
    reads: Option<&[String]>,
) -> Members<'a> {
    let mut build = builder(fast.input, table);
    build.reads = reads;
    build.read_lengths = reads.map_or(0, |names| {
        names.iter().fold(0, |bits, n| bits | length_bit(n.len()))
    });
    build.owned = fast.owned.clone(); // the arena's owned strings keep their indexes
    let mut at = Vec::with_capacity(elements.len());
    for &element in elements {
        at.push(build.nodes.len());
        build.object_fast(fast, element, TOP);
    }
    let (tape, qnames) = finish(build);
    (tape, qnames, at)
}
