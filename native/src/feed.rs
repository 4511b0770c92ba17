//! The instance feed natively (issue 33): per target instance of a JSON push-update, the object
//! ``yangkey.instances.InstanceFeed`` builds (``@path``, ``@op``, the keys, one member per leaf
//! the instance carries, each value's canonical text), written straight as the JSON bytes of
//! the ``yangkey-instances`` header (``orjson.dumps`` of the list). The instances are the key
//! walk's (walk.rs, through its [`Out`] sink), so ``@path`` is one of the key's XPaths by
//! construction, as in the reference. The leaf table (names, members, converters) stays
//! computed in Python: ``yangkey.native.feed_table`` gives it as plain data. Strings and
//! integers are made canonical here, an ``empty`` leaf and a nested list's JSON text too;
//! every other converter is the reference's callable. Anything else (a value type a converter
//! here does not read, a float in a nested list, a converter that raises) stops the pass: the
//! reference then answers.

use crate::model::{local, py_strip};
use crate::pyconv::to_py;
use crate::tape::{Node, V};
use crate::walk::{removes, render, Branch, EditOut, Made, Out, Run, Stop};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Mutex;

type W<T> = Result<T, Stop>;

/// How one value (a leaf's, a leaf-list item's) becomes its text.
enum Canon {
    /// ``canon_string``.
    Str,
    /// ``yangkey.instances._integer_text``.
    Int,
    /// The reference's converter, called on the Python value; its answer must be a str. Its
    /// answers for strings are remembered (a converter is a function of the value alone:
    /// identities, enumeration-like texts and flags repeat in every instance).
    Py(Py<PyAny>, Mutex<Memo>),
}

/// A converter's answers by the string it was given, at most [`MEMO_MAX`] (then forgotten):
/// a plain string by itself (none with a NUL: [`plain_key`]), an XML ``QNameText`` by its text,
/// a NUL and its ``module:name``.
type Memo = HashMap<String, String>;
const MEMO_MAX: usize = 1024;

fn python(value: &Bound<'_, PyAny>) -> Canon {
    Canon::Py(value.clone().unbind(), Mutex::new(Memo::new()))
}

/// ``yangkey.instances._converter``'s choices.
enum Conv {
    Item(Canon),
    /// An ``empty`` leaf: ``"true"`` whatever the value.
    Empty,
    LeafList(Canon),
    /// A nested list (or anydata): its canonical tree as JSON text.
    Tree,
}

struct Slot {
    /// ``"name":`` as JSON.
    member: Vec<u8>,
    /// The name itself (an edit below the target carries the leaves under its ``@under``).
    name: String,
    conv: Conv,
}

enum Target {
    Slot(usize),
    Plan(Plan),
}

/// ``yangkey.instances._Plan``: member -> leaf, or the plan below a container.
#[derive(Default)]
struct Plan {
    members: HashMap<String, Target>,
}

impl Plan {
    /// Where ``member`` goes: a qualified member the plan lacks by its local name
    /// (``_flatten``'s lookup).
    fn target(&self, member: &str) -> Option<&Target> {
        match self.members.get(member) {
            None if member.contains(':') => self.members.get(local(member)),
            found => found,
        }
    }
}

/// Where a key's value comes from: the walk's open values (by index), or the literal text.
enum KeySource {
    Value(usize),
    Literal(Vec<u8>),
}

type FeedData<'py> = (bool, Vec<(String, Bound<'py, PyAny>)>, Bound<'py, PyList>);

/// One topic's feed: ``yangkey.native.feed_table``'s data.
pub struct Feed {
    leaf_target: bool,
    /// ``"name":`` of each key, and its source.
    keys: Vec<(Vec<u8>, KeySource)>,
    slots: Vec<Slot>,
    plan: Plan,
}

