//! The commonest yang-patch edit the short way (patchwalk.rs's walk): a target naming one
//! entry of the list a branch ends in (``/module:container/list=k1,k2``), its value that
//! entry (``{"module:list": [{...}]}``). ``edit_tree`` makes the chain of the target's steps,
//! the entry holding the target's keys, and checks the value's entry against them
//! (``_one_entry``, ``_check_value_keys``); the walker finds one instance, of the target's
//! keys. Here that is one loop over the names, the value's check, and the keys pushed: none
//! of ``Run::edit``'s general loops over the kinds of steps, filters and levels below.
//!
//! And the walk's reads of the values ahead of it ([`ahead`]): when the walk comes to an
//! edit, after the framing of every edit, its value's nodes and text are far out of the L1
//! cache, and reading them was a chain of loads each waiting on the last.
//!
//! A child module of patchwalk.rs.

use super::super::{Branch, Run, Stop, W};
use super::patcharena::EditValue;
use super::patchtarget::{TargetStep, Targets};
use super::{canon_text, names, EditOut, Made};
use crate::tape::Node;
use std::borrow::Cow;

impl Run<'_, '_> {
    /// ``Run::edit`` of an edit whose target names an entry of the list a
    /// [`Branch::entry_chain`] ends in (its steps as many as the branch's), for the key pass:
    /// the steps' names, the key count, the value's entry checked, then the target's keys
    /// are the instance's values. What ``edit`` does there, its general loops skipped: no
    /// filter to clash or pass, no level below the entry, and the key pass reads no content.
    #[inline(always)]
    pub(super) fn entry_edit<'d, T: EditValue<'d>, O: EditOut<'d>>(
        &mut self,
        branch: &Branch,
        target: &[TargetStep<'_>],
        keys: &'d [Cow<'_, str>],
        value: Option<T>,
        values: &mut Vec<Cow<'d, str>>,
        out: &mut O,
    ) -> W<()> {
        let steps = &branch.steps;
        for (step, tstep) in steps.iter().zip(target) {
            if !names(step, tstep) {
                return Ok(()); // edit_tree's None: the target is not on this branch
            }
        }
        let list = &steps[steps.len() - 1];
        if keys.len() != list.keys.len() {
            return Err(Stop); // (no key is positional)
        }
        if let Some(value) = value {
            value.entry(self, list, keys)?;
        }
        let mut pinned_ok = true;
        for (slot, key) in list.keys.iter().zip(keys) {
            let text = canon_text(self, &slot.canon, Cow::Borrowed(&**key))?;
            match &slot.pinned {
                None => values.push(text),
                Some(pinned) => pinned_ok &= *text == **pinned,
            }
        }
        if !pinned_ok {
            return Ok(());
        }
        out.made(self, branch, values, Made::Value(None))
    }
}

/// The walk's reads of an edit's value ahead of it, by prefetches (no load waits on them):
/// the tape of the value 8 edits on, the text of its first names 4 edits on (their nodes
/// then in the cache). Read when the walk comes to them, they were a chain of loads each
/// waiting on the last, far out of the L1 cache (the framing read them long before).
#[inline(always)]
pub(super) fn ahead(targets: &Targets<'_, '_>, keys: &[Cow<'_, str>], at: usize) {
    let edits = &targets.edits;
    if let Some(value) = edits.get(at + 8).and_then(|e| e.value) {
        let node = value.doc.nodes.as_ptr().wrapping_add(value.at);
        prefetch(node as *const u8);
        prefetch(node.wrapping_add(4) as *const u8);
    }
    let Some(edit) = edits.get(at + 4) else {
        return;
    };
    // the target's last key, which the value's is compared with
    let last = targets.steps.get(edit.steps.1.wrapping_sub(1));
    if let Some(key) = last
        .and_then(|s| s.keys)
        .and_then(|(from, _)| keys.get(from))
    {
        prefetch(key.as_ptr());
    }
    if let Some(value) = edit.value {
        // the value's member, its entry's first member and that one's value (``{"list":
        // [{"key": "text"``): names and text one after the other in the document
        for node in value
            .doc
            .nodes
            .get(value.at + 1..value.at + 6)
            .unwrap_or_default()
        {
            if let Node::Str(text) = *node {
                prefetch(value.doc.text(text).as_ptr());
            }
        }
    }
}

/// A prefetch of the cache line at ``p`` (none on other targets than x86_64).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing (an address outside any mapping is ignored).
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
