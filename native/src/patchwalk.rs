//! yang-patch keys natively (RFC 8641 section 3.10's push-change-update carrying RFC 8072
//! edits): each edit's target parsed as ``yangkey.notification_model.parse_target`` parses it
//! (RFC 8040 section 3.5.3), matched against each branch's steps and walked as
//! ``yangkey.patch.edit_tree`` builds the data tree and the generated walker reads it: the
//! target's keys as the entry's key leaves, the edit's value below its target (still in the
//! tape, never converted), a target without value as ``walker.DELETED``'s node.
//!
//! The chain ``edit_tree`` makes is one node per target step, so it is read here in a loop; the
//! value's subtree is walked by walk.rs itself. Whatever the reference refuses (a target it
//! cannot parse, the wrong number of keys, a value naming another entry, several entries, a
//! missing key) or that this walk does not mirror exactly (a list step without keys before the
//! value, a keyless list, a data filter that could read a key or the next step's member, a key
//! member given as null, which the reference's per-plan cache reads differently from its first
//! walk) stops the pass: the reference answers and words the error.
//!
//! A child module of walk.rs: it reads the walker's tables as walk.rs does. What an edit's
//! value gives is read through patcharena.rs (the tape, or an XML yang-patch's arena).

use super::keytext::compose_in;
use super::{integer_text, spared, Branch, Canon, Kind, Pooled, Run, Step, Stop, Walker, W};
use crate::pyconv::NameCache;
use crate::tape::{same_name, Node, V};
use patchtarget::{Edit, TargetStep, Targets};
use pyo3::prelude::*;
use std::borrow::Cow;

#[path = "patcharena.rs"]
mod patcharena;
#[path = "patchentry.rs"]
mod patchentry;
#[path = "patchout.rs"]
mod patchout;
#[path = "patchtarget.rs"]
mod patchtarget;
use patcharena::EditValue;
pub(crate) use patcharena::{Arena, ArenaEdits};
pub(crate) use patchout::{EditOut, Made};
pub(crate) use patchtarget::recycle;

/// Whether ``operation`` is one of RFC 8072 section 2.5's edit operations
/// (``notification_model.OPERATIONS``): a match, which tells them by length first
/// (``[&str]::contains`` compared against each in turn, a library call each).
#[inline(always)]
fn is_operation(operation: &str) -> bool {
    matches!(
        operation,
        "create" | "delete" | "insert" | "merge" | "move" | "replace" | "remove"
    )
}

/// Whether an edit of ``operation`` removes its target (its value, if any, is not read).
pub(crate) fn removes(operation: &str) -> bool {
    matches!(operation, "delete" | "remove")
}

/// ``_json_push``'s edits of a yang-patch object: ``edit`` a list (absent: none) of objects
/// with a string target and a known operation; the value kept when it is an object.
fn edits<'d, 'a>(patch: V<'d, 'a>, targets: &mut Targets<'d, 'a>) -> W<()> {
    let Some(list) = patch.get("edit") else {
        return Ok(());
    };
    let Node::Array { len, .. } = list.node() else {
        return Err(Stop);
    };
    let len = len as usize;
    targets.reserve(len);
    for edit in list.items().ok_or(Stop)? {
        if !edit.is_object() {
            return Err(Stop);
        }
        // One scan of its members (the last of a name, as dict.get: only the document's
        // duplicates are refused, and the parse refused them).
        let (mut target, mut operation, mut value) = (None, None, None);
        for (name, member) in edit.members() {
            match name {
                "target" => target = Some(member),
                "operation" => operation = Some(member),
                "value" => value = Some(member),
                _ => {}
            }
        }
        let target = target.and_then(|t| t.as_str()).ok_or(Stop)?;
        let operation = operation.and_then(|o| o.as_str()).ok_or(Stop)?;
        if !is_operation(operation) {
            return Err(Stop);
        }
        let steps = targets.parse(target)?;
        targets.edits.push(Edit {
            steps,
            value: value.filter(|v| v.is_object()),
            operation,
        });
    }
    Ok(())
}

/// The message keys of a yang-patch: [`super::keys`]'s answer, each branch's instances those
/// of every edit (``KeyDeriver.instances`` with ``edits_xpaths``).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub fn patch_keys<'py>(
    py: Python<'py>,
    names: &mut NameCache,
    walker: &Walker,
    patch: V<'_, '_>,
    node: &str,
    subscription_id: u32,
    with_xpaths: bool,
    headers: Option<&mut Vec<Option<Vec<u8>>>>,
) -> W<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let mut targets = Targets::new();
    edits(patch, &mut targets)?;
    edit_keys(
        py,
        names,
        walker,
        &targets,
        None,
        node,
        subscription_id,
        with_xpaths,
        None,
        headers,
        true, // the parse refused any member named twice
    )
}

