//! A yang-patch's edit targets (RFC 8072 section 2.5), parsed as
//! ``yangkey.notification_model.parse_target`` parses them (RFC 8040 section 3.5.3): each
//! target's steps (module, name, percent-decoded keys) in vectors shared by the whole
//! notification and kept from one notification to the next, with the edits that name them.
//!
//! A child module of patchwalk.rs, which matches the steps against the walker's branches.

use super::super::{Stop, W};
use crate::tape::V;
use std::borrow::Cow;
use std::cell::Cell;

/// ``TargetStep``: module, name, and where its percent-decoded ``=k1,k2`` values are in
/// [`Targets::keys`] (None: the step names no instance).
#[derive(Clone, Copy)]
pub(super) struct TargetStep<'d> {
    pub(super) module: &'d str,
    pub(super) name: &'d str,
    pub(super) keys: Option<(usize, usize)>,
    /// Where its segment ends in the target (a ``/`` or the end).
    end: usize,
}

/// Every edit's target, in two vectors for the whole notification (no allocation per edit:
/// the allocations were a third of the pass's time past the parse), and the edits. Its
/// vectors are [`SPARE`]'s, kept from one notification to the next; with a cache, the steps
/// and the key values are the cache's, starting with the kept targets' (``kept_steps``,
/// ``kept_values``), which an edit of a kept target names where they are.
pub(super) struct Targets<'d, 'a> {
    pub(super) steps: Vec<TargetStep<'d>>,
    keys: Vec<Key<'d>>,
    /// The percent-decoded keys' text, one after the other.
    text: String,
    /// A key's bytes while they are decoded (reused).
    scratch: Vec<u8>,
    pub(super) edits: Vec<Edit<'d, 'a>>,
    /// The last target parsed, and where its steps are (a kept one: its copy in the cache,
    /// which its steps' names are in).
    last: Option<(&'d str, usize, usize)>,
    /// Targets parsed before ([`Spare::cache`]'s, while this lives; None: none kept yet,
    /// made by the first kept). An Option, so giving it back leaves no table made in its place
    /// (a new table draws its hash seeds and 64 slots).
    cache: Option<Cache>,
    /// The key values' vector of [`Targets::values`] between two uses: the kept targets'
    /// values (the cache's, ``kept_values`` of them), the rest emptied.
    stash: Cell<Vec<Cow<'static, str>>>,
    /// How many of [`Targets::steps`] and of the key values are the kept targets' (lent by
    /// the cache: their names and values in its chunks); this notification's follow them.
    kept_steps: usize,
    kept_values: usize,
    /// The targets kept in this notification, their steps still its own ([`Pending`]).
    pending: Vec<Pending<'d>>,
}

/// A target the cache kept in this notification: the target, where its steps are
/// in [`Targets::steps`] (moved into the cache's when the notification ends: ``settle``).
#[derive(Clone, Copy)]
struct Pending<'d> {
    target: &'d str,
    first: usize,
    end: usize,
}

/// [`Targets`]' vectors, empty, between two notifications (the key values' one of
/// [`Targets::values`] too). Allocating them anew for each notification cost more than their use: each
/// request past glibc's small sizes consolidates its fast bins, and the many small XPaths
/// allocated after it were then served the slow way (a fifth of the pass past the parse).
struct Spare {
    steps: Vec<TargetStep<'static>>,
    keys: Vec<Key<'static>>,
    text: String,
    scratch: Vec<u8>,
    edits: Vec<Edit<'static, 'static>>,
    values: Vec<Cow<'static, str>>,
    pending: Vec<Pending<'static>>,
    /// Targets parsed before, by their bytes (None: not made yet, or lent).
    cache: Option<Cache>,
}

thread_local! {
    static SPARE: std::cell::RefCell<Spare> = const {
        std::cell::RefCell::new(Spare {
            steps: Vec::new(),
            keys: Vec::new(),
            text: String::new(),
            scratch: Vec::new(),
            edits: Vec::new(),
            values: Vec::new(),
            pending: Vec::new(),
            cache: None,
        })
    };
}

/// Vectors longer than this (a notification of some 10,000 edits) are not kept.
const SPARE_MAX: usize = 1 << 15;