fn canon_of(value: &Bound<'_, PyAny>) -> PyResult<Canon> {
    if let Ok(name) = value.cast::<PyString>() {
        return match name.to_str()? {
            "string" => Ok(Canon::Str),
            "integer" => Ok(Canon::Int),
            other => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "yangkey_native feed: unknown canon {other:?}"
            ))),
        };
    }
    Ok(python(value))
}

fn conv_of(value: &Bound<'_, PyAny>) -> PyResult<Conv> {
    if let Ok(name) = value.cast::<PyString>() {
        return match name.to_str()? {
            "empty" => Ok(Conv::Empty),
            "list" => Ok(Conv::Tree),
            _ => Ok(Conv::Item(canon_of(value)?)),
        };
    }
    if let Ok(pair) = value.cast::<PyTuple>() {
        let (kind, item): (String, Bound<'_, PyAny>) = pair.extract()?;
        if kind == "leaf-list" {
            return Ok(Conv::LeafList(canon_of(&item)?));
        }
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "yangkey_native feed: unknown converter {kind:?}"
        )));
    }
    Ok(Conv::Item(python(value)))
}

fn member_json(name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 3);
    escape(name, &mut out);
    out.push(b':');
    out
}

impl Feed {
    /// ``data``: ``(leaf_target, keys, plan)``: a key ``(name, index or literal)``; a plan a
    /// list of ``(member, (name, converter))`` for a leaf or ``(member, plan)`` below it; a
    /// converter ``"string"``, ``"integer"``, ``"empty"``, ``"list"``, ``("leaf-list",
    /// canon)`` or the reference's callable.
    pub fn new(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (leaf_target, keys, plan): FeedData<'_> = data.extract()?;
        let mut built_keys = Vec::new();
        for (name, source) in keys {
            let source = match source.extract::<usize>() {
                Ok(index) => KeySource::Value(index),
                Err(_) => {
                    let mut text = Vec::new();
                    escape(&source.extract::<String>()?, &mut text);
                    KeySource::Literal(text)
                }
            };
            built_keys.push((member_json(&name), source));
        }
        let mut slots = Vec::new();
        let plan = Self::plan(&plan, &mut slots)?;
        Ok(Feed {
            leaf_target,
            keys: built_keys,
            slots,
            plan,
        })
    }

    fn plan(data: &Bound<'_, PyList>, slots: &mut Vec<Slot>) -> PyResult<Plan> {
        let mut plan = Plan::default();
        for item in data.iter() {
            let (member, target): (String, Bound<'_, PyAny>) = item.extract()?;
            let target = match target.cast::<PyList>() {
                Ok(below) => Target::Plan(Self::plan(below, slots)?),
                Err(_) => {
                    let (name, conv): (String, Bound<'_, PyAny>) = target.extract()?;
                    slots.push(Slot {
                        member: member_json(&name),
                        conv: conv_of(&conv)?,
                        name,
                    });
                    Target::Slot(slots.len() - 1)
                }
            };
            plan.members.insert(member, target);
        }
        Ok(plan)
    }

    /// The branch walked (its XPaths into ``xpaths``, as the key walk puts them) and its feed
    /// header's bytes, or None when it has no instance.
    pub fn walk<'d>(
        &self,
        run: &mut Run<'_, '_>,
        branch: &Branch,
        data: V<'d, '_>,
        values: &mut Vec<Cow<'d, str>>,
        xpaths: &mut Vec<String>,
    ) -> W<Option<Vec<u8>>> {
        if branch.is_empty() {
            return Ok(None);
        }
        let mut sink = self.sink(xpaths);
        run.walk(branch, 0, data, values, &mut sink)?;
        Ok(sink.finish())
    }

    /// The sink of a walk of this feed's branch (a push-update's, or a yang-patch's in
    /// patchwalk.rs: each edit's objects as ``InstanceFeed.edit`` builds them);
    /// [`Sink::finish`] gives the header.
    pub fn sink<'x>(&self, xpaths: &'x mut Vec<String>) -> Sink<'_, 'x> {
        Sink {
            feed: self,
            xpaths,
            out: Vec::new(),
            scratch: Vec::new(),
            carried: Vec::new(),
            at: vec![usize::MAX; self.slots.len()],
            head: b",\"@op\":\"replace\"".to_vec(),
            carrying: true,
            fixed: Vec::new(),
        }
    }
}

