//! A key pass's text: the concrete XPaths rendered from a branch's template
//! (``yangkey.xpath``), sorted and deduplicated as ``_sorted_unique`` does, and the message
//! key's bytes (``yangkey.messages.encode_key``: node, subscription id, XPaths joined by
//! ``" | "``) with the per-branch keys a push-update's answer carries.
//!
//! A child module of walk.rs.

use super::{Branch, Stop, Walker, W};
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

/// ``_sorted_unique``: by code point (UTF-8 byte order is code point order). The XPaths of
/// one branch share the template's text up to its first value: compared past it. In place.
fn sorted_unique(found: &mut Vec<String>, common: usize) {
    if found.iter().all(|x| x.len() >= common) {
        found.sort_unstable_by(|a, b| a.as_bytes()[common..].cmp(&b.as_bytes()[common..]));
    } else {
        found.sort_unstable();
    }
    found.dedup();
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
    PyBytes::new_with(py, size, |buffer: &mut [u8]| {
        let mut at = 0;
        let mut put = |part: &[u8]| {
            buffer[at..at + part.len()].copy_from_slice(part);
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
        Ok(())
    })
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
    every.sort_unstable();
    every.dedup();
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