/// An emptied vector's allocation as a vector of the same type with other lifetimes: the
/// standard library collects a vector's ``into_iter`` into the same allocation when the
/// layouts agree (and else allocates: only slower). No element is ever mapped.
pub(crate) fn recycle<T, U>(mut vector: Vec<T>) -> Vec<U> {
    if vector.capacity() > SPARE_MAX {
        return Vec::new();
    }
    vector.clear();
    vector.into_iter().map(|_| unreachable!()).collect()
}

/// A key value as the target writes it, or decoded: ``Targets::text[start..end]``.
#[derive(Clone, Copy)]
enum Key<'d> {
    Raw(&'d str),
    Decoded(usize, usize),
}

/// An edit as the key pass reads it: where its target's steps are in [`Targets::steps`],
/// its value when it is an object.
pub(super) struct Edit<'d, 'a> {
    pub(super) steps: (usize, usize),
    pub(super) value: Option<V<'d, 'a>>,
    /// An operation [`super::is_operation`] takes (the instance feed's ``@op``).
    pub(super) operation: &'d str,
}

impl<'d, 'a> Targets<'d, 'a> {
    pub(super) fn new() -> Self {
        SPARE.with_borrow_mut(|spare| {
            let mut cache = spare.cache.take();
            // the kept targets' steps and values, lent while this lives (else the spares)
            let (steps, values) = match &mut cache {
                Some(cache) => {
                    if cache.len >= CACHE_MAX {
                        cache.clear(); // (``patch._FOUND_MAX``'s way; see ``remember``)
                    }
                    (
                        std::mem::take(&mut cache.steps),
                        std::mem::take(&mut cache.values),
                    )
                }
                None => (
                    recycle(std::mem::take(&mut spare.steps)),
                    recycle(std::mem::take(&mut spare.values)),
                ),
            };
            Targets {
                kept_steps: steps.len(),
                kept_values: values.len(),
                steps,
                keys: recycle(std::mem::take(&mut spare.keys)),
                text: std::mem::take(&mut spare.text),
                scratch: std::mem::take(&mut spare.scratch),
                edits: recycle(std::mem::take(&mut spare.edits)),
                last: None,
                cache,
                stash: Cell::new(values),
                pending: recycle(std::mem::take(&mut spare.pending)),
            }
        })
    }

    /// Room for ``len`` edits (about three steps and one key each).
    pub(super) fn reserve(&mut self, len: usize) {
        self.edits.reserve(len);
        self.steps.reserve(3 * len);
        self.keys.reserve(len);
    }

    /// ``_parse_target``: a leading ``/``, empty segments skipped, ``name=k1,k2`` split at
    /// the first ``=``, ``module:name`` at the last ``:`` before it, the module inherited by
    /// unqualified steps; any refusal stops (the reference words it). Returns where its steps
    /// are. One scan of the bytes (``str.strip``, ``split``, ``partition``, ``rpartition``
    /// and ``_percent_decode`` in one: skipping empty segments makes the strip of ``/``
    /// redundant), stopping only at the delimiters ([`DELIMITER`]).
    ///
    /// A kept target is answered in a small frame ([`Targets::cached`]); the parse is a call
    /// of its own ([`Targets::parse_new`]).
    pub(super) fn parse(&mut self, target: &'d str) -> W<(usize, usize)> {
        if target.as_bytes().first() != Some(&b'/') {
            return Err(Stop);
        }
        match self.cached(target) {
            Some(steps) => Ok(steps),
            None => self.parse_new(target),
        }
    }

