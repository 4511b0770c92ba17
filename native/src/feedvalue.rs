//! The instance feed's values (feed.rs): how a leaf's value becomes the text of its member,
//! as ``yangkey.instances._converter`` chooses it. Strings and integers are made canonical
//! here, an ``empty`` leaf and a nested list's JSON text too; every other converter is the
//! reference's callable, given the value as the reference holds it (an XML document's
//! ``prefix:name`` text as its ``QNameText``: xmlfeed.rs), its answers for strings
//! remembered. Anything else (a value type a converter here does not read, a float in a
//! nested list, a converter that raises) stops the pass: the reference then answers. And the
//! JSON strings as ``orjson.dumps`` writes them.

use crate::model::py_strip;
use crate::pyconv::to_py;
use crate::tape::{Node, V};
use crate::walk::{Run, Stop};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Mutex;

type W<T> = Result<T, Stop>;

/// How one value (a leaf's, a leaf-list item's) becomes its text.
pub(crate) enum Canon {
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
pub(crate) enum Conv {
    Item(Canon),
    /// An ``empty`` leaf: ``"true"`` whatever the value.
    Empty,
    LeafList(Canon),
    /// A nested list (or anydata): its canonical tree as JSON text.
    Tree,
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

pub(crate) fn conv_of(value: &Bound<'_, PyAny>) -> PyResult<Conv> {
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

/// A text's converted value (a target's key text, ``""``): as [`convert`] of a string.
pub(crate) fn convert_text(
    run: &mut Run<'_, '_>,
    conv: &Conv,
    text: &str,
    out: &mut Vec<u8>,
) -> W<()> {
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

pub(crate) fn convert(
    run: &mut Run<'_, '_>,
    conv: &Conv,
    value: V<'_, '_>,
    out: &mut Vec<u8>,
) -> W<()> {
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
