//! Phase 3 natively (issue 33, phase B): the walk of a compiled subscription's branches over a
//! parsed JSON document (the tape), the canonical key values, the filled templates and the
//! message key's bytes. It mirrors ``yangkey.walker``'s generated walkers and
//! ``yangkey.keys.KeyDeriver.derive``'s hot path; the tables are ``yangkey.native.tables``'s
//! plain data of a ``CompiledSubscription``. Whatever the reference would refuse, or that
//! this walk does not read exactly (a missing key, a value type the native canons leave to
//! Python, no instance found), stops it: the caller then runs the reference, which answers
//! and words the error. So a native answer is always the reference's answer.
//!
//! Its child modules: walktables.rs (the walker's tables), keytext.rs (the XPaths rendered,
//! sorted and joined into the key), patchwalk.rs (the same walk over a yang-patch's edits).

use crate::model::{plain_node_name, py_strip};
use crate::pyconv::{to_py, NameCache};
use crate::tape::{same_name, Node, V};
use pyo3::prelude::*;
use std::borrow::Cow;

#[path = "keytext.rs"]
mod keytext;
#[path = "patchwalk.rs"]
mod patchwalk;
#[path = "walktables.rs"]
mod tables;
pub(crate) use keytext::render;
use keytext::{compose_in, render_into};
use patchwalk::recycle;
pub use patchwalk::{patch_instances, patch_keys, xml_patch_keys, XmlEdit};
pub(crate) use patchwalk::{removes, EditOut, Made};
pub(crate) use patchwalk::{Arena, ArenaEdits};
pub use tables::Walker;
pub(crate) use tables::{Branch, Canon, Kind, Step};

/// The walk leaves this notification to the reference.
pub struct Stop;

type W<T> = Result<T, Stop>;

/// ``lookup``: the plain member, else the qualified one; each the last of its name, a JSON
/// null as absent (``dict.get(...) is None``). The members read once, not once per spelling
/// (a value's members are mostly qualified: the plain spelling missed, then a second scan
/// found it).
#[inline]
fn lookup<'d, 'a>(node: V<'d, 'a>, member: &str, qualified: &str) -> Option<V<'d, 'a>> {
    let (mut plain, mut other) = (None, None);
    for (name, value) in node.members() {
        if same_name(name, member) {
            plain = Some(value);
        } else if same_name(name, qualified) {
            other = Some(value);
        }
    }
    let present = |v: Option<V<'d, 'a>>| v.filter(|v| !v.is_null());
    present(plain).or_else(|| present(other))
}

/// [`lookup`] of an object none of whose names is given twice (a JSON document's: its parse
/// refused any that was, [`Run::unique`]): the scan stops at the plain member when it is no
/// null, or once both spellings were seen (a null plain member leaves the answer to the
/// qualified one, wherever it is). A push-update's entries name their members plainly: the
/// scan mostly ends at the key, the entry's other members unread. Out of line: inlined at
/// the walk's three lookups it cost the XML yang-patch (which never takes it) 4-9% by wall
/// clock at 1 instance, the same instructions (code placement).
#[inline(never)]
fn lookup_first<'d, 'a>(node: V<'d, 'a>, member: &str, qualified: &str) -> Option<V<'d, 'a>> {
    let (mut null_plain, mut other) = (false, None);
    for (name, value) in node.members() {
        if same_name(name, member) {
            if !value.is_null() {
                return Some(value);
            }
            if other.is_some() {
                break;
            }
            null_plain = true;
        } else if same_name(name, qualified) {
            other = Some(value);
            if null_plain {
                break;
            }
        }
    }
    other.filter(|v| !v.is_null())
}