    /// [`Targets::parse`] of a target not kept (its first byte a ``/``).
    #[inline(never)]
    fn parse_new(&mut self, target: &'d str) -> W<(usize, usize)> {
        let bytes = target.as_bytes();
        let first = self.steps.len();
        let mut module: Option<&str> = None;
        let mut at = 1;
        // The steps it shares with the last target (a patch's targets mostly differ in their
        // last keys only): each segment ending before the first byte that differs, its '/'
        // included, parses as it did there.
        if let Some((last, from, to)) = self.last {
            let common = common_prefix(bytes, last.as_bytes());
            let rebase = |s: &'d str| {
                let at = s.as_ptr() as usize - last.as_ptr() as usize;
                &target[at..at + s.len()]
            };
            for index in from..to {
                let mut step = self.steps[index];
                if step.end >= common {
                    break;
                }
                // onto this target's bytes (the same there), which the cache reads offsets of
                (step.module, step.name) = (rebase(step.module), rebase(step.name));
                self.steps.push(step);
                (module, at) = (Some(step.module), step.end + 1);
            }
        }
        let (mut segment, mut equals, mut colon) = (at, None, None);
        let (mut key, mut keys) = (0, 0);
        // A key with escapes: where its decoded text starts in ``self.text``, and where the
        // target's text not yet copied there starts.
        let (mut decoded, mut plain) = (None, 0);
        loop {
            // the next delimiter, or the end (a final '/')
            while at < bytes.len() && !DELIMITER[bytes[at] as usize] {
                at += 1;
            }
            let byte = bytes.get(at).copied().unwrap_or(b'/');
            match byte {
                b'/' => {
                    if at > segment {
                        let name = match colon {
                            Some(colon) => {
                                module = Some(&target[segment..colon]);
                                &target[colon + 1..equals.unwrap_or(at)]
                            }
                            None => &target[segment..equals.unwrap_or(at)],
                        };
                        let range = match equals {
                            None => None,
                            Some(_) => {
                                self.key(target, (key, plain, at), decoded.take());
                                Some((keys, self.kept_values + self.keys.len()))
                            }
                        };
                        self.steps.push(TargetStep {
                            module: module.ok_or(Stop)?,
                            name,
                            keys: range,
                            end: at,
                        });
                    }
                    if at >= bytes.len() {
                        break;
                    }
                    (segment, equals, colon) = (at + 1, None, None);
                }
                b'=' if equals.is_none() => {
                    equals = Some(at);
                    (key, keys) = (at + 1, self.kept_values + self.keys.len());
                }
                b':' if equals.is_none() => colon = Some(at),
                b',' if equals.is_some() => {
                    self.key(target, (key, plain, at), decoded.take());
                    key = at + 1;
                }
                b'%' if equals.is_some() => {
                    if decoded.is_none() {
                        (decoded, plain) = (Some(self.text.len()), key); // its first escape
                    }
                    self.text.push_str(&target[plain..at]);
                    at = self.escapes(bytes, at)?;
                    plain = at;
                    continue;
                }
                _ => {}
            }
            at += 1;
        }
        if self.steps.len() == first {
            return Err(Stop);
        }
        self.last = Some((target, first, self.steps.len()));
        self.remember(target, first);
        Ok((first, self.steps.len()))
    }
}

