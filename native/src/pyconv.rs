//! Rust values -> the Python objects orjson would build (dict, list, str, int, float, bool,
//! None). Member names repeat (a list's entries have the same members), so the strings of
//! short names are cached across calls and reused, their hash already computed.

use crate::tape::{Node, V};
use pyo3::ffi;
use pyo3::prelude::*;

const SLOTS: usize = 2048;
const MAX_CACHED: usize = 64;
const VALUE_SLOTS: usize = 512;
const MAX_VALUE: usize = 32;

/// Short member names -> their Python string, a direct-mapped cache (orjson keeps one too).
pub struct NameCache {
    slots: Vec<Option<(Box<[u8]>, Py<PyAny>)>>,
    /// Short string values of the current document (enumerations, identities, statuses
    /// repeat across a notification's instances); entries of other documents are stale.
    values: Vec<Option<(u32, Box<[u8]>, Py<PyAny>)>>,
    document: u32,
}

impl NameCache {
    pub fn new() -> Self {
        NameCache {
            slots: (0..SLOTS).map(|_| None).collect(),
            values: (0..VALUE_SLOTS).map(|_| None).collect(),
            document: 0,
        }
    }

    /// A new document: values cached for earlier ones are not reused (each document's own
    /// repetitions only, so a benchmark repeating one document measures no more than that).
    pub fn next_document(&mut self) {
        self.document = self.document.wrapping_add(1);
    }

    /// How many documents were begun (wraps): what ``Decoder.documents`` reports.
    pub fn documents(&self) -> u32 {
        self.document
    }

    /// The Python string of a string value, shared with its repetitions in this document.
    #[inline]
    pub fn value<'py>(&mut self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
        let bytes = text.as_bytes();
        if bytes.len() > MAX_VALUE {
            return string(py, text);
        }
        let document = self.document;
        let slot = &mut self.values[hash(bytes) % VALUE_SLOTS];
        if let Some((seen, cached, object)) = slot {
            if *seen == document && **cached == *bytes {
                return Ok(object.bind(py).clone());
            }
        }
        let object = string(py, text)?;
        *slot = Some((document, bytes.into(), object.clone().unbind()));
        Ok(object)
    }

    /// The Python string of ``name``, from the cache when it holds it.
    pub fn name<'py>(&mut self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        if name.len() > MAX_CACHED {
            return string(py, name);
        }
        let ptr = self.name_ptr(py, name)?;
        Ok(unsafe { Bound::from_borrowed_ptr(py, ptr) })
    }

    /// The cached string's pointer (borrowed: the cache holds it until the slot is reused,
    /// which the caller's next lookup may do, so use it at once).
    #[inline]
    /// ``name`` at most MAX_CACHED bytes long.
    fn name_ptr(&mut self, py: Python<'_>, name: &str) -> PyResult<*mut ffi::PyObject> {
        let bytes = name.as_bytes();
        let slot = &mut self.slots[hash(bytes) % SLOTS];
        if let Some((cached, object)) = slot {
            if **cached == *bytes {
                return Ok(object.as_ptr());
            }
        }
        let object = string(py, name)?;
        // The hash is computed once, here, so each dict insert of this name reuses it.
        unsafe { ffi::PyObject_Hash(object.as_ptr()) };
        let ptr = object.as_ptr();
        *slot = Some((bytes.into(), object.unbind()));
        Ok(ptr)
    }
}

/// A hash of a short name: its length, first and last (up to) 8 bytes.
#[inline]
fn hash(bytes: &[u8]) -> usize {
    let n = bytes.len();
    let word = |at: usize, len: usize| {
        let mut buf = [0u8; 8];
        buf[..len].copy_from_slice(&bytes[at..at + len]);
        u64::from_le_bytes(buf)
    };
    let head = word(0, n.min(8));
    let tail = if n > 8 { word(n - 8, 8) } else { 0 };
    let h = (head ^ tail.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 40) as usize
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
            Node::Str(s) => return names.value(py, value.doc.text(s)),
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
            let value = to_py(py, value, names)?;
            let long;
            let key = if name.len() > MAX_CACHED {
                long = string(py, name)?;
                long.as_ptr()
            } else {
                names.name_ptr(py, name)? // borrowed: used before the cache is asked again
            };
            if ffi::PyDict_SetItem(dict.as_ptr(), key, value.as_ptr()) != 0 {
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