/// An XML yang-patch's edit (xmlpatch.rs): its target's text (stripped), its operation's, and
/// its value (``XmlConverter.members`` of the value element's children) in the tape, or None
/// when the values are read in the arena ([`ArenaValues`]).
pub struct XmlEdit<'d, 'a> {
    pub target: &'d str,
    pub operation: &'d str,
    pub value: Option<V<'d, 'a>>,
}

/// An XML yang-patch's edit values: in the tape ([`XmlEdit::value`]), or read in place in
/// the fast reader's arena (patcharena.rs), one for each edit (its value element, or None).
pub type ArenaValues<'v, 'x, 'a> = Option<ArenaEdits<'v, 'x, 'a>>;

/// [`patch_keys`] of an XML yang-patch's edits, read as ``_xml_notification`` reads them; its
/// ``prefix:name`` leaves in ``qnames``; with ``headers``, the feed's too (xmlfeed.rs).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub fn xml_patch_keys<'py, 'd, 'a: 'd>(
    py: Python<'py>,
    names: &mut NameCache,
    walker: &Walker,
    xml: impl ExactSizeIterator<Item = XmlEdit<'d, 'a>>,
    arena: ArenaValues<'_, '_, '_>,
    node: &str,
    subscription_id: u32,
    with_xpaths: bool,
    qnames: Option<&super::QNames>,
    headers: Option<&mut Vec<Option<Vec<u8>>>>,
) -> W<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let mut targets = Targets::new();
    targets.edits.reserve(xml.len());
    for edit in xml {
        if !is_operation(edit.operation) {
            return Err(Stop);
        }
        let steps = targets.parse(edit.target)?;
        targets.edits.push(Edit {
            steps,
            value: edit.value,
            operation: edit.operation,
        });
    }
    edit_keys(
        py,
        names,
        walker,
        &targets,
        arena,
        node,
        subscription_id,
        with_xpaths,
        qnames,
        headers,
        false,
    )
}

/// The keys of parsed edits, JSON's or XML's (``unique``: [`Run::unique`]).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn edit_keys<'py>(
    py: Python<'py>,
    names: &mut NameCache,
    walker: &Walker,
    targets: &Targets<'_, '_>,
    arena: ArenaValues<'_, '_, '_>,
    node: &str,
    subscription_id: u32,
    with_xpaths: bool,
    qnames: Option<&super::QNames>,
    headers: Option<&mut Vec<Option<Vec<u8>>>>,
    unique: bool,
) -> W<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    if !crate::model::plain_node_name(node) {
        return Err(Stop);
    }
    // ``headers``: per branch its instance feed's header too, from the same walk (feed.rs)
    let feeds = match (&headers, &walker.feeds) {
        (None, _) => None,
        (Some(_), Some(feeds)) => Some(feeds),
        (Some(_), None) => return Err(Stop),
    };
    let mut run = Run {
        py,
        names,
        qnames,
        unique,
    };
    let keys = targets.values();
    let answer = spared(walker.branches.len(), |per_branch, xpaths, values| {
        let spare = (&mut *per_branch, xpaths, values);
        walk_edits(
            &mut run, walker, targets, &keys, arena, feeds, headers, spare,
        )?;
        compose_in(py, walker, per_branch, node, subscription_id, with_xpaths)
    });
    targets.keep_values(keys);
    answer
}

/// The thread's spare vectors ([`spared`]'s) a walk fills: per branch its XPaths, the spare
/// XPath strings, the open values.
type Spared<'s, 'd> = (
    &'s mut [Vec<String>],
    &'s mut Vec<String>,
    &'s mut Vec<Cow<'d, str>>,
);