/// How many bytes ``a`` and ``b`` begin with alike.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let size = a.len().min(b.len());
    let mut at = 0;
    while at + 8 <= size {
        let word = |s: &[u8]| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or_default());
        let differ = word(a) ^ word(b);
        if differ != 0 {
            return at + (differ.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while at < size && a[at] == b[at] {
        at += 1;
    }
    at
}

/// The bytes [`Targets::parse`] stops at: ``/ = : , %``.
const DELIMITER: [bool; 256] = {
    let mut table = [false; 256];
    let mut at = 0;
    while at < 5 {
        table[b"/=:,%"[at] as usize] = true;
        at += 1;
    }
    table
};

#[path = "targetcache.rs"]
mod targetcache;
use targetcache::Cache;

impl Drop for Targets<'_, '_> {
    fn drop(&mut self) {
        let cache = self.cache.take().and_then(|cache| self.settle(cache));
        SPARE.with_borrow_mut(|spare| {
            if cache.is_none() {
                spare.steps = recycle(std::mem::take(&mut self.steps));
                spare.values = recycle(self.stash.take());
            }
            spare.keys = recycle(std::mem::take(&mut self.keys));
            spare.edits = recycle(std::mem::take(&mut self.edits));
            spare.pending = recycle(std::mem::take(&mut self.pending));
            if self.text.capacity() <= SPARE_MAX {
                spare.text = std::mem::take(&mut self.text);
                spare.text.clear();
            }
            spare.scratch = std::mem::take(&mut self.scratch);
            if cache.is_some() {
                spare.cache = cache;
            }
        })
    }
}

impl<'d> Targets<'d, '_> {
    /// A key's value, ``target[key..end]``: as the target writes it, or, when it held
    /// escapes, decoded into [`Targets::text`] from ``decoded`` on (``target[plain..end]``:
    /// its text past the last escape).
    fn key(
        &mut self,
        target: &'d str,
        (key, plain, end): (usize, usize, usize),
        decoded: Option<usize>,
    ) {
        match decoded {
            None => self.keys.push(Key::Raw(&target[key..end])),
            Some(start) => {
                self.text.push_str(&target[plain..end]);
                self.keys.push(Key::Decoded(start, self.text.len()));
            }
        }
    }

    /// A run of escapes at ``at`` decoded into [`Targets::text`] as ``_percent_decode``
    /// decodes them: each ``%`` followed by two hex digits; ASCII as it comes; from the first
    /// byte past ASCII on, the run's bytes must be UTF-8 by themselves (the text around it is
    /// whole characters, which cannot complete a sequence it begins). Returns where the run
    /// ends.
    fn escapes(&mut self, bytes: &[u8], mut at: usize) -> W<usize> {
        let hex = |b: Option<&u8>| -> W<u8> {
            match b {
                Some(b @ b'0'..=b'9') => Ok(b - b'0'),
                Some(b @ b'a'..=b'f') => Ok(b - b'a' + 10),
                Some(b @ b'A'..=b'F') => Ok(b - b'A' + 10),
                _ => Err(Stop),
            }
        };
        let high = &mut self.scratch;
        high.clear();
        while bytes.get(at) == Some(&b'%') {
            let byte = hex(bytes.get(at + 1))? << 4 | hex(bytes.get(at + 2))?;
            if byte < 0x80 && high.is_empty() {
                self.text.push(byte as char);
            } else {
                high.push(byte);
            }
            at += 3;
        }
        if !high.is_empty() {
            self.text
                .push_str(std::str::from_utf8(high).map_err(|_| Stop)?);
        }
        Ok(at)
    }

    /// The key values, as the walk reads them (in the vector kept from the last
    /// notification: give it back with [`Targets::keep_values`]).
    pub(super) fn values(&self) -> Vec<Cow<'_, str>> {
        let mut values: Vec<Cow<'_, str>> = self.stash.take();
        values.truncate(self.kept_values); // (the kept targets' values stay first)
        values.extend(self.keys.iter().map(|key| match *key {
            Key::Raw(text) => Cow::Borrowed(text),
            Key::Decoded(start, end) => Cow::Borrowed(&self.text[start..end]),
        }));
        values
    }

    /// [`Targets::values`]' vector back for the next notification: the kept targets' values
    /// (its first ``kept_values``), the rest emptied.
    pub(super) fn keep_values(&self, mut values: Vec<Cow<'_, str>>) {
        if values.len() < self.kept_values {
            return; // not the vector lent (``settle`` then finds the cache's values short)
        }
        values.truncate(self.kept_values);
        // SAFETY: what is left are the kept targets' values as ``values`` lent them: borrowed
        // from the cache's chunks, which stay until the cache is emptied, and the cache empties
        // these values with them (``Cache::clear``); only the lifetime is widened back.
        let values =
            unsafe { std::mem::transmute::<Vec<Cow<'_, str>>, Vec<Cow<'static, str>>>(values) };
        self.stash.set(values);
    }
}

/// Targets kept at most: past it none is added, and the next notification empties the table
/// (``patch._FOUND_MAX``'s way).
const CACHE_MAX: usize = 4096;

/// Longer targets, and targets of more steps or keys, are not kept: an entry stays below
/// some 1.6 kB (its bytes and decoded keys, 16 steps of 64 bytes, 16 values of 24), the
/// table below some 7 MB (typically a tenth of that: three steps, one key).
const CACHED_LEN_MAX: usize = 256;

/// See [`CACHED_LEN_MAX`].
const CACHED_STEPS_MAX: usize = 16;

