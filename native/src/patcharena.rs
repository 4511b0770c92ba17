//! What patchwalk.rs's ``edit`` reads of an edit's value, from either source: the tape (a JSON
//! yang-patch's value, or an XML one's written into it by xmltape.rs), or an XML yang-patch's
//! value element read in place in the fast reader's arena (xmlfast.rs), without the tape.
//!
//! The arena is read as ``XmlConverter.members`` would have made the value (the tape
//! xmltape.rs writes): a value element's children as members qualified by module name
//! (``module:name``) where their module differs from their parent's (always at the value's
//! top), the elements of one (module, name) as an array, an element with child elements an
//! object, any other its text. Only the reads the key pass makes on its own are taken: a
//! value that would be walked below its target (walk.rs's general walk), a key or filter that
//! a Python converter canonicalizes, an instance feed's content, or a member name two groups
//! of elements would share sets [`Arena::fallback`]: the caller then writes the tape and
//! walks it (xmlpatch.rs). Any other stop is the tape walk's own stop at the same read.
//!
//! A child module of patchwalk.rs.

use super::super::{integer_text, lookup, Branch, Canon, Run, Step, Stop, W};
use super::{canon_text, EditOut};
use crate::tape::{same_name, Node, V};
use crate::xmlconv::NsTable;
use crate::xmlfast::{same_bytes, Fast, NONE};
use std::borrow::Cow;
use std::cell::Cell;

