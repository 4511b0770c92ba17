//! ``Routes``: the answers of ``Decoder.keys``' ``route`` question, by (subscription id,
//! node), kept where the key pass reads them without a Python object: it looks an answer up by
//! the id and node text it has just read, not by a tuple built, hashed and compared in Python.
//!
//! An answer can also be shared by every node of an id (``Routes.share``): the answer of a
//! fleet-wide subscription is the same for every node that no node-specific one claims, but
//! for the node name its key carries, which is then the node's own text. A fleet of many
//! nodes then asks the route once per id, not once per (id, node): in the demo mix (16
//! records per node) the first record of each node asked 7 routes in Python.

use crate::hashing::Seeded;
use crate::model::Note;
use crate::walk::Walker;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::collections::{HashMap, HashSet};
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

/// An answer every node of an id shares but the ``excluded`` ones: its node name is the node's.
struct Shared {
    walker: Py<Walker>,
    extra: Py<PyAny>,
    excluded: HashSet<Box<str>>,
}

/// The answers by (id, node) key ([`key_into`]), and the shared ones by id (hashed by
/// [`Seeded`]: node names come from devices).
#[derive(Default)]
struct Memo {
    by_node: HashMap<Box<[u8]>, Answer, Seeded>,
    by_id: HashMap<u32, Shared, Seeded>,
}

/// ``route``'s answers by ``(subscription_id, node)`` (node a str or None); set, counted and
/// emptied like the dict it replaces (``routes[(id, node)] = (walker, node_name, extra)``,
/// ``len(routes)``, ``routes.clear()``); ``share`` sets an id's answer for every node.
#[pyclass(module = "yangkey_native", frozen)]
pub struct Routes {
    map: Mutex<Memo>,
}

impl Routes {
    /// The answer for (id, node), if one was set (None also when another thread holds the map:
    /// the caller then asks the route).
    pub fn get(&self, py: Python<'_>, subscription_id: u32, node: Option<&str>) -> Option<Answer> {
        let map = self.map.try_lock().ok()?;
        // Not zeroed first (a memset per lookup): only the key's bytes are written and read.
        let mut stack = [std::mem::MaybeUninit::<u8>::uninit(); 96];
        let size = 4 + node.map_or(NO_NODE.len(), str::len);
        let found = if size <= stack.len() {
            let id = subscription_id.to_le_bytes();
            let text = node.map_or(NO_NODE, str::as_bytes);
            let at = stack.as_mut_ptr().cast::<u8>();
            // SAFETY: 4 + text.len() == size <= 96 bytes written, then the first ``size`` read.
            let key = unsafe {
                std::ptr::copy_nonoverlapping(id.as_ptr(), at, 4);
                std::ptr::copy_nonoverlapping(text.as_ptr(), at.add(4), text.len());
                std::slice::from_raw_parts(at, size)
            };
            map.by_node.get(key)
        } else {
            let mut key = Vec::with_capacity(size);
            key_into(subscription_id, node, &mut key);
            map.by_node.get(&key[..])
        };
        if let Some(answer) = found {
            return Some(answer.clone_ref(py));
        }
        // No node or an empty one: the route names the default node, which is not shared.
        let node = node.filter(|node| !node.is_empty())?;
        let shared = map.by_id.get(&subscription_id)?;
        if shared.excluded.contains(node) {
            return None;
        }
        Some(Answer {
            walker: shared.walker.clone_ref(py),
            node_name: Arc::from(node),
            extra: shared.extra.clone_ref(py),
        })
    }
}