/// The walk's [`Out`]: each instance's XPath, and its object written to ``out``.
pub struct Sink<'f, 'x> {
    feed: &'f Feed,
    xpaths: &'x mut Vec<String>,
    out: Vec<u8>,
    /// The converted values of the instance being written, ``carried``'s ranges.
    scratch: Vec<u8>,
    /// (slot, start, end) in first-set order: a dict's insertion order, a later value of the
    /// same leaf (plain and qualified member) replacing the earlier in place.
    carried: Vec<(usize, usize, usize)>,
    /// Per slot its index in ``carried``, or ``usize::MAX``.
    at: Vec<usize>,
    /// ``,"@op":"..."`` (and ``,"@under":"..."``) of the objects being written.
    head: Vec<u8>,
    /// Whether an object carries its instance value's leaves: a push-update's, a yang-patch
    /// edit's at or above the target that deletes nothing; else it carries ``fixed``.
    carrying: bool,
    /// The leaves an edit below the target carries (``,"name":value`` each): the same in
    /// each of its objects.
    fixed: Vec<u8>,
}

impl<'d> Out<'d> for Sink<'_, '_> {
    fn found(
        &mut self,
        run: &mut Run<'_, '_>,
        branch: &Branch,
        values: &[Cow<'d, str>],
        value: V<'d, '_>,
    ) -> W<()> {
        let xpath = render(branch, values);
        self.scratch.clear();
        if self.carrying {
            self.carry(run, value)?;
        }
        self.write(xpath, values)
    }
}

impl Sink<'_, '_> {
    /// ``_carried``: the leaves of an instance's value.
    fn carry(&mut self, run: &mut Run<'_, '_>, value: V<'_, '_>) -> W<()> {
        let feed = self.feed;
        if feed.leaf_target {
            self.put(run, leaf_slot(feed)?, value)?;
        } else if value.is_object() {
            self.flatten(run, &feed.plan, value)?;
        }
        Ok(())
    }