/// An edit's value as ``edit`` reads it (see the module's text).
pub(crate) trait EditValue<'d>: Copy {
    /// walk.rs's ``lookup``: the plain member, else the qualified one (absent: None).
    fn lookup(self, member: &str, qualified: &str) -> W<Option<Self>>;
    fn is_object(self) -> bool;
    /// ``_one_entry`` of a list target's member of the value: its one object, or None
    /// (two objects stop).
    fn one_entry(self) -> W<Option<Self>>;
    /// ``_check_value_keys``: each key the value's entry gives is the target's (equal
    /// text, or equal once canonical).
    fn check_value_keys(self, run: &mut Run<'_, '_>, step: &Step, keys: &[Cow<'_, str>]) -> W<()>;
    /// The entry an edit's value gives of list ``step`` at the end of its target (the
    /// member's ``_one_entry``, None: none), its keys checked against the target's ``keys``
    /// (``_check_value_keys``): [`EditValue::lookup`], [`EditValue::one_entry`],
    /// [`EditValue::check_value_keys`].
    #[inline]
    fn entry(self, run: &mut Run<'_, '_>, step: &Step, keys: &[Cow<'_, str>]) -> W<Option<Self>> {
        let item = match self.lookup(&step.member, &step.qualified)? {
            Some(content) => content.one_entry()?,
            None => None,
        };
        if let Some(item) = item {
            item.check_value_keys(run, step, keys)?;
        }
        Ok(item)
    }
    /// ``passes_filters`` of a list entry or container.
    fn passes(self, run: &mut Run<'_, '_>, step: &Step) -> W<bool>;
    /// The walker from step ``index`` on below this value (walk.rs).
    fn walk<O: EditOut<'d>>(
        self,
        run: &mut Run<'_, '_>,
        branch: &Branch,
        index: usize,
        values: &mut Vec<Cow<'d, str>>,
        out: &mut O,
    ) -> W<()>;
    /// The content an instance carries, as the tape (read by an instance feed only).
    fn tape(content: Option<Self>, feed: bool) -> W<Option<V<'d, 'd>>>;
}

/// The one object of a list entry's value (None when there is none); a second one stops.
fn only<T>(mut objects: impl Iterator<Item = T>) -> W<Option<T>> {
    let first = objects.next();
    if objects.next().is_some() {
        return Err(Stop);
    }
    Ok(first)
}

impl<'d, 'a: 'd> EditValue<'d> for V<'d, 'a> {
    #[inline]
    fn lookup(self, member: &str, qualified: &str) -> W<Option<Self>> {
        Ok(lookup(self, member, qualified))
    }

    fn is_object(self) -> bool {
        V::is_object(&self)
    }

    fn one_entry(self) -> W<Option<Self>> {
        match self.items() {
            None => Ok(Some(self).filter(|c| c.is_object())),
            Some(items) => only(items.filter(|i| i.is_object())),
        }
    }

    /// A value of one member (most: the list's, its entries' array) and an array of one
    /// item (most: the entry) read in place, no scan (one member names no other twice);
    /// else, in a tape of unique names ([`Run::unique`]: a JSON document's), the list's
    /// member found by the early-stopping lookup, as each key of the entry.
    #[inline]
    fn entry(self, run: &mut Run<'_, '_>, step: &Step, keys: &[Cow<'_, str>]) -> W<Option<Self>> {
        let content = match self.node() {
            Node::Object { len: 1, .. } => {
                let (name, content) = self.members().next().ok_or(Stop)?;
                let named = same_name(name, &step.member) || same_name(name, &step.qualified);
                Some(content).filter(|_| named) // (a null one: no entry, below)
            }
            _ => run.lookup(self, &step.member, &step.qualified),
        };
        let Some(content) = content else {
            return Ok(None);
        };
        let item = match content.node() {
            Node::Array { len: 1, .. } => Some(V {
                doc: content.doc,
                at: content.at + 1,
            })
            .filter(|i| i.is_object()),
            _ => content.one_entry()?,
        };
        let Some(item) = item else {
            return Ok(None);
        };
        item.check_value_keys(run, step, keys)?;
        Ok(Some(item))
    }

    /// (a key given as null stops: the reference's first walk refuses it, its per-plan
    /// cache would not)
    #[inline]
    fn check_value_keys(self, run: &mut Run<'_, '_>, step: &Step, keys: &[Cow<'_, str>]) -> W<()> {
        let named = step.keys.iter().filter(|k| !k.positional);
        for (slot, wanted) in named.zip(keys) {
            let given = match run.unique {
                true => self.first(&slot.member),
                false => self.get(&slot.member),
            };
            let Some(given) = given else {
                continue;
            };
            match given.node() {
                // the target's text as written (most): equal once canonical too
                Node::Str(text) if same_name(given.doc.text(text), wanted) => continue,
                Node::Null => return Err(Stop),
                _ => {}
            }
            let given = run.canon(&slot.canon, given)?;
            let wanted = canon_text(run, &slot.canon, Cow::Borrowed(wanted))?;
            if given != wanted {
                return Err(Stop);
            }
        }
        Ok(())
    }

    fn passes(self, run: &mut Run<'_, '_>, step: &Step) -> W<bool> {
        run.passes(self, step)
    }

    fn walk<O: EditOut<'d>>(
        self,
        run: &mut Run<'_, '_>,
        branch: &Branch,
        index: usize,
        values: &mut Vec<Cow<'d, str>>,
        out: &mut O,
    ) -> W<()> {
        run.walk(branch, index, self, values, out)
    }

    #[inline]
    fn tape(content: Option<Self>, _feed: bool) -> W<Option<V<'d, 'd>>> {
        Ok(content)
    }
}

/// The module parent of an edit's value element's children: none, so every member is
/// qualified (xmltape.rs's ``TOP``).
const TOP: u32 = u32::MAX;

/// Namespaces of an arena whose module ids [`Arena`] keeps (past them: looked up each time).
const KEPT: usize = 16;

/// [`Arena::ids`]' entry of a namespace not looked up yet.
const UNSET: u32 = u32::MAX - 1;

/// An XML yang-patch's arena, read as the tape xmltape.rs would write of its values.
pub(crate) struct Arena<'x, 'a> {
    fast: &'x Fast<'a>,
    table: &'x NsTable,
    /// By namespace index of the arena, its module id, looked up when first read: the map's
    /// module, or one of the document's own (numbered after the map's, by namespace index:
    /// its name ``{ns}``), as xmltape.rs tells modules apart.
    ids: [Cell<u32>; KEPT],
    /// Set when a read needs the tape (see the module's text).
    pub(crate) fallback: Cell<bool>,
}

impl<'x, 'a> Arena<'x, 'a> {
    pub(crate) fn new(fast: &'x Fast<'a>, table: &'x NsTable) -> Self {
        Arena {
            fast,
            table,
            ids: std::array::from_fn(|_| Cell::new(UNSET)),
            fallback: Cell::new(false),
        }
    }

    /// The module id of namespace ``ns`` (an index of the arena).
    #[inline]
    fn module_of(&self, ns: u32) -> u32 {
        let at = ns as usize;
        if let Some(id) = self.ids.get(at).map(Cell::get).filter(|id| *id != UNSET) {
            return id;
        }
        let id = match self.table.module_of(self.fast.namespaces[at]) {
            Some(id) => id,
            None => (self.table.known() + at) as u32,
        };
        if let Some(kept) = self.ids.get(at) {
            kept.set(id);
        }
        id
    }

    /// An edit's value element: the object of its children's members.
    pub(crate) fn value(&self, el: u32) -> XmlValue<'_, 'x, 'a> {
        XmlValue {
            arena: self,
            el,
            module: TOP,
            shape: Shape::Object,
        }
    }

    /// Stops, asking for the tape.
    fn tape_needed<T>(&self) -> W<T> {
        self.fallback.set(true);
        Err(Stop)
    }

    #[inline]
    fn module(&self, el: u32) -> u32 {
        self.module_of(self.fast.els[el as usize].ns)
    }

    /// Whether element ``el`` (its ``local`` name, namespace ``ns``, of module ``module``) is
    /// the member ``name`` under a parent of module ``parent`` (``XmlConverter.name``):
    /// ``module:local`` where the modules differ (``{ns}:local`` for a namespace the map
    /// does not name).
    #[inline(always)]
    fn named(&self, local: &[u8], ns: u32, module: u32, parent: u32, name: &str) -> bool {
        let name = name.as_bytes();
        if module == parent {
            return same_bytes(local, name);
        }
        let Some(prefix) = name.len().checked_sub(local.len() + 1) else {
            return false;
        };
        if name[prefix] != b':' || !same_bytes(&name[prefix + 1..], local) {
            return false;
        }
        let prefix = &name[..prefix];
        if (module as usize) < self.table.known() {
            return same_bytes(prefix, self.table.module_name(module).as_bytes());
        }
        let uri = self.fast.namespaces[ns as usize].as_bytes();
        prefix.len() == uri.len() + 2
            && prefix[0] == b'{'
            && prefix[prefix.len() - 1] == b'}'
            && same_bytes(&prefix[1..prefix.len() - 1], uri)
    }

    fn element(&self, el: u32, module: u32) -> XmlValue<'_, 'x, 'a> {
        let shape = if self.fast.els[el as usize].first != NONE {
            Shape::Object
        } else {
            Shape::Text
        };
        XmlValue {
            arena: self,
            el,
            module,
            shape,
        }
    }
}

