//! Where the yang-patch walk (patchwalk.rs) puts each instance it finds: what ``edit_tree``
//! made there ([`Made`]), and the walk's [`EditOut`]: walk.rs's [`Pooled`] for the key pass
//! (each XPath rendered into a spare string), feed.rs's sink for the instance feed.
//!
//! A child module of patchwalk.rs.

use super::super::{Branch, Out, Pooled, Run, W};
use crate::tape::V;
use std::borrow::Cow;

/// What the entries walker reports as the value of an instance ``edit_tree``'s chain holds,
/// not the tape (the instance feed's, feed.rs).
pub(crate) enum Made<'d, 'a> {
    /// The edit's content there; None: a node that carries nothing (``{DELETED}``, ``{}``, an
    /// entry of the target's keys alone).
    Value(Option<V<'d, 'a>>),
    /// A text: a leaf-list target's value, ``""`` for a leaf the value leaves out.
    Text(&'d str),
    /// A list's key leaf: the target's key text, or the value's (not mirrored in the feed).
    KeyLeaf,
}

/// Where a yang-patch walk puts each instance: its XPath (the key pass), or that and its
/// instance feed object (feed.rs).
pub(crate) trait EditOut<'d>: Out<'d> {
    /// Whether [`EditOut::begin`] and the values of [`EditOut::made`] are read.
    const FEED: bool;
    /// An edit whose target this branch follows begins: its operation, the members of its
    /// target below the branch's (``@under``; empty for none), its value (None for a
    /// delete or remove).
    fn begin(
        &mut self,
        run: &mut Run<'_, '_>,
        operation: &str,
        under: &[String],
        content: Option<V<'_, '_>>,
    ) -> W<()>;
    /// Whether a member of an instance's value is one of the leaves it carries.
    fn carries(&self, member: &str) -> bool;
    /// An instance whose value ``edit_tree`` made.
    fn made(
        &mut self,
        run: &mut Run<'_, '_>,
        branch: &Branch,
        values: &[Cow<'d, str>],
        made: Made<'d, '_>,
    ) -> W<()>;
}

impl<'d> EditOut<'d> for Pooled<'_> {
    const FEED: bool = false;

    fn begin(
        &mut self,
        _run: &mut Run<'_, '_>,
        _operation: &str,
        _under: &[String],
        _content: Option<V<'_, '_>>,
    ) -> W<()> {
        Ok(())
    }

    fn carries(&self, _member: &str) -> bool {
        false
    }

    #[inline]
    fn made(
        &mut self,
        _run: &mut Run<'_, '_>,
        branch: &Branch,
        values: &[Cow<'d, str>],
        _made: Made<'d, '_>,
    ) -> W<()> {
        self.push(branch, values);
        Ok(())
    }
}
