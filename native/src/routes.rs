//! ``Routes``: the answers of ``Decoder.keys``' ``route`` question, by (subscription id,
//! node), kept where the key pass reads them without a Python object: it looks an answer up by
//! the id and node text it has just read, not by a tuple built, hashed and compared in Python.

use crate::walk::Walker;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One answer of the route: the walker, the node name the key carries, the caller's extra.
pub struct Answer {
    pub walker: Py<Walker>,
    pub node_name: Arc<str>,
    pub extra: Py<PyAny>,
}

impl Answer {
    pub fn clone_ref(&self, py: Python<'_>) -> Answer {
        Answer {
            walker: self.walker.clone_ref(py),
            node_name: self.node_name.clone(),
            extra: self.extra.clone_ref(py),
        }
    }
}

/// A node name no text spells (a node's text is UTF-8, without byte 0xff): the key of "no node".
const NO_NODE: &[u8] = b"\xff";

/// The map's key of (id, node): the id's 4 bytes, then the node's text or [`NO_NODE`].
fn key_into(subscription_id: u32, node: Option<&str>, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&subscription_id.to_le_bytes());
    out.extend_from_slice(node.map_or(NO_NODE, str::as_bytes));
}

/// ``route``'s answers by ``(subscription_id, node)`` (node a str or None); set, counted and
/// emptied like the dict it replaces (``routes[(id, node)] = (walker, node_name, extra)``,
/// ``len(routes)``, ``routes.clear()``).
#[pyclass(module = "yangkey_native", frozen)]
pub struct Routes {
    map: Mutex<HashMap<Box<[u8]>, Answer>>,
}

impl Routes {
    /// The answer for (id, node), if one was set (None also when another thread holds the map:
    /// the caller then asks the route).
    pub fn get(&self, py: Python<'_>, subscription_id: u32, node: Option<&str>) -> Option<Answer> {
        let map = self.map.try_lock().ok()?;
        let mut stack = [0u8; 96];
        let size = 4 + node.map_or(NO_NODE.len(), str::len);
        let found = if size <= stack.len() {
            stack[..4].copy_from_slice(&subscription_id.to_le_bytes());
            stack[4..size].copy_from_slice(node.map_or(NO_NODE, str::as_bytes));
            map.get(&stack[..size])
        } else {
            let mut key = Vec::with_capacity(size);
            key_into(subscription_id, node, &mut key);
            map.get(&key[..])
        };
        found.map(|answer| answer.clone_ref(py))
    }
}

#[pymethods]
impl Routes {
    #[new]
    fn new() -> Self {
        Routes {
            map: Mutex::new(HashMap::new()),
        }
    }

    fn __setitem__(
        &self,
        asked: (u32, Option<Bound<'_, PyString>>),
        answer: (Bound<'_, Walker>, Bound<'_, PyString>, Bound<'_, PyAny>),
    ) -> PyResult<()> {
        let (subscription_id, node) = asked;
        let node = match &node {
            Some(node) => Some(node.to_str()?),
            None => None,
        };
        let (walker, node_name, extra) = answer;
        let answer = Answer {
            walker: walker.unbind(),
            node_name: Arc::from(node_name.to_str()?),
            extra: extra.unbind(),
        };
        let mut key = Vec::new();
        key_into(subscription_id, node, &mut key);
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let replaced = map.insert(key.into_boxed_slice(), answer);
        drop(map);
        drop(replaced); // after the lock: a release may run Python code
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    fn clear(&self) {
        // The answers are released after the lock: a release may run Python code.
        let taken = std::mem::take(&mut *self.map.lock().unwrap_or_else(|e| e.into_inner()));
        drop(taken);
    }
}
