//! A key pass's text: the concrete XPaths rendered from a branch's template
//! (``yangkey.xpath``), sorted and deduplicated as ``_sorted_unique`` does, and the message
//! key's bytes (``yangkey.messages.encode_key``: node, subscription id, XPaths joined by
//! ``" | "``) with the per-branch keys a push-update's answer carries.
//!
//! A child module of walk.rs.

use super::{Branch, Stop, Walker, W};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::borrow::Cow;

/// ``yangkey.xpath.quote``: an XPath 1.0 string literal. The common case (no ``'``) inlined
/// into the render, the rest apart.
#[inline(always)]
fn quote(value: &str, out: &mut String) {
    if !value.contains('\'') {
        out.push('\'');
        out.push_str(value);
        out.push('\'');
    } else {
        quote_other(value, out);
    }
}

/// [`quote`] of a value with a ``'``.
#[inline(never)]
fn quote_other(value: &str, out: &mut String) {
    if !value.contains('"') {
        out.push('"');
        out.push_str(value);
        out.push('"');
    } else {
        let pieces: Vec<String> = value
            .split('\'')
            .enumerate()
            .flat_map(|(i, part)| {
                let mut both = Vec::new();
                if i > 0 {
                    both.push("\"'\"".to_string());
                }
                if !part.is_empty() {
                    both.push(format!("'{part}'"));
                }
                both
            })
            .collect();
        out.push_str("concat(");
        out.push_str(&pieces.join(","));
        out.push(')');
    }
}

/// The concrete XPath: the template's pieces around the open values, a position bare.
pub(crate) fn render(branch: &Branch, values: &[Cow<'_, str>]) -> String {
    let mut out = String::with_capacity(rendered_size(branch, values));
    write(branch, values, &mut out);
    out
}

/// [`render`] into ``out`` (emptied first): a reused buffer's allocation kept.
pub(crate) fn render_into(branch: &Branch, values: &[Cow<'_, str>], out: &mut String) {
    out.clear();
    out.reserve(rendered_size(branch, values));
    write(branch, values, out);
}

/// What [`render`] writes at most but for a quoted value's ``concat``.
fn rendered_size(branch: &Branch, values: &[Cow<'_, str>]) -> usize {
    branch.size + values.iter().map(|v| v.len() + 2).sum::<usize>()
}

#[inline(always)]
fn write(branch: &Branch, values: &[Cow<'_, str>], out: &mut String) {
    out.push_str(&branch.pieces[0]);
    for (i, value) in values.iter().enumerate() {
        if branch.bare[i] {
            out.push_str(value);
        } else {
            quote(value, out);
        }
        out.push_str(&branch.pieces[i + 1]);
    }
}

/// ``_sorted_unique``: by code point (UTF-8 byte order is code point order), in place. The
/// XPaths all begin with ``known`` bytes (a branch's template text up to its first value).
/// One pass over neighbours finds the common prefix of all and whether they are already in
/// strict order (then nothing to sort nor drop); the sort and the dedup compare past that
/// prefix, the sort an 8-byte big-endian word first.
fn sorted_unique<S: AsRef<str>>(found: &mut Vec<S>, known: usize) {
    let mut common = usize::MAX;
    let mut ordered = true;
    for pair in found.windows(2) {
        let (a, b) = (pair[0].as_ref().as_bytes(), pair[1].as_ref().as_bytes());
        let from = if a.len() >= known && b.len() >= known {
            known
        } else {
            0
        };
        let at = mismatch(a, b, from);
        common = common.min(at);
        // in order past ``at``: ``a`` ends there and ``b`` goes on, or ``a``'s byte is lower
        ordered &= match (a.get(at), b.get(at)) {
            (None, Some(_)) => true,
            (Some(x), Some(y)) => x < y,
            _ => false,
        };
    }
    if ordered {
        return; // none or one, or strictly increasing: sorted and unique already
    }
    // Each XPath's eight bytes past the common prefix as a big-endian word (zeros past its
    // end) and its index: the words sorted, the rest compared only where two tie; then the
    // XPaths moved into that order, cycle by cycle. A stable sort (a merge sort that finds
    // runs) for the order XPaths arrive in: a router numbers its instances, which in
    // code-point order are a few interleaved ascending runs (0..9, 10..99, 100..999); at
    // 1,000 it takes some 50k instructions where the unstable sort took 168k. Equal words
    // are equal XPaths or differ later: the order among equals does not matter.
    let bytes = |index: u32| found[index as usize].as_ref().as_bytes();
    let mut order: Vec<(u64, u32)> = (0..found.len() as u32)
        .map(|index| (word(bytes(index), common), index))
        .collect();
    order.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| bytes(a.1)[common..].cmp(&bytes(b.1)[common..]))
    });
    // equal XPaths have equal words: none to drop unless two words tie
    let tied = order.windows(2).any(|pair| pair[0].0 == pair[1].0);
    for start in 0..order.len() {
        let mut at = start;
        while order[at].1 != u32::MAX {
            let from = order[at].1 as usize;
            order[at].1 = u32::MAX;
            if from == start {
                break;
            }
            found.swap(at, from);
            at = from;
        }
    }
    if tied {
        found.dedup_by(|a, b| {
            let (a, b) = (a.as_ref().as_bytes(), b.as_ref().as_bytes());
            a.len() == b.len() && a[common..] == b[common..]
        });
    }
}

/// The first index from ``from`` where ``a`` and ``b`` differ (or the shorter one's length);
/// ``from`` is within both. Eight bytes a step.
#[inline]
fn mismatch(a: &[u8], b: &[u8], from: usize) -> usize {
    let end = a.len().min(b.len());
    let mut at = from;
    while at + 8 <= end {
        let x = u64::from_le_bytes(a[at..at + 8].try_into().unwrap_or_default());
        let y = u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
        if x != y {
            return at + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while at < end && a[at] == b[at] {
        at += 1;
    }
    at
}

/// The eight bytes of ``s`` from ``at`` as a big-endian word, zeros past its end: words that
/// differ order as the bytes do (a zero past the end ties with a real zero byte, which the
/// full comparison then settles).
#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    match s.get(at..at + 8) {
        Some(eight) => u64::from_be_bytes(eight.try_into().unwrap_or_default()),
        None if at < s.len() && s.len() >= 8 => {
            // the last eight bytes, those before ``at`` shifted out at the top
            let last = u64::from_be_bytes(s[s.len() - 8..].try_into().unwrap_or_default());
            last << (8 * (at + 8 - s.len()))
        }
        None => {
            let rest = s.get(at..).unwrap_or_default();
            rest.iter()
                .enumerate()
                .fold(0, |word, (i, &byte)| word | u64::from(byte) << (56 - 8 * i))
        }
    }
}

/// ``yangkey.messages.encode_key``, written straight into the bytes object.
fn encode_key<'py, S: AsRef<str>>(
    py: Python<'py>,
    node: &str,
    subscription_id: u32,
    xpaths: &[S],
) -> PyResult<Bound<'py, PyBytes>> {
    let mut digits = [0u8; 10]; // u32::MAX has 10 digits; written without an allocation
    let mut start = digits.len();
    let mut rest = subscription_id;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let id = &digits[start..];
    let joined: usize =
        xpaths.iter().map(|x| x.as_ref().len()).sum::<usize>() + 3 * xpaths.len().saturating_sub(1);
    let size = node.len() + 1 + id.len() + 1 + joined;
    // The bytes object's buffer written in place, not zero-filled first as
    // ``PyBytes::new_with`` does: every byte of it is written below, exactly ``size``.
    // SAFETY: ``PyBytes_FromStringAndSize(NULL, size)`` answers a new bytes object with
    // ``size`` bytes of buffer not yet written (or NULL, an error); ``put`` writes within it.
    unsafe {
        let object = ffi::PyBytes_FromStringAndSize(std::ptr::null(), size as ffi::Py_ssize_t);
        let bytes = Bound::from_owned_ptr_or_err(py, object)?.cast_into_unchecked::<PyBytes>();
        let buffer = ffi::PyBytes_AsString(object).cast::<u8>();
        let mut at = 0;
        let mut put = |part: &[u8]| {
            assert!(part.len() <= size - at, "encode_key: past the buffer");
            std::ptr::copy_nonoverlapping(part.as_ptr(), buffer.add(at), part.len());
            at += part.len();
        };
        put(node.as_bytes());
        put(b"\n");
        put(id);
        put(b"\n");
        for (index, xpath) in xpaths.iter().enumerate() {
            if index > 0 {
                put(b" | ");
            }
            put(xpath.as_ref().as_bytes());
        }
        assert_eq!(at, size, "encode_key: the buffer not filled");
        Ok(bytes)
    }
}

