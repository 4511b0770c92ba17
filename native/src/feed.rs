//! The instance feed natively (issue 33): per target instance of a JSON push-update, the object
//! ``yangkey.instances.InstanceFeed`` builds (``@path``, ``@op``, the keys, one member per leaf
//! the instance carries, each value's canonical text), written straight as the JSON bytes of
//! the ``yangkey-instances`` header (``orjson.dumps`` of the list). The instances are the key
//! walk's (walk.rs, through its [`Out`] sink), so ``@path`` is one of the key's XPaths by
//! construction, as in the reference. The leaf table (names, members, converters) stays
//! computed in Python: ``yangkey.native.feed_table`` gives it as plain data. Each value's text
//! is feedvalue.rs's; where one is not mirrored the pass stops and the reference answers. An
//! XML document's instances (push-update and yang-patch) come through xmlfeed.rs.

use crate::feedvalue::{conv_of, convert, convert_text, escape, Conv};
use crate::model::local;
use crate::tape::V;
use crate::walk::{removes, render, Branch, EditOut, Made, Out, Run, Stop};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::borrow::Cow;
use std::collections::HashMap;

type W<T> = Result<T, Stop>;

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