/// ``canon_integer`` of text: stripped as ``str.strip`` strips, then ``[+-]?[0-9]+`` exactly,
/// written as ``str(int(text))`` (past ``int``'s 4300 digits the reference raises: stop).
fn integer_text(text: &str) -> W<Cow<'_, str>> {
    let text = py_strip(text);
    if text.len() > 4000 {
        return Err(Stop);
    }
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Stop);
    }
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(Cow::Borrowed("0"));
    }
    Ok(if negative {
        Cow::Owned(format!("-{digits}"))
    } else {
        Cow::Borrowed(digits)
    })
}

pub(crate) struct Run<'py, 'n> {
    pub py: Python<'py>,
    pub names: &'n mut NameCache,
    /// An XML document's ``prefix:name`` leaves (xmlkeys.rs): what a converter is handed
    /// for them, as the reference's tree holds them.
    pub qnames: Option<&'n QNames>,
    /// Whether no object of the tape names a member twice (a JSON document, whose parse
    /// refused any that did): a member is then found by its first name, the scan stopping
    /// there (``dict.get`` takes the last).
    pub unique: bool,
}

/// The leaves of an XML document's tape whose text is ``prefix:name`` with a prefix in
/// scope of a known namespace: the reference's tree holds a ``QNameText`` there (its
/// ``module_value`` what an identityref converter answers). By tape index, ascending.
pub struct QNames {
    pub class: Py<PyAny>,
    pub at: Vec<(usize, std::rc::Rc<str>)>,
}

/// Where the walk puts each instance it finds: its XPath (the key pass), or that and its
/// instance feed object (feed.rs). ``value`` is what the entries walker reports as its value.
pub(crate) trait Out<'d> {
    fn found(
        &mut self,
        run: &mut Run<'_, '_>,
        branch: &Branch,
        values: &[Cow<'d, str>],
        value: V<'d, '_>,
    ) -> W<()>;
}

impl Run<'_, '_> {
    /// [`lookup`], or [`lookup_first`] in a tape of unique names ([`Run::unique`]).
    #[inline]
    fn lookup<'d, 'a>(&self, node: V<'d, 'a>, member: &str, qualified: &str) -> Option<V<'d, 'a>> {
        if self.unique {
            lookup_first(node, member, qualified)
        } else {
            lookup(node, member, qualified)
        }
    }

    fn canon<'d>(&mut self, canon: &Canon, value: V<'d, '_>) -> W<Cow<'d, str>> {
        match (canon, value.node()) {
            (Canon::Str | Canon::Int, Node::Int(n)) => Ok(Cow::Owned(n.to_string())),
            (Canon::Str | Canon::Int, Node::UInt(n)) => Ok(Cow::Owned(n.to_string())),
            (Canon::Str, Node::Str(_)) => Ok(Cow::Borrowed(value.as_str().unwrap_or_default())),
            (Canon::Str, Node::Bool(b)) => Ok(Cow::Borrowed(if b { "true" } else { "false" })),
            (Canon::Int, Node::Str(_)) => integer_text(value.as_str().unwrap_or_default()),
            // An XML document's tape leaves out what no walk reads: a key or filter value
            // with element children is not the reference's whole tree (which its converters
            // refuse): the reference answers.
            (Canon::Py(_), Node::Object { .. } | Node::Array { .. }) if self.qnames.is_some() => {
                Err(Stop)
            }
            (Canon::Py(call), _) => {
                let qname = self.qnames.and_then(|q| {
                    let found = q.at.binary_search_by_key(&value.at, |(at, _)| *at).ok()?;
                    Some((&q.class, &q.at[found].1))
                });
                let arg = match qname {
                    Some((class, module_value)) => {
                        let text = value.as_str().unwrap_or_default();
                        class
                            .bind(self.py)
                            .call1((text, &**module_value))
                            .map_err(|_| Stop)?
                    }
                    None => to_py(self.py, value, self.names).map_err(|_| Stop)?,
                };
                let text = call.bind(self.py).call1((arg,)).map_err(|_| Stop)?;
                text.extract::<String>().map(Cow::Owned).map_err(|_| Stop)
            }
            _ => Err(Stop),
        }
    }