    /// The object of an instance (its XPath, its keys' ``values``), with what ``carried``
    /// holds (its values in ``scratch``) and ``fixed``.
    fn write<'d>(&mut self, xpath: String, values: &[Cow<'d, str>]) -> W<()> {
        let feed = self.feed;
        let out = &mut self.out;
        out.push(if out.is_empty() { b'[' } else { b',' });
        out.extend_from_slice(b"{\"@path\":");
        escape(&xpath, out);
        out.extend_from_slice(&self.head);
        for (member, source) in &feed.keys {
            out.push(b',');
            out.extend_from_slice(member);
            match source {
                KeySource::Value(index) => escape(values.get(*index).ok_or(Stop)?, out),
                KeySource::Literal(text) => out.extend_from_slice(text),
            }
        }
        for &(slot, start, end) in &self.carried {
            out.push(b',');
            out.extend_from_slice(&feed.slots[slot].member);
            out.extend_from_slice(&self.scratch[start..end]);
            self.at[slot] = usize::MAX;
        }
        out.extend_from_slice(&self.fixed);
        out.push(b'}');
        self.carried.clear();
        self.xpaths.push(xpath);
        Ok(())
    }

    /// The header: ``orjson.dumps`` of the objects, or None for none.
    pub fn finish(mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() {
            return None;
        }
        self.out.push(b']');
        Some(self.out)
    }

    /// ``InstanceFeed.edit``'s objects below the target: the leaves of the value
    /// (``content``: one member, whatever its name) placed at ``under``'s members, those named
    /// ``under`` or below it kept, into ``fixed``.
    fn under(
        &mut self,
        run: &mut Run<'_, '_>,
        members: &[String],
        under: &str,
        content: Option<V<'_, '_>>,
    ) -> W<()> {
        self.fixed.clear();
        let Some(content) = content else {
            return Ok(());
        };
        let mut pairs = content.members();
        let (Some((_, value)), None) = (pairs.next(), pairs.next()) else {
            return Ok(()); // not one member: the reference wraps nothing
        };
        let feed = self.feed;
        let mut plan = &feed.plan;
        self.scratch.clear();
        for (index, member) in members.iter().enumerate() {
            let Some(target) = plan.target(member) else {
                return Ok(());
            };
            let last = index + 1 == members.len();
            match target {
                // a leaf above the last member would be given the wrapping object
                Target::Slot(_) if !last => return Err(Stop),
                Target::Slot(slot) => self.put(run, *slot, value)?,
                Target::Plan(below) if last => {
                    if value.is_object() {
                        self.flatten(run, below, value)?;
                    }
                }
                Target::Plan(below) => plan = below,
            }
        }
        for &(slot, start, end) in &self.carried {
            let leaf = &feed.slots[slot];
            let name = leaf.name.as_str();
            if name == under || (name.starts_with(under) && name.as_bytes()[under.len()] == b'.') {
                self.fixed.push(b',');
                self.fixed.extend_from_slice(&leaf.member);
                self.fixed.extend_from_slice(&self.scratch[start..end]);
            }
            self.at[slot] = usize::MAX;
        }
        self.carried.clear();
        self.scratch.clear();
        Ok(())
    }
    /// ``_flatten``: the members the plan names, in data order; a qualified member the plan
    /// lacks read by its local name; anything else ignored.
    fn flatten(&mut self, run: &mut Run<'_, '_>, plan: &Plan, data: V<'_, '_>) -> W<()> {
        for (member, value) in data.members() {
            let Some(target) = plan.target(member) else {
                continue;
            };
            match target {
                Target::Slot(slot) => self.put(run, *slot, value)?,
                Target::Plan(below) => {
                    if value.is_object() {
                        self.flatten(run, below, value)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// ``out[slot.name] = slot.value(value)``.
    fn put(&mut self, run: &mut Run<'_, '_>, slot: usize, value: V<'_, '_>) -> W<()> {
        let start = self.scratch.len();
        convert(run, &self.feed.slots[slot].conv, value, &mut self.scratch)?;
        let end = self.scratch.len();
        match self.at[slot] {
            usize::MAX => {
                self.at[slot] = self.carried.len();
                self.carried.push((slot, start, end));
            }
            index => self.carried[index] = (slot, start, end),
        }
        Ok(())
    }
}

impl<'d> EditOut<'d> for Sink<'_, '_> {
    const FEED: bool = true;

    fn begin(
        &mut self,
        run: &mut Run<'_, '_>,
        operation: &str,
        under: &[String],
        content: Option<V<'_, '_>>,
    ) -> W<()> {
        let removing = removes(operation);
        self.head.clear();
        self.head.extend_from_slice(b",\"@op\":");
        escape(operation, &mut self.head);
        self.carrying = under.is_empty() && !removing;
        if under.is_empty() {
            self.fixed.clear();
            return Ok(());
        }
        if self.feed.leaf_target {
            return Err(Stop); // the reference would convert the wrapping object
        }
        let joined = under.join(".");
        self.head.extend_from_slice(b",\"@under\":");
        escape(&joined, &mut self.head);
        self.under(run, under, &joined, content)
    }

    fn carries(&self, member: &str) -> bool {
        self.feed.plan.target(member).is_some()
    }

    fn made(
        &mut self,
        run: &mut Run<'_, '_>,
        branch: &Branch,
        values: &[Cow<'d, str>],
        made: Made<'d, '_>,
    ) -> W<()> {
        let xpath = render(branch, values);
        self.scratch.clear();
        if self.carrying {
            let leaf_target = self.feed.leaf_target;
            match made {
                Made::Value(Some(value)) => self.carry(run, value)?,
                // a node without value: the reference would convert the node as the leaf
                Made::Value(None) if leaf_target => return Err(Stop),
                Made::Value(None) => {}
                Made::Text(text) if leaf_target => {
                    let slot = leaf_slot(self.feed)?;
                    let start = self.scratch.len();
                    convert_text(run, &self.feed.slots[slot].conv, text, &mut self.scratch)?;
                    self.carried.push((slot, start, self.scratch.len()));
                    self.at[slot] = self.carried.len() - 1;
                }
                Made::Text(_) | Made::KeyLeaf => return Err(Stop),
            }
        }
        self.write(xpath, values)
    }
}

/// A leaf or leaf-list target's one leaf.
fn leaf_slot(feed: &Feed) -> W<usize> {
    match feed.plan.members.get("") {
        Some(Target::Slot(slot)) => Ok(*slot),
        _ => Err(Stop),
    }
}

/// A text's converted value (a target's key text, ``""``): as [`convert`] of a string.
fn convert_text(run: &mut Run<'_, '_>, conv: &Conv, text: &str, out: &mut Vec<u8>) -> W<()> {
    match conv {
        Conv::Item(Canon::Str) => escape(text, out),
        Conv::Item(Canon::Int) => escape(py_strip(text), out),
        Conv::Item(Canon::Py(call, memo)) => {
            let arg = PyString::new(run.py, text).into_any();
            escape(&py_text(run, call, memo, plain_key(text), arg)?, out)
        }
        Conv::Empty => out.extend_from_slice(b"\"true\""),
        Conv::LeafList(_) | Conv::Tree => return Err(Stop),
    }
    Ok(())
}

/// The reference's converter called on ``arg`` (``given``: its text, when a string: its
/// answers are remembered).
fn py_text(
    run: &mut Run<'_, '_>,
    call: &Py<PyAny>,
    memo: &Mutex<Memo>,
    given: Option<&str>,
    arg: Bound<'_, PyAny>,
) -> W<String> {
    if let (Some(given), Ok(memo)) = (given, memo.try_lock()) {
        if let Some(known) = memo.get(given) {
            return Ok(known.clone());
        }
    }
    let answer = call.bind(run.py).call1((arg,)).map_err(|_| Stop)?;
    let answer = answer.cast_into::<PyString>().map_err(|_| Stop)?;
    let answer = answer.to_str().map_err(|_| Stop)?.to_owned();
    // try_lock: another thread in this walker (it let this one in while Python ran)
    if let (Some(given), Ok(mut memo)) = (given, memo.try_lock()) {
        if memo.len() >= MEMO_MAX {
            memo.clear();
        }
        memo.insert(given.to_owned(), answer.clone());
    }
    Ok(answer)
}

/// One value's text (``Canon``), or stop where the reference's converter would raise or
/// where it is not mirrored here.
fn text<'d>(run: &mut Run<'_, '_>, canon: &Canon, value: V<'d, '_>) -> W<Cow<'d, str>> {
    match (canon, value.node()) {
        (Canon::Str | Canon::Int, Node::Int(n)) => Ok(Cow::Owned(n.to_string())),
        (Canon::Str | Canon::Int, Node::UInt(n)) => Ok(Cow::Owned(n.to_string())),
        (Canon::Str, Node::Str(_)) => Ok(Cow::Borrowed(value.as_str().unwrap_or_default())),
        (Canon::Str, Node::Bool(b)) => Ok(Cow::Borrowed(if b { "true" } else { "false" })),
        (Canon::Str, Node::Array { len: 1, .. }) if empty_marker(value) => Ok(Cow::Borrowed("")),
        // ``_integer_text`` strips a plain str only: a ``QNameText`` goes to
        // ``canon_integer``, not mirrored here
        (Canon::Int, Node::Str(_)) if qname(run, value).is_some() => Err(Stop),
        (Canon::Int, Node::Str(_)) => {
            Ok(Cow::Borrowed(py_strip(value.as_str().unwrap_or_default())))
        }
        // An XML document's element with children: the reference's converter is given a
        // dict (of ``QNameText`` leaves, maybe): not mirrored
        (Canon::Py(_, _), Node::Object { .. } | Node::Array { .. }) if run.qnames.is_some() => {
            Err(Stop)
        }
        (Canon::Py(call, memo), Node::Str(_)) if qname(run, value).is_some() => {
            let (class, module_value) = qname(run, value).ok_or(Stop)?;
            let text = value.as_str().unwrap_or_default();
            // The same text is another value where its prefix is bound to another namespace:
            // remembered by both, apart from the plain strings' keys (none has a NUL).
            let given = format!("{text}\0{module_value}");
            if let Ok(memo) = memo.try_lock() {
                if let Some(known) = memo.get(&given) {
                    return Ok(Cow::Owned(known.clone()));
                }
            }
            let arg = class
                .bind(run.py)
                .call1((text, &**module_value))
                .map_err(|_| Stop)?;
            Ok(Cow::Owned(py_text(run, call, memo, Some(&given), arg)?))
        }
        (Canon::Py(call, memo), node) => {
            let given = match node {
                Node::Str(_) => value.as_str().and_then(plain_key),
                _ => None,
            };
            if let (Some(given), Ok(memo)) = (given, memo.try_lock()) {
                if let Some(known) = memo.get(given) {
                    return Ok(Cow::Owned(known.clone()));
                }
            }
            let arg = to_py(run.py, value, run.names).map_err(|_| Stop)?;
            Ok(Cow::Owned(py_text(run, call, memo, given, arg)?))
        }
        _ => Err(Stop),
    }
}

/// A plain string as its converter memo's key: not one with a NUL (the keys of ``QNameText``
/// values have one).
fn plain_key(text: &str) -> Option<&str> {
    (memchr::memchr(0, text.as_bytes()).is_none()).then_some(text)
}

/// An XML document's leaf whose text the reference holds as a ``QNameText``
/// (``XmlConverter.leaf``: ``prefix:name``, the prefix in scope and bound to a namespace of
/// the map): the class, and the ``module:name`` it carries.
fn qname<'r>(run: &'r Run<'_, '_>, value: V<'_, '_>) -> Option<(&'r Py<PyAny>, &'r Rc<str>)> {
    let qnames = run.qnames?;
    let found = qnames
        .at
        .binary_search_by_key(&value.at, |(at, _)| *at)
        .ok()?;
    Some((&qnames.class, &qnames.at[found].1))
}

/// RFC 7951's ``[null]``.
fn empty_marker(value: V<'_, '_>) -> bool {
    let mut items = value.items().into_iter().flatten();
    matches!((items.next(), items.next()), (Some(item), None) if item.is_null())
}

/// ``_entries``: a list's items, or the value alone.
fn entries<'d, 'a>(value: V<'d, 'a>) -> Vec<V<'d, 'a>> {
    match value.items() {
        Some(items) => items.collect(),
        None => vec![value],
    }
}

fn convert(run: &mut Run<'_, '_>, conv: &Conv, value: V<'_, '_>, out: &mut Vec<u8>) -> W<()> {
    match conv {
        Conv::Item(canon) => escape(&text(run, canon, value)?, out),
        Conv::Empty => out.extend_from_slice(b"\"true\""),
        Conv::LeafList(canon) => {
            out.push(b'[');
            for (index, item) in entries(value).into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                escape(&text(run, canon, item)?, out);
            }
            out.push(b']');
        }
        Conv::Tree => {
            let mut inner = Vec::new();
            if value.items().is_some() {
                tree(value, &mut inner)?;
            } else {
                inner.push(b'[');
                tree(value, &mut inner)?;
                inner.push(b']');
            }
            // SAFETY-free: the text written is JSON of UTF-8 strings and ASCII, so UTF-8.
            escape(std::str::from_utf8(&inner).map_err(|_| Stop)?, out);
        }
    }
    Ok(())
}

/// ``orjson.dumps(_canonical_tree(value))``: members sorted by code point (UTF-8 byte order),
/// every scalar as text; a float (Python's ``repr``) is not mirrored: stop.
fn tree(value: V<'_, '_>, out: &mut Vec<u8>) -> W<()> {
    match value.node() {
        Node::Object { .. } => {
            let mut members: Vec<(&str, V<'_, '_>)> = value.members().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (index, (member, item)) in members.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                escape(member, out);
                out.push(b':');
                tree(item, out)?;
            }
            out.push(b'}');
        }
        Node::Array { .. } => {
            if empty_marker(value) {
                out.extend_from_slice(b"\"\"");
            } else {
                out.push(b'[');
                for (index, item) in value.items().into_iter().flatten().enumerate() {
                    if index > 0 {
                        out.push(b',');
                    }
                    tree(item, out)?;
                }
                out.push(b']');
            }
        }
        Node::Bool(b) => out.extend_from_slice(if b { b"\"true\"" } else { b"\"false\"" }),
        Node::Null => out.extend_from_slice(b"\"None\""),
        Node::Int(n) => escape(&n.to_string(), out),
        Node::UInt(n) => escape(&n.to_string(), out),
        Node::Str(_) => escape(value.as_str().unwrap_or_default(), out),
        Node::Float(_) => return Err(Stop),
    }
    Ok(())
}

/// A JSON string as ``orjson.dumps`` writes it: ``"`` and ``\`` escaped, the control
/// characters below U+0020 as ``\b \t \n \f \r`` or ``\u00xx``, everything else as is (UTF-8).
pub fn escape(text: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(text.len() + 2);
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    // Eight bytes at a time past those that need no escape (most text): the words before the
    // first with a byte below U+0020, a '"' or a '\\' are copied as they are (below).
    let mut clean = 0;
    while clean + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[clean..clean + 8].try_into().unwrap_or_default());
        if needs_escape(word) {
            break;
        }
        clean += 8;
    }
    for (index, &byte) in bytes.iter().enumerate().skip(clean) {
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => &[],
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..index]);
        start = index + 1;
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(byte >> 4) as usize]);
            out.push(HEX[(byte & 15) as usize]);
        } else {
            out.extend_from_slice(short);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether any byte of ``word`` is below 0x20, '"' or '\\' (exact for the word: the
/// zero-byte and less-than tests may flag a byte above a true match, never a word without).
#[inline]
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let below = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    (below | zero(word ^ (ONES * b'"' as u64)) | zero(word ^ (ONES * b'\\' as u64))) != 0
}

#[cfg(test)]
mod tests {
    use super::needs_escape;

    /// The word test against the byte rule, for every byte value in every position of
    /// words otherwise clean, and words mixing two arbitrary bytes.
    #[test]
    fn needs_escape_is_the_byte_rule() {
        let rule = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        for position in 0..8 {
            for byte in 0..=255u8 {
                let mut bytes = *b"abcdefgh";
                bytes[position] = byte;
                assert_eq!(needs_escape(u64::from_le_bytes(bytes)), rule(byte));
                for other in [0u8, 0x1f, 0x20, 0x21, b'"', b'\\', 0x7f, 0x80, 0xff] {
                    let mut two = bytes;
                    two[(position + 3) % 8] = other;
                    let want = two.iter().any(|&b| rule(b));
                    assert_eq!(needs_escape(u64::from_le_bytes(two)), want);
                }
            }
        }
    }
}