/// An XML yang-patch's edit values read in the arena: each edit's ``(target, operation,
/// value)`` elements (xmlpatch.rs's frame; [`NONE`]: no value element), its value read as
/// [`Arena::value`] when the walk reaches it (no vector of them made first).
#[derive(Clone, Copy)]
pub(crate) struct ArenaEdits<'v, 'x, 'a> {
    pub(crate) arena: &'v Arena<'x, 'a>,
    pub(crate) edits: &'v [(u32, u32, u32)],
}

impl<'v, 'x, 'a> ArenaEdits<'v, 'x, 'a> {
    /// Edit ``at``'s value (None: it has no value element).
    #[inline]
    pub(crate) fn value(&self, at: usize) -> Option<XmlValue<'v, 'x, 'a>> {
        let el = self.edits[at].2;
        (el != NONE).then(|| self.arena.value(el))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Object,
    Text,
    /// The elements of one (module, name) under a parent, from ``el`` on.
    Array,
}

/// A value of an [`Arena`]: an element (object or text), or a group of elements.
#[derive(Clone, Copy)]
pub(crate) struct XmlValue<'r, 'x, 'a> {
    arena: &'r Arena<'x, 'a>,
    el: u32,
    /// Its module (an array's: its elements').
    module: u32,
    shape: Shape,
}

/// A member being looked up: its first element, module, and how many elements.
type Group = Option<(u32, u32, u32)>;