    /// ``passes_filters``.
    fn passes(&mut self, entry: V<'_, '_>, step: &Step) -> W<bool> {
        if !entry.is_object() {
            return Ok(false);
        }
        for filter in &step.filters {
            if let Some(value) = self.lookup(entry, &filter.member, &filter.qualified) {
                if *self.canon(&filter.canon, value)? != *filter.value {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The walker of one branch from step ``index`` on, below ``parent``; ``values`` holds
    /// the open placeholders' values so far. A return is the generated walker's ``continue``
    /// of the innermost list loop (or its ``return`` outside any).
    pub(crate) fn walk<'d>(
        &mut self,
        branch: &Branch,
        index: usize,
        parent: V<'d, '_>,
        values: &mut Vec<Cow<'d, str>>,
        out: &mut impl Out<'d>,
    ) -> W<()> {
        let step = &branch.steps[index];
        let last = index + 1 == branch.steps.len();
        let Some(child) = self.lookup(parent, &step.member, &step.qualified) else {
            return Ok(());
        };
        match step.kind {
            Kind::Leaf => out.found(self, branch, values, child)?,
            Kind::Container => {
                if !step.filters.is_empty() && !self.passes(child, step)? {
                    return Ok(());
                }
                if last {
                    out.found(self, branch, values, child)?;
                } else if child.is_object() {
                    self.walk(branch, index + 1, child, values, out)?;
                }
            }
            Kind::LeafList => {
                if !last {
                    return Err(Stop);
                }
                let slot = step.keys.first().ok_or(Stop)?;
                for item in items(child) {
                    let text = self.canon(&slot.canon, item)?;
                    match &slot.pinned {
                        Some(pinned) => {
                            if *text == **pinned {
                                out.found(self, branch, values, item)?;
                            }
                        }
                        None => {
                            values.push(text);
                            let taken = out.found(self, branch, values, item);
                            values.pop();
                            taken?;
                        }
                    }
                }
            }
            Kind::List => {
                for (position, entry) in items(child).enumerate() {
                    let depth = values.len();
                    let taken =
                        self.entry(branch, index, step, last, entry, position + 1, values, out);
                    values.truncate(depth);
                    taken?;
                }
            }
        }
        Ok(())
    }

    /// One entry of a list step: its keys read (a missing one stops the walk: the reference
    /// raises), canonicalized, compared with pinned values, its filters, then the steps below.
    #[allow(clippy::too_many_arguments)]
    fn entry<'d>(
        &mut self,
        branch: &Branch,
        index: usize,
        step: &Step,
        last: bool,
        entry: V<'d, '_>,
        position: usize,
        values: &mut Vec<Cow<'d, str>>,
        out: &mut impl Out<'d>,
    ) -> W<()> {
        if !entry.is_object() {
            return Ok(()); // the reference's TypeError / type check: continue
        }
        for slot in step.keys.iter().filter(|s| s.positional) {
            let _ = slot;
            values.push(Cow::Owned(position.to_string()));
        }
        // Read and canonicalized in one loop (no vector per entry): a missing key and a value
        // the canons refuse both stop the walk, whichever comes first.
        let mut pinned_ok = true;
        for slot in step.keys.iter().filter(|s| !s.positional) {
            let raw = self
                .lookup(entry, &slot.member, &slot.qualified)
                .ok_or(Stop)?;
            let text = self.canon(&slot.canon, raw)?;
            match &slot.pinned {
                None => values.push(text),
                Some(pinned) => pinned_ok &= *text == **pinned,
            }
        }
        if !pinned_ok {
            return Ok(());
        }
        if !step.filters.is_empty() && !self.passes(entry, step)? {
            return Ok(());
        }
        if last {
            out.found(self, branch, values, entry)
        } else {
            self.walk(branch, index + 1, entry, values, out)
        }
    }
}

/// A list's items, or the value alone (``if type(x) is not list: x = [x]``). One iterator
/// type for both, not a boxed one: that was an allocation and release per list walked.
fn items<'d, 'a>(value: V<'d, 'a>) -> crate::tape::Items<'d, 'a> {
    value.items().unwrap_or_else(|| value.alone())
}

/// Per branch the instance feed header of a push-update's data (``Decoder.instances``): None
/// for a branch without an instance; stops where the reference's feed would not be mirrored.
/// ``qnames``: an XML document's ``prefix:name`` leaves, as [`keys_with`] takes them.
pub fn instances(
    py: Python<'_>,
    names: &mut NameCache,
    walker: &Walker,
    data: V<'_, '_>,
    qnames: Option<&QNames>,
) -> W<Vec<Option<Vec<u8>>>> {
    let feeds = walker.feeds.as_ref().ok_or(Stop)?;
    let mut run = Run {
        py,
        names,
        qnames,
        unique: false,
    };
    let mut headers = Vec::with_capacity(feeds.len());
    spared(walker.branches.len(), |per_branch, _, values| {
        for ((branch, feed), found) in walker.branches.iter().zip(feeds).zip(per_branch) {
            headers.push(feed.walk(&mut run, branch, data, values, found)?);
        }
        Ok(())
    })?;
    Ok(headers)
}

/// The message keys of a push-update's data: ``(key, branch_keys)``, the key of every
/// instance and per branch its key or None (no instance there). Stops where
/// ``KeyDeriver.derive`` would leave its hot path or raise.
#[allow(clippy::too_many_arguments)]
pub fn keys<'py>(
    py: Python<'py>,
    names: &mut NameCache,
    walker: &Walker,
    data: V<'_, '_>,
    node: &str,
    subscription_id: u32,
    with_xpaths: bool,
    headers: Option<&mut Vec<Option<Vec<u8>>>>,
) -> W<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    keys_with(
        py,
        names,
        walker,
        data,
        node,
        subscription_id,
        with_xpaths,
        headers,
        None,
    )
}