#[pymethods]
impl Routes {
    #[new]
    fn new() -> Self {
        Routes {
            map: Mutex::new(Memo::default()),
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
        let replaced = map.by_node.insert(key.into_boxed_slice(), answer);
        drop(map);
        drop(replaced); // after the lock: a release may run Python code
        Ok(())
    }

    /// ``share(subscription_id, (walker, extra), excluded)``: the answer of ``(id, node)``
    /// for every node text that is not empty, not in ``excluded`` and has no answer of its
    /// own: ``(walker, node, extra)``, the node name its key carries being the node itself.
    fn share(
        &self,
        subscription_id: u32,
        answer: (Bound<'_, Walker>, Bound<'_, PyAny>),
        excluded: Vec<String>,
    ) {
        let (walker, extra) = answer;
        let shared = Shared {
            walker: walker.unbind(),
            extra: extra.unbind(),
            excluded: excluded.into_iter().map(String::into_boxed_str).collect(),
        };
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let replaced = map.by_id.insert(subscription_id, shared);
        drop(map);
        drop(replaced); // after the lock: a release may run Python code
    }

    /// The answers set, by (id, node) and shared by id.
    fn __len__(&self) -> usize {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.by_node.len() + map.by_id.len()
    }

    fn clear(&self) {
        // The answers are released after the lock: a release may run Python code.
        let taken = std::mem::take(&mut *self.map.lock().unwrap_or_else(|e| e.into_inner()));
        drop(taken);
    }
}

/// A route's answer: the walker, the node name the key carries, the caller's extra.
pub type Routed<'py> = (Bound<'py, Walker>, Arc<str>, Bound<'py, PyAny>);

/// ``route``'s answer for the (id, node) of ``note``, from the memo ``routes`` when it holds
/// one (a ``Routes``, read without a Python object, or a dict). With ``learning`` (contract
/// 4) a route that is asked gets the notification's ``yang-push-subscription`` metadata (or
/// None) as a third argument.
pub fn routed<'py>(
    py: Python<'py>,
    note: &Note<'py>,
    id: &Bound<'py, PyAny>,
    subscription_id: u32,
    route: &Bound<'py, PyAny>,
    routes: Option<&Bound<'py, PyAny>>,
    learning: bool,
) -> PyResult<Option<Routed<'py>>> {
    let node_text = match &note.node {
        None => Some(None),
        Some(node) => node
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok())
            .map(Some),
    };
    let metadata = learning.then(|| match &note.subscription {
        Some(metadata) => metadata.clone(),
        None => py.None().into_bound(py),
    });
    routed_by(
        py,
        node_text,
        &note.node,
        id,
        subscription_id,
        route,
        routes,
        metadata.as_ref(),
    )
}

/// [`routed`] of a node given as text (``node_text``: None when it is no text) and object;
/// ``metadata``: the route's third argument when learning.
#[allow(clippy::too_many_arguments)]
pub fn routed_by<'py>(
    py: Python<'py>,
    node_text: Option<Option<&str>>,
    node: &Option<Bound<'py, PyAny>>,
    id: &Bound<'py, PyAny>,
    subscription_id: u32,
    route: &Bound<'py, PyAny>,
    routes: Option<&Bound<'py, PyAny>>,
    metadata: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Routed<'py>>> {
    let memo = routes.and_then(|r| r.cast::<Routes>().ok());
    if let (Some(memo), Some(node_text)) = (memo, node_text) {
        if let Some(answer) = memo.get().get(py, subscription_id, node_text) {
            return Ok(Some((
                answer.walker.into_bound(py),
                answer.node_name,
                answer.extra.into_bound(py),
            )));
        }
    }
    let node = match node {
        Some(node) => node.clone(),
        None => py.None().into_bound(py),
    };
    let ask = |node: Bound<'py, PyAny>| match metadata {
        None => route.call1((id, node)),
        Some(metadata) => route.call1((id, node, metadata)),
    };
    let answer = match routes.and_then(|r| r.cast::<PyDict>().ok()) {
        None => ask(node)?,
        Some(routes) => {
            let asked = PyTuple::new(py, [id.clone(), node.clone()])?;
            match routes.get_item(&asked)? {
                Some(known) => known,
                None => ask(node)?,
            }
        }
    };
    if answer.is_none() {
        return Ok(None);
    }
    let (walker, node_name, extra): (Bound<'py, Walker>, Bound<'py, PyString>, Bound<'py, PyAny>) =
        answer.extract()?;
    let node_name: Arc<str> = Arc::from(node_name.to_str()?);
    Ok(Some((walker, node_name, extra)))
}