/// Per branch the XPaths of every edit's instances into the spare vectors (and with
/// ``feeds``, its instance feed header into ``headers``); ``keys``: the targets' key values.
#[allow(clippy::too_many_arguments)]
fn walk_edits<'d>(
    run: &mut Run<'_, '_>,
    walker: &Walker,
    targets: &Targets<'d, '_>,
    keys: &'d [Cow<'_, str>],
    arena: ArenaValues<'_, '_, '_>,
    feeds: Option<&Vec<crate::feed::Feed>>,
    mut headers: Option<&mut Vec<Option<Vec<u8>>>>,
    (per_branch, xpaths, values): Spared<'_, 'd>,
) -> W<()> {
    for (index, (branch, found)) in walker.branches.iter().zip(per_branch).enumerate() {
        if let (Some(feeds), Some(headers)) = (feeds, headers.as_deref_mut()) {
            if branch
                .steps
                .iter()
                .any(|s| s.keys.iter().any(|k| k.positional))
            {
                return Err(Stop); // the feed's key sources count positions the walk lacks
            }
            let mut sink = feeds[index].sink(found);
            run.edits(branch, targets, keys, arena, values, &mut sink)?;
            headers.push(sink.finish());
        } else {
            let mut out = Pooled {
                found,
                xpaths: &mut *xpaths,
            };
            run.edits(branch, targets, keys, arena, values, &mut out)?;
        }
    }
    Ok(())
}

/// The instance feed headers of a yang-patch (``Decoder.instances``): per branch of ``walker``
/// (built with feeds) its header or None, as [`super::instances`] gives a push-update's.
pub fn patch_instances(
    py: Python<'_>,
    names: &mut NameCache,
    walker: &Walker,
    patch: V<'_, '_>,
) -> W<Vec<Option<Vec<u8>>>> {
    let feeds = walker.feeds.as_ref().ok_or(Stop)?;
    let mut targets = Targets::new();
    edits(patch, &mut targets)?;
    let mut run = Run {
        py,
        names,
        qnames: None,
        unique: true, // a JSON document's edits (the parse refused any member named twice)
    };
    let mut headers = Vec::with_capacity(feeds.len());
    let keys = targets.values();
    let walked = spared(walker.branches.len(), |per_branch, xpaths, values| {
        let spare = (per_branch, xpaths, values);
        let headers = Some(&mut headers);
        walk_edits(
            &mut run,
            walker,
            &targets,
            &keys,
            None,
            Some(feeds),
            headers,
            spare,
        )
    });
    targets.keep_values(keys);
    walked?;
    Ok(headers)
}

/// Whether a target step names ``step``: its qualified member is ``module:name``.
#[inline(always)]
fn names(step: &Step, target: &TargetStep<'_>) -> bool {
    let qualified = step.qualified.as_str();
    let (module, name) = (target.module, target.name);
    // compared inline (same_name), not by two library calls per step and edit
    qualified.len() == module.len() + 1 + name.len()
        && qualified.as_bytes()[module.len()] == b':'
        && same_name(&qualified[..module.len()], module)
        && same_name(&qualified[module.len() + 1..], name)
}

/// Whether a data filter of ``step`` could read what ``edit_tree`` puts in its node besides
/// the value: a key leaf (the target's), or ``next``'s member. Never in a real schema (a
/// filter names a leaf that is no key), but then the walk here would not mirror it.
#[inline(always)]
fn filters_clash(step: &Step, next: Option<&Step>) -> bool {
    // (most steps have no filter: no call of the iterator's ``any`` then)
    !step.filters.is_empty()
        && step.filters.iter().any(|filter| {
            [&filter.member, &filter.qualified].into_iter().any(|name| {
                is_key(step, name)
                    || next.is_some_and(|n| *name == n.member || *name == n.qualified)
            })
        })
}

/// Whether ``step`` (a list) has a key leaf named ``member``.
fn is_key(step: &Step, member: &str) -> bool {
    step.keys
        .iter()
        .any(|k| !k.positional && k.member == member)
}

/// ``canon`` of a key value as the target spells it (a Python ``str`` in the reference).
#[inline(always)]
fn canon_text<'d>(run: &mut Run<'_, '_>, canon: &Canon, text: Cow<'d, str>) -> W<Cow<'d, str>> {
    match canon {
        Canon::Str => Ok(text),
        Canon::Int => Ok(Cow::Owned(integer_text(&text)?.into_owned())),
        Canon::Py(call) => {
            let text = call.bind(run.py).call1((&*text,)).map_err(|_| Stop)?;
            text.extract::<String>().map(Cow::Owned).map_err(|_| Stop)
        }
    }
}