/// [`keys`] of a tape an XML document was converted into, with its ``prefix:name`` leaves
/// (``qnames``; None: a JSON document's tape, [`Run::unique`]).
#[allow(clippy::too_many_arguments)]
pub fn keys_with<'py>(
    py: Python<'py>,
    names: &mut NameCache,
    walker: &Walker,
    data: V<'_, '_>,
    node: &str,
    subscription_id: u32,
    with_xpaths: bool,
    mut headers: Option<&mut Vec<Option<Vec<u8>>>>,
    qnames: Option<&QNames>,
) -> W<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    if !plain_node_name(node) {
        return Err(Stop);
    }
    // ``headers``: per branch its instance feed's header too, in the same walk (feed.rs)
    let feeds = match (&headers, &walker.feeds) {
        (None, _) => None,
        (Some(_), Some(feeds)) => Some(feeds),
        (Some(_), None) => return Err(Stop),
    };
    let mut run = Run {
        py,
        names,
        qnames,
        // without ``prefix:name`` leaves, a JSON document: its parse refused any member
        // named twice
        unique: qnames.is_none(),
    };
    spared(walker.branches.len(), |per_branch, xpaths, values| {
        for (index, (branch, found)) in walker.branches.iter().zip(&mut *per_branch).enumerate() {
            if let (Some(feeds), Some(headers)) = (feeds, headers.as_deref_mut()) {
                let feed = &feeds[index];
                headers.push(feed.walk(&mut run, branch, data, values, found)?);
            } else if !branch.steps.is_empty() {
                let mut out = Pooled { found, xpaths };
                run.walk(branch, 0, data, values, &mut out)?;
            }
        }
        compose_in(py, walker, per_branch, node, subscription_id, with_xpaths)
    })
}