impl<'d> Targets<'d, '_> {
    /// A kept target's steps: found by one hash of its bytes and one compare of them
    /// ([`Cache::find`]), where they are in [`Targets::steps`] (the cache's, lent: nothing is
    /// pushed; or, kept in this notification, its own).
    #[inline]
    fn cached(&mut self, target: &'d str) -> Option<(usize, usize)> {
        if target.len() > CACHED_LEN_MAX {
            return None;
        }
        let slot = self.cache.as_ref()?.find(target.as_bytes())?;
        let first = slot.first_step as usize;
        let end = first + slot.steps as usize;
        // the steps' names are in the entry's copy of the target (a pending entry's in the
        // target that was kept, not at hand: no steps of it are reused)
        self.last = (!slot.pending).then(|| (slot.target(), first, end));
        Some((first, end))
    }

    /// Keeps a target [`Targets::parse`] just parsed into ``steps[first..]`` (pending: its
    /// steps and values move into the cache's when the notification ends, ``settle``).
    fn remember(&mut self, target: &'d str, first: usize) {
        let steps = &self.steps[first..];
        if target.len() > CACHED_LEN_MAX || steps.len() > CACHED_STEPS_MAX {
            return;
        }
        let keys: usize = steps
            .iter()
            .filter_map(|step| step.keys)
            .map(|(from, to)| to - from)
            .sum();
        let within = |s: &str| {
            let start = (s.as_ptr() as usize).wrapping_sub(target.as_ptr() as usize);
            start <= target.len() && s.len() <= target.len() - start
        };
        // every step's names are in the target (reused steps were rebased), checked
        if keys > CACHED_STEPS_MAX || !steps.iter().all(|s| within(s.module) && within(s.name)) {
            return;
        }
        let cache = self.cache.get_or_insert_with(Cache::new);
        // Full: kept as it is until the next notification empties it (``Targets::new``).
        if cache.len >= CACHE_MAX {
            return;
        }
        let end = self.steps.len();
        if cache.insert(target, first, end - first).is_some() {
            self.pending.push(Pending { target, first, end });
        }
    }

    /// When the notification ends: the targets kept in it get steps of their own in the
    /// cache's (after the kept ones: their names in the entries' copies of the targets, their
    /// key values copied into the cache's chunks), and this notification's steps and values
    /// are dropped. Returns the cache, None when it was dropped (its steps or values not as
    /// lent: a pass that stopped between ``values`` and ``keep_values``).
    fn settle(&mut self, mut cache: Cache) -> Option<Cache> {
        let (kept_steps, kept_values) = (self.kept_steps, self.kept_values);
        let mut values = self.stash.take();
        if values.len() != kept_values || self.steps.len() < kept_steps {
            return None;
        }
        let fresh = self.steps.len();
        for pending in std::mem::take(&mut self.pending) {
            let Some(&mut slot) = cache.slot(pending.target.as_bytes()) else {
                continue; // dropped when the table grew
            };
            let copy: &'static str = slot.target();
            // where a name of the target is in its copy
            let moved = |s: &str| -> &'static str {
                let start = s.as_ptr() as usize - pending.target.as_ptr() as usize;
                &copy[start..start + s.len()]
            };
            let first = self.steps.len() - fresh + kept_steps;
            for index in pending.first..pending.end {
                let step = self.steps[index];
                let keys = step.keys.map(|(from, to)| {
                    if from < kept_values {
                        return (from, to); // a kept target's (a step reused from it)
                    }
                    let start = values.len();
                    for key in &self.keys[from - kept_values..to - kept_values] {
                        let text = match *key {
                            Key::Raw(text) => text,
                            Key::Decoded(start, end) => &self.text[start..end],
                        };
                        values.push(Cow::Borrowed(cache.store(text)));
                    }
                    (start, values.len())
                });
                self.steps.push(TargetStep {
                    module: moved(step.module),
                    name: moved(step.name),
                    keys,
                    end: step.end,
                });
            }
            if let Some(slot) = cache.slot(pending.target.as_bytes()) {
                slot.first_step = first as u32;
                slot.pending = false;
            }
        }
        self.steps.drain(kept_steps..fresh);
        // SAFETY: every step left is a kept target's, its names in the cache's chunks, which
        // stay until the cache is emptied, and the cache empties its steps with them
        // (``Cache::clear``); only the lifetime is widened back.
        cache.steps = unsafe {
            std::mem::transmute::<Vec<TargetStep<'_>>, Vec<TargetStep<'static>>>(std::mem::take(
                &mut self.steps,
            ))
        };
        cache.values = values;
        Some(cache)
    }
}