impl<'r> XmlValue<'r, '_, '_> {
    fn text(&self) -> &'r str {
        self.arena.fast.text(self.el)
    }

    /// One member of the name (a group's elements counted), the plain name first; the
    /// same name given by two groups asks for the tape.
    fn member(self, member: &str, qualified: Option<&str>) -> W<Option<Self>> {
        if self.shape != Shape::Object {
            return Ok(None);
        }
        let arena = self.arena;
        let fast = arena.fast;
        let mut child = fast.els[self.el as usize].first;
        if child != NONE && fast.els[child as usize].next == NONE {
            // One child (most edit values: the list's entry): no group to count or tell
            // apart, the names compared once.
            let el = &fast.els[child as usize];
            let (local, module) = (fast.local(child).as_bytes(), arena.module_of(el.ns));
            let named = |name| arena.named(local, el.ns, module, self.module, name);
            let found = named(member) || qualified.is_some_and(named);
            return Ok(found.then(|| arena.element(child, module)));
        }
        // (no member name is shorter than its element's local name)
        let longest = member.len().max(qualified.map_or(0, str::len));
        let (mut plain, mut other): (Group, Group) = (None, None);
        while child != NONE {
            let el = &fast.els[child as usize];
            let at = child;
            child = el.next;
            if el.local.1 as usize > longest {
                continue;
            }
            let local = fast.local(at).as_bytes();
            let module = arena.module_of(el.ns);
            let named = |name| arena.named(local, el.ns, module, self.module, name);
            let group = if named(member) {
                &mut plain
            } else if qualified.is_some_and(named) {
                &mut other
            } else {
                continue;
            };
            let child = at;
            match group {
                None => *group = Some((child, module, 1)),
                Some((first, m, count)) => {
                    let fast = arena.fast;
                    if *m != module
                        || !same_bytes(fast.local(*first).as_bytes(), fast.local(child).as_bytes())
                    {
                        return arena.tape_needed();
                    }
                    *count += 1;
                }
            }
        }
        Ok(plain.or(other).map(|(first, module, count)| {
            if count == 1 {
                arena.element(first, module)
            } else {
                XmlValue {
                    arena,
                    el: first,
                    module,
                    shape: Shape::Array,
                }
            }
        }))
    }

    /// Whether ``check_value_keys`` passes key ``name`` (the plain member) given ``text``,
    /// told in one pass over the children (no groups, no module looked up): exactly one
    /// child has the local name ``name``, it has no child element, and its text is
    /// ``text``. Then the lookup's answer is that text (the child is of this object's
    /// module, the plain member) or nothing (it is another module's: ``module:name``, not
    /// the plain member), and either passes. False: [`XmlValue::member`] decides.
    #[inline]
    fn leaf_is(self, name: &str, text: &str) -> bool {
        if self.shape != Shape::Object {
            return false;
        }
        let (fast, name) = (self.arena.fast, name.as_bytes());
        let (mut found, mut count) = (NONE, 0u32);
        let mut child = fast.els[self.el as usize].first;
        while child != NONE {
            let el = &fast.els[child as usize];
            if el.local.1 as usize == name.len() && same_bytes(fast.local(child).as_bytes(), name) {
                found = child;
                count += 1;
            }
            child = el.next;
        }
        count == 1
            && fast.els[found as usize].first == NONE
            && same_bytes(fast.text(found).as_bytes(), text.as_bytes())
    }

    /// An array's elements, as values.
    fn items(self) -> impl Iterator<Item = Self> {
        let arena = self.arena;
        let fast = arena.fast;
        let local = fast.local(self.el).as_bytes();
        let mut at = self.el;
        std::iter::from_fn(move || {
            while at != NONE {
                let el = at;
                at = fast.els[el as usize].next;
                if arena.module(el) == self.module && same_bytes(fast.local(el).as_bytes(), local) {
                    return Some(arena.element(el, self.module));
                }
            }
            None
        })
    }

    /// walk.rs's ``canon`` of this value (an XML document's: text, object or array).
    fn canon(self, canon: &Canon) -> W<Cow<'r, str>> {
        match (canon, self.shape) {
            (Canon::Str, Shape::Text) => Ok(Cow::Borrowed(self.text())),
            (Canon::Int, Shape::Text) => integer_text(self.text()),
            // a converter's: the text, or the reference's QNameText of it (the tape's)
            (Canon::Py(_), Shape::Text) => self.arena.tape_needed(),
            _ => Err(Stop),
        }
    }
}

impl<'d> EditValue<'d> for XmlValue<'_, '_, '_> {
    fn lookup(self, member: &str, qualified: &str) -> W<Option<Self>> {
        self.member(member, Some(qualified))
    }

    fn is_object(self) -> bool {
        self.shape == Shape::Object
    }

    fn one_entry(self) -> W<Option<Self>> {
        match self.shape {
            Shape::Object => Ok(Some(self)),
            Shape::Text => Ok(None),
            Shape::Array => only(self.items().filter(|i| i.shape == Shape::Object)),
        }
    }

    fn check_value_keys(self, run: &mut Run<'_, '_>, step: &Step, keys: &[Cow<'_, str>]) -> W<()> {
        let named = step.keys.iter().filter(|k| !k.positional);
        for (slot, wanted) in named.zip(keys) {
            // (most: one leaf, the target's text)
            if self.leaf_is(&slot.member, wanted) {
                continue;
            }
            // (``dict.get``: the plain member only; never null in XML)
            let Some(given) = self.member(&slot.member, None)? else {
                continue;
            };
            if given.shape == Shape::Text && given.text() == wanted {
                continue;
            }
            let given = given.canon(&slot.canon)?;
            let wanted = canon_text(run, &slot.canon, Cow::Borrowed(wanted))?;
            if given != wanted {
                return Err(Stop);
            }
        }
        Ok(())
    }

    fn passes(self, _run: &mut Run<'_, '_>, step: &Step) -> W<bool> {
        if !self.is_object() {
            return Ok(false);
        }
        for filter in &step.filters {
            if let Some(value) = self.member(&filter.member, Some(&filter.qualified))? {
                if *value.canon(&filter.canon)? != *filter.value {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    fn walk<O: EditOut<'d>>(
        self,
        _run: &mut Run<'_, '_>,
        _branch: &Branch,
        _index: usize,
        _values: &mut Vec<Cow<'d, str>>,
        _out: &mut O,
    ) -> W<()> {
        self.arena.tape_needed()
    }

    fn tape(content: Option<Self>, feed: bool) -> W<Option<V<'d, 'd>>> {
        match content {
            Some(value) if feed => value.arena.tape_needed(),
            _ if feed => Ok(None),
            _ => Ok(None), // the key pass does not read it
        }
    }
}