/// ``pass`` over the thread's spare vectors ([`Spare`]): per branch of ``count`` an empty
/// vector for its XPaths, the spare XPath strings ([`Pooled`] renders into them), an empty
/// vector for the open values; all emptied and kept after it (whatever it answers) for the
/// thread's next pass. A fresh set for a pass inside a pass (a converter's Python code
/// calling the decoder). The key pass's and the yang-patch walk's (patchwalk.rs).
pub(crate) fn spared<'d, T>(
    count: usize,
    pass: impl FnOnce(&mut [Vec<String>], &mut Vec<String>, &mut Vec<Cow<'d, str>>) -> W<T>,
) -> W<T> {
    let run = |spare: &mut Spare| {
        spare.ready(count);
        let mut values = recycle(std::mem::take(&mut spare.values));
        let answer = pass(
            &mut spare.per_branch[..count],
            &mut spare.xpaths,
            &mut values,
        );
        spare.values = recycle(values);
        spare.keep(count);
        answer
    };
    SPARE.with(|spare| match spare.try_borrow_mut() {
        Ok(mut spare) => run(&mut spare),
        Err(_) => run(&mut Spare::new()),
    })
}

/// The per-thread vectors of [`spared`], kept emptied from one notification to the next:
/// per branch its XPaths' vector, the XPaths' strings, the open values.
struct Spare {
    per_branch: Vec<Vec<String>>,
    xpaths: Vec<String>,
    values: Vec<Cow<'static, str>>,
}

/// What [`Spare`] keeps at most: vectors' and strings' capacities, strings kept.
const SPARE_CAP: usize = 1 << 12;

thread_local! {
    static SPARE: std::cell::RefCell<Spare> = const { std::cell::RefCell::new(Spare::new()) };
}

impl Spare {
    const fn new() -> Spare {
        Spare {
            per_branch: Vec::new(),
            xpaths: Vec::new(),
            values: Vec::new(),
        }
    }

    /// An empty vector for each of ``count`` branches (a pass that panicked may have left
    /// XPaths in them).
    #[inline(always)]
    fn ready(&mut self, count: usize) {
        if self.per_branch.len() < count {
            self.per_branch.resize_with(count, Vec::new);
        }
        for found in &mut self.per_branch[..count] {
            found.clear();
        }
    }

    /// The first ``count`` branches' vectors emptied (each XPath's string moved to the spare
    /// ones), all within [`SPARE_CAP`], for the thread's next pass.
    #[inline(always)]
    fn keep(&mut self, count: usize) {
        for found in &mut self.per_branch[..count] {
            for xpath in found.drain(..) {
                if self.xpaths.len() < SPARE_CAP && xpath.capacity() <= SPARE_CAP {
                    self.xpaths.push(xpath); // its text cleared when it is rendered into
                }
            }
            if found.capacity() > SPARE_CAP {
                *found = Vec::new();
            }
        }
        if self.per_branch.len() > SPARE_CAP {
            self.per_branch = Vec::new();
        }
        if self.values.capacity() > SPARE_CAP {
            self.values = Vec::new();
        }
    }
}

/// The key walk's [`Out`]: each XPath rendered into a spare string when there is one.
struct Pooled<'x> {
    found: &'x mut Vec<String>,
    xpaths: &'x mut Vec<String>,
}

impl<'d> Out<'d> for Pooled<'_> {
    #[inline]
    fn found(
        &mut self,
        _run: &mut Run<'_, '_>,
        branch: &Branch,
        values: &[Cow<'d, str>],
        _value: V<'d, '_>,
    ) -> W<()> {
        self.push(branch, values);
        Ok(())
    }
}

impl Pooled<'_> {
    /// An instance's XPath rendered into a spare string (a new one when there is none): the
    /// key walk's and the yang-patch walk's (patchwalk.rs).
    #[inline(always)]
    fn push(&mut self, branch: &Branch, values: &[Cow<'_, str>]) {
        let mut xpath = self.xpaths.pop().unwrap_or_default();
        render_into(branch, values, &mut xpath);
        self.found.push(xpath);
    }
}