impl Run<'_, '_> {
    /// The instances of every edit of ``targets`` in one branch, into ``out`` (``values``:
    /// [`Run::edit`]'s, emptied after each edit).
    fn edits<'d, O: EditOut<'d>>(
        &mut self,
        branch: &Branch,
        targets: &Targets<'d, '_>,
        keys: &'d [Cow<'_, str>],
        arena: ArenaValues<'_, '_, '_>,
        values: &mut Vec<Cow<'d, str>>,
        out: &mut O,
    ) -> W<()> {
        if branch.steps.is_empty() {
            return Ok(());
        }
        for (at, edit) in targets.edits.iter().enumerate() {
            if arena.is_none() {
                patchentry::ahead(targets, keys, at);
            }
            let target = &targets.steps[edit.steps.0..edit.steps.1];
            let operation = edit.operation;
            match arena {
                None => self.edit(branch, target, keys, edit.value, operation, values, out)?,
                Some(arena) => self.edit(
                    branch,
                    target,
                    keys,
                    arena.value(at),
                    operation,
                    values,
                    out,
                )?,
            }
            values.clear();
        }
        Ok(())
    }

    /// The instances of one edit in one branch: ``edit_tree``'s chain read by the walker.
    #[allow(clippy::too_many_arguments)]
    fn edit<'d, T: EditValue<'d>, O: EditOut<'d>>(
        &mut self,
        branch: &Branch,
        target: &[TargetStep<'_>],
        keys: &'d [Cow<'_, str>],
        value: Option<T>,
        operation: &str,
        values: &mut Vec<Cow<'d, str>>,
        out: &mut O,
    ) -> W<()> {
        let steps = &branch.steps;
        if !O::FEED && branch.entry_chain && target.len() == steps.len() {
            if let Some((from, to)) = target[target.len() - 1].keys {
                return self.entry_edit(branch, target, &keys[from..to], value, values, out);
            }
        }
        let whole = value;
        let depth = target.len().min(steps.len());
        for (step, tstep) in steps.iter().zip(target) {
            if !names(step, tstep) {
                return Ok(()); // edit_tree's None: the target is not on this branch
            }
        }
        let value = if target.len() <= steps.len() {
            value
        } else {
            None
        };
        let keys_of = |range: Option<(usize, usize)>| range.map(|(a, b)| &keys[a..b]);
        let last_level = depth - 1;
        // What edit_tree raises, checked before the walk (which may stop reading earlier),
        // and the final entry's value (its keys checked against the target's).
        let mut item = None;
        for (index, (step, tstep)) in steps.iter().zip(target).enumerate() {
            let last = index == last_level;
            if filters_clash(step, (!last).then(|| &steps[index + 1])) {
                return Err(Stop);
            }
            if step.kind != Kind::List {
                continue;
            }
            match keys_of(tstep.keys) {
                None if last && value.is_some() => {}
                None => return Err(Stop), // the walker's missing key (or a keyless list)
                Some(keys) => {
                    if keys.len() != step.keys.iter().filter(|k| !k.positional).count() {
                        return Err(Stop);
                    }
                    if let (true, Some(value)) = (last, value) {
                        item = value.entry(self, step, keys)?;
                    }
                }
            }
        }
        // The instance feed's objects of this edit: its operation, what it carries (feed.rs)
        let removing = removes(operation);
        if O::FEED {
            let members = under_members(steps, &target[depth..]);
            let content = T::tape(whole.filter(|_| !removing), true)?;
            out.begin(self, operation, &members, content)?;
        }
        // A list entry edit_tree makes (the target's keys, and the value's entry): its key
        // members are no leaf the feed carries (the reference would carry the target's text).
        let entry_ok = |out: &O, step: &Step| {
            !O::FEED
                || removing
                || target.len() > steps.len()
                || !step
                    .keys
                    .iter()
                    .any(|k| !k.positional && out.carries(&k.member))
        };
        // The walk down the chain: each level's node holds the next level's member only
        // (and a list entry the target's keys), until the final one.
        for (index, (step, tstep)) in steps.iter().zip(target).enumerate() {
            let last_step = index + 1 == steps.len();
            let final_level = index == last_level;
            match step.kind {
                // A leaf or leaf-list is the branch's last step (tables() refuses others).
                Kind::Leaf => {
                    // edit_tree sets it (the value's, or ""), or, a key leaf, the entry holds
                    // the target's key
                    let made = if !O::FEED || (index > 0 && is_key(&steps[index - 1], &step.member))
                    {
                        Made::KeyLeaf
                    } else {
                        let content = match value {
                            Some(value) => value.lookup(&step.member, &step.qualified)?,
                            None => None,
                        };
                        match content {
                            Some(content) => Made::Value(T::tape(Some(content), O::FEED)?),
                            None => Made::Text(""),
                        }
                    };
                    return out.made(self, branch, values, made);
                }
                Kind::LeafList => {
                    return match (keys_of(tstep.keys), value) {
                        (Some(keys), _) => self.leaf_list(branch, step, keys, values, out),
                        (None, Some(value)) => value.walk(self, branch, index, values, out),
                        (None, None) => Ok(()),
                    };
                }
                Kind::Container => {
                    if !final_level {
                        continue; // {next member}: no filter reads it (filters_clash)
                    }
                    let Some(value) = value else {
                        // {DELETED}
                        if last_step || !branch.open_after[index + 1] {
                            return out.made(self, branch, values, Made::Value(None));
                        }
                        return Ok(());
                    };
                    let content = value
                        .lookup(&step.member, &step.qualified)?
                        .filter(|c| c.is_object());
                    if let Some(content) = content {
                        if !step.filters.is_empty() && !content.passes(self, step)? {
                            return Ok(());
                        }
                    }
                    if last_step {
                        let content = T::tape(content, O::FEED)?;
                        return out.made(self, branch, values, Made::Value(content));
                    }
                    return match content {
                        Some(content) => content.walk(self, branch, index + 1, values, out),
                        None => Ok(()), // {}: nothing below
                    };
                }
                Kind::List => {
                    let Some(keys) = keys_of(tstep.keys) else {
                        // the final level, with value: the value's entries are the list's
                        return match value {
                            Some(value) => value.walk(self, branch, index, values, out),
                            None => Ok(()),
                        };
                    };
                    let item = if final_level { item } else { None };
                    let mut pinned_ok = true;
                    let mut given = keys.iter();
                    for slot in step.keys.iter().filter(|s| !s.positional) {
                        // The entry's key is the value's when it gives one, checked to be the
                        // target's once canonical (check_value_keys): the same text.
                        let wanted = Cow::Borrowed(&**given.next().ok_or(Stop)?);
                        let text = canon_text(self, &slot.canon, wanted)?;
                        match &slot.pinned {
                            None => values.push(text),
                            Some(pinned) => pinned_ok &= *text == **pinned,
                        }
                    }
                    if !pinned_ok {
                        return Ok(());
                    }
                    if let Some(item) = item {
                        if !step.filters.is_empty() && !item.passes(self, step)? {
                            return Ok(());
                        }
                    }
                    if last_step {
                        if !entry_ok(out, step) {
                            return Err(Stop);
                        }
                        let item = T::tape(item, O::FEED)?;
                        return out.made(self, branch, values, Made::Value(item));
                    }
                    if !final_level {
                        continue;
                    }
                    if value.is_none() && !branch.open_after[index + 1] {
                        if !entry_ok(out, step) {
                            return Err(Stop);
                        }
                        // DELETED
                        return out.made(self, branch, values, Made::Value(None));
                    }
                    let next = &steps[index + 1];
                    if is_key(step, &next.member) {
                        // the entry's key leaf: the target's (or the value's, checked equal)
                        if next.kind != Kind::Leaf {
                            return Err(Stop);
                        }
                        return out.made(self, branch, values, Made::KeyLeaf);
                    }
                    return match item {
                        Some(item) => item.walk(self, branch, index + 1, values, out),
                        None => Ok(()),
                    };
                }
            }
        }
        Ok(())
    }

    /// A leaf-list target's values (``=v1,v2``): the walker's leaf-list loop over them.
    fn leaf_list<'d>(
        &mut self,
        branch: &Branch,
        step: &Step,
        keys: &'d [Cow<'_, str>],
        values: &mut Vec<Cow<'d, str>>,
        out: &mut impl EditOut<'d>,
    ) -> W<()> {
        let slot = step.keys.first().ok_or(Stop)?;
        for key in keys {
            let text = canon_text(self, &slot.canon, Cow::Borrowed(&**key))?;
            match &slot.pinned {
                Some(pinned) => {
                    if *text == **pinned {
                        out.made(self, branch, values, Made::Text(key))?;
                    }
                }
                None => {
                    values.push(text);
                    let taken = out.made(self, branch, values, Made::Text(key));
                    values.pop();
                    taken?;
                }
            }
        }
        Ok(())
    }
}

/// ``InstanceFeed.edit``'s members of a target below the branch's (``beyond``): each one
/// module-qualified where its module differs from the one before (the branch's last step's
/// first), up to the first that names list entries.
fn under_members(steps: &[Step], beyond: &[TargetStep<'_>]) -> Vec<String> {
    let mut members = Vec::new();
    let Some(last) = steps.last() else {
        return members;
    };
    let mut module = last.qualified.split(':').next().unwrap_or_default();
    for tstep in beyond {
        members.push(if tstep.module == module {
            tstep.name.to_owned()
        } else {
            format!("{}:{}", tstep.module, tstep.name)
        });
        module = tstep.module;
        if tstep.keys.is_some() {
            break;
        }
    }
    members
}
