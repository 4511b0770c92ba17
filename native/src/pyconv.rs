//! Rust values -> the Python objects orjson would build (dict, list, str, int, float, bool,
//! None). Member names repeat (a list's entries have the same members), so the strings of
//! short names are cached across calls and reused, their hash already computed.

use crate::json::{Node, V};
use pyo3::ffi;
use pyo3::prelude::*;

const SLOTS: usize = 2048;
const MAX_CACHED: usize = 64;

/// Short member names -> their Python string, a direct-mapped cache (orjson keeps one too).
pub struct NameCache {
    slots: Vec<Option<(Box<[u8]>, Py<PyAny>)>>,
}

impl NameCache {
    pub fn new() -> Self {
        NameCache {
            slots: (0..SLOTS).map(|_| None).collect(),
        }
    }

    /// The Python string of ``name``, from the cache when it holds it.
    pub fn name<'py>(&mut self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let bytes = name.as_bytes();
        if bytes.len() > MAX_CACHED {
            return string(py, name);
        }
        let slot = &mut self.slots[hash(bytes) % SLOTS];
        if let Some((cached, object)) = slot {
            if **cached == *bytes {
                return Ok(object.bind(py).clone());
            }
        }
        let object = string(py, name)?;
        // The hash is computed once, here, so each dict insert of this name reuses it.
        unsafe { ffi::PyObject_Hash(object.as_ptr()) };
        *slot = Some((bytes.into(), object.clone().unbind()));
        Ok(object)
    }
}

#[inline]
fn hash(bytes: &[u8]) -> usize {
    // FNV-1a: short names, a cheap spread.
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    (h ^ (h >> 29)) as usize
}

#[inline]
pub fn string<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyAny>> {
    unsafe {
        let ptr = ffi::PyUnicode_FromStringAndSize(s.as_ptr().cast(), s.len() as ffi::Py_ssize_t);
        Bound::from_owned_ptr_or_err(py, ptr)
    }
}

/// ``value`` as a Python object.
pub fn to_py<'py>(
    py: Python<'py>,
    value: V<'_, '_>,
    names: &mut NameCache,
) -> PyResult<Bound<'py, PyAny>> {
    unsafe {
        let ptr = match value.node() {
            Node::Null => return Ok(py.None().into_bound(py)),
            Node::Bool(b) => {
                let obj = if b { ffi::Py_True() } else { ffi::Py_False() };
                return Ok(Bound::from_borrowed_ptr(py, obj));
            }
            Node::Int(i) => ffi::PyLong_FromLongLong(i),
            Node::UInt(u) => ffi::PyLong_FromUnsignedLongLong(u),
            Node::Float(f) => ffi::PyFloat_FromDouble(f),
            Node::Str(s) => return string(py, value.doc.text(s)),
            Node::Array { len, .. } => {
                let list =
                    Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len as ffi::Py_ssize_t))?;
                for (i, item) in value.items().into_iter().flatten().enumerate() {
                    let item = to_py(py, item, names)?;
                    // PyList_SetItem steals the reference.
                    ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr());
                }
                return Ok(list);
            }
            Node::Object { .. } => return object(py, value, names),
        };
        Bound::from_owned_ptr_or_err(py, ptr)
    }
}

/// An object's members as a dict: insertion order kept, a repeated name keeps its first place
/// and its last value (what a dict built from them holds).
pub fn object<'py>(
    py: Python<'py>,
    value: V<'_, '_>,
    names: &mut NameCache,
) -> PyResult<Bound<'py, PyAny>> {
    unsafe {
        let dict = Bound::from_owned_ptr_or_err(py, ffi::PyDict_New())?;
        for (name, value) in value.members() {
            let key = names.name(py, name)?;
            let value = to_py(py, value, names)?;
            if ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(dict)
    }
}

/// Set ``dict[key] = value`` (borrowing both).
#[inline]
pub fn set_item(
    py: Python<'_>,
    dict: &Bound<'_, PyAny>,
    key: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } != 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(())
}

/// ``dict.get(key)`` (borrowed from the dict, as a new reference).
#[inline]
pub fn get_item<'py>(
    py: Python<'py>,
    dict: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
) -> Option<Bound<'py, PyAny>> {
    unsafe {
        let ptr = ffi::PyDict_GetItemWithError(dict.as_ptr(), key.as_ptr());
        if ptr.is_null() {
            None
        } else {
            Some(Bound::from_borrowed_ptr(py, ptr))
        }
    }
}