/// The answer of a key pass from each branch's instances (unsorted, may repeat; sorted and
/// deduplicated in place), or a stop when there is none (the reference answers): the vectors'
/// allocations, and the XPaths', are the caller's to keep.
pub(crate) fn compose_in<'py>(
    py: Python<'py>,
    walker: &Walker,
    per_branch: &mut [Vec<String>],
    node: &str,
    subscription_id: u32,
    with_xpaths: bool,
) -> W<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    for (found, branch) in per_branch.iter_mut().zip(&walker.branches) {
        sorted_unique(found, branch.pieces[0].len());
    }
    if per_branch.iter().all(Vec::is_empty) {
        return Err(Stop); // empty update, a container template, or no instance: the reference
    }
    // The tuple filled straight from the branches: a vector's allocation per notification
    // otherwise. A key that cannot be built stops the pass after it.
    let mut stopped = false;
    let branch_keys = PyTuple::new(
        py,
        per_branch.iter().map(|xpaths| {
            if xpaths.is_empty() {
                return None;
            }
            let key = encode_key(py, node, subscription_id, xpaths);
            stopped |= key.is_err();
            key.ok()
        }),
    )
    .map_err(|_| Stop)?;
    if stopped {
        return Err(Stop);
    }
    if let [one] = per_branch {
        let key = branch_keys.get_item(0).map_err(|_| Stop)?;
        return Ok((
            key,
            branch_keys.into_any(),
            xpaths_tuple(py, one, with_xpaths)?,
        ));
    }
    let mut every: Vec<&str> = per_branch.iter().flatten().map(String::as_str).collect();
    sorted_unique(&mut every, 0);
    let key = encode_key(py, node, subscription_id, &every).map_err(|_| Stop)?;
    let xpaths = xpaths_tuple(py, &every, with_xpaths)?;
    Ok((key.into_any(), branch_keys.into_any(), xpaths))
}

/// The answer's XPaths: a tuple of them, or None when the caller does not ask for them.
fn xpaths_tuple<'py, S: AsRef<str>>(
    py: Python<'py>,
    every: &[S],
    with_xpaths: bool,
) -> W<Bound<'py, PyAny>> {
    Ok(if with_xpaths {
        PyTuple::new(py, every.iter().map(AsRef::as_ref))
            .map_err(|_| Stop)?
            .into_any()
    } else {
        py.None().into_bound(py)
    })
}
