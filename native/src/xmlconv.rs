//! XML elements -> the JSON-shaped tree of RFC 7951 (yangkey.xmlnotifications'
//! ``_XmlConverter``): namespaces mapped to module names, a member qualified where its module
//! changes, repeated elements as arrays, ``prefix:name`` leaf text with a known prefix as a
//! ``QNameText``; all of it, or only what a derivation reads (``wanted``, as a trie).

use crate::hashing::Seeded;
use crate::model::{Note, R};
use crate::pyconv::{get_item, set_item, string};
use crate::xmlparse::{elements, has_element_child, text};
use crate::Ctx;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use roxmltree::Node;
use std::collections::HashMap;
use std::sync::Arc;

/// Module names by namespace, from the ``ns_modules`` a decode is given (a schema index's,
/// built once: the Decoder keeps the table of the last one it saw).
pub struct NsTable {
    /// module id -> (name, Python string)
    modules: Vec<(String, Py<PyAny>)>,
    /// (hashed by [`Seeded`]: SipHash of a namespace name cost as much as a small
    /// document's tape)
    by_ns: HashMap<String, u32, Seeded>,
    /// module id -> its namespaces, in the map's order
    namespaces: Vec<Vec<String>>,
    by_module: HashMap<String, u32>,
    /// Tries of the ``Wanted`` selections seen (by identity, the object kept: a derivation's
    /// is built once), for this table's namespaces.
    tries: std::sync::Mutex<Vec<(Py<PyAny>, Arc<Level>)>>,
}

/// A ``Wanted`` in tags (``_XmlConverter.trie``): (namespace, local name) -> the member name,
/// its module, and what to read below it (None: everything).
pub struct Level {
    entries: Vec<Entry>,
}

struct Entry {
    ns: String,
    local: String,
    member: Py<PyAny>,
    module: u32,
    below: Option<Arc<Level>>,
}

const TRIES_MAX: usize = 1024;

impl NsTable {
    pub fn new(ns_modules: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut table = NsTable {
            modules: Vec::new(),
            by_ns: HashMap::default(),
            namespaces: Vec::new(),
            by_module: HashMap::new(),
            tries: std::sync::Mutex::new(Vec::new()),
        };
        let mut ids: HashMap<String, u32> = HashMap::new();
        for item in ns_modules.call_method0("items")?.try_iter()? {
            let (ns, module): (String, Bound<'_, PyAny>) = item?.extract()?;
            let name: String = module.extract()?;
            let id = match ids.get(&name) {
                Some(id) => *id,
                None => {
                    let id = table.modules.len() as u32;
                    table.modules.push((name.clone(), module.unbind()));
                    table.namespaces.push(Vec::new());
                    ids.insert(name, id);
                    id
                }
            };
            table.namespaces[id as usize].push(ns.clone());
            table.by_ns.insert(ns, id);
        }
        table.by_module = ids;
        Ok(table)
    }

    /// The module id of namespace ``ns``, if the map names it (xmlkeys.rs).
    pub fn module_of(&self, ns: &str) -> Option<u32> {
        self.by_ns.get(ns).copied()
    }

    /// How many modules the map names: ids past them are the document's own.
    pub fn known(&self) -> usize {
        self.modules.len()
    }

    /// The name of module ``id`` (below [`NsTable::known`]).
    pub fn module_name(&self, id: u32) -> &str {
        &self.modules[id as usize].0
    }

    /// The trie of ``wanted`` (cached by identity).
    /// The lock is never held while Python runs (building a trie reads the selection
    /// through Python calls, which may let another thread in).
    fn trie(&self, wanted: &Bound<'_, PyAny>) -> PyResult<Arc<Level>> {
        {
            let tries = self.tries.lock().unwrap_or_else(|e| e.into_inner());
            let seen = tries
                .iter()
                .find(|(seen, _)| seen.bind(wanted.py()).is(wanted));
            if let Some((_, level)) = seen {
                return Ok(level.clone());
            }
        }
        let level = Arc::new(self.level(wanted, None)?);
        let mut tries = self.tries.lock().unwrap_or_else(|e| e.into_inner());
        if tries.len() >= TRIES_MAX {
            tries.clear();
        }
        tries.push((wanted.clone().unbind(), level.clone()));
        Ok(level)
    }

    /// ``_trie``: one level of ``wanted`` under a parent of module ``parent``.
    fn level(&self, wanted: &Bound<'_, PyAny>, parent: Option<&str>) -> PyResult<Level> {
        let py = wanted.py();
        let mut level = Level {
            entries: Vec::new(),
        };
        for item in wanted.call_method0("items")?.try_iter()? {
            let (key, inner): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            let (module, local): (String, String) = key.extract()?;
            let member = if parent == Some(module.as_str()) {
                local.clone()
            } else {
                format!("{module}:{local}")
            };
            let Some(id) = self.by_module.get(&module) else {
                continue;
            };
            for ns in &self.namespaces[*id as usize] {
                let below = if inner.is_none() {
                    None
                } else {
                    Some(Arc::new(self.level(&inner, Some(&module))?))
                };
                let entry = Entry {
                    ns: ns.clone(),
                    local: local.clone(),
                    member: string(py, &member)?.unbind(),
                    module: *id,
                    below,
                };
                // A tag named again replaces the first (a dict's assignment).
                match level
                    .entries
                    .iter_mut()
                    .find(|e| e.ns == *ns && e.local == local)
                {
                    Some(seen) => *seen = entry,
                    None => level.entries.push(entry),
                }
            }
        }
        Ok(level)
    }
}

/// The element tree -> the JSON-shaped tree.
pub struct Conv<'py, 'c, 'd> {
    py: Python<'py>,
    table: &'c NsTable,
    unknown: Vec<(String, Bound<'py, PyAny>)>,
    unknown_ids: HashMap<&'d str, u32>,
    /// (hashed by the table's [`Seeded`]: tags come from devices; one seed drawn per table,
    /// not per document)
    names: HashMap<(&'d str, &'d str, u32), (Bound<'py, PyAny>, u32), Seeded>,
    qname_text: Bound<'py, PyAny>,
}

pub const NO_MODULE: u32 = u32::MAX;

impl<'py, 'c, 'd> Conv<'py, 'c, 'd> {
    pub fn new(py: Python<'py>, table: &'c NsTable, qname_text: Bound<'py, PyAny>) -> Self {
        Conv {
            py,
            table,
            unknown: Vec::new(),
            unknown_ids: HashMap::new(),
            names: HashMap::with_hasher(*table.by_ns.hasher()),
            qname_text,
        }
    }

    fn module_id(&mut self, ns: &'d str) -> PyResult<u32> {
        if let Some(id) = self.table.by_ns.get(ns) {
            return Ok(*id);
        }
        if let Some(id) = self.unknown_ids.get(ns) {
            return Ok(*id);
        }
        let id = (self.table.modules.len() + self.unknown.len()) as u32;
        let name = format!("{{{ns}}}");
        let py_name = string(self.py, &name)?;
        self.unknown.push((name, py_name));
        self.unknown_ids.insert(ns, id);
        Ok(id)
    }

    fn module_name(&self, id: u32) -> &str {
        let known = self.table.modules.len();
        if (id as usize) < known {
            &self.table.modules[id as usize].0
        } else {
            &self.unknown[id as usize - known].0
        }
    }

    /// (member name, module id) of an element under a parent of module ``parent``.
    fn name(&mut self, node: Node<'d, '_>, parent: u32) -> PyResult<(Bound<'py, PyAny>, u32)> {
        let tag = node.tag_name();
        let ns: &'d str = tag.namespace().unwrap_or("");
        let local_name: &'d str = tag.name();
        if let Some((member, module)) = self.names.get(&(ns, local_name, parent)) {
            return Ok((member.clone(), *module));
        }
        let module = self.module_id(ns)?;
        let same = parent != NO_MODULE && self.module_name(module) == self.module_name(parent);
        let member = if same {
            string(self.py, local_name)?
        } else {
            string(
                self.py,
                &format!("{}:{}", self.module_name(module), local_name),
            )?
        };
        self.names
            .insert((ns, local_name, parent), (member.clone(), module));
        Ok((member, module))
    }

    fn leaf(&mut self, node: Node<'d, '_>) -> PyResult<Bound<'py, PyAny>> {
        let text = text(node);
        if let Some(colon) = text.find(':') {
            let prefix = &text[..colon];
            if !prefix.is_empty() && !text.contains(' ') && prefix != "xml" {
                if let Some(ns) = node.lookup_namespace_uri(Some(prefix)) {
                    if let Some(id) = self.table.by_ns.get(ns) {
                        let module = &self.table.modules[*id as usize].0;
                        let value = format!("{module}:{}", &text[colon + 1..]);
                        return self.qname_text.call1((text.as_ref(), value));
                    }
                }
            }
        }
        string(self.py, &text)
    }

    /// ``members``: the children's dict under a parent of module ``parent``.
    pub fn members<'i: 'd>(
        &mut self,
        children: impl Iterator<Item = Node<'d, 'i>>,
        parent: u32,
    ) -> PyResult<Bound<'py, PyAny>> {
        let result = PyDict::new(self.py).into_any();
        for child in children {
            if !child.is_element() {
                continue;
            }
            let (member, module) = self.name(child, parent)?;
            let value = if has_element_child(child) {
                self.members(child.children(), module)?
            } else {
                self.leaf(child)?
            };
            add(self.py, &result, &member, value)?;
        }
        Ok(result)
    }
}

impl<'py, 'c, 'd> Conv<'py, 'c, 'd> {
    /// ``pruned``: the members of ``element`` along ``level`` only. An element with element
    /// children is a dict and one without is text, whatever is left out.
    fn pruned<'i: 'd>(
        &mut self,
        element: Node<'d, 'i>,
        level: &Level,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let result = PyDict::new(py).into_any();
        if level.entries.is_empty() {
            return Ok(result);
        }
        for child in elements(element) {
            let tag = child.tag_name();
            // An element in no namespace has no {ns}local tag, so no entry names it.
            let Some(ns) = tag.namespace() else { continue };
            let local_name = tag.name();
            let Some(entry) = level
                .entries
                .iter()
                .find(|e| e.ns == ns && e.local == local_name)
            else {
                continue;
            };
            let value = if has_element_child(child) {
                match &entry.below {
                    None => self.members(child.children(), entry.module)?,
                    Some(inner) => self.pruned(child, inner)?,
                }
            } else {
                self.leaf(child)?
            };
            add(py, &result, entry.member.bind(py), value)?;
        }
        Ok(result)
    }

    /// A push-update's contents into ``note.data``: along what the selector wants when it
    /// wants a part, else everything.
    pub fn contents<'i: 'd>(
        &mut self,
        ctx: &mut Ctx<'py, '_>,
        contents: Node<'d, 'i>,
        note: &mut Note<'py>,
    ) -> R<()> {
        let py = self.py;
        let selected = match ctx.wanted {
            Some(selector) => {
                let shown = note.show(py, ctx.model, ctx.source)?;
                let selected = selector.call1((shown,))?;
                if selected.is_none() {
                    None
                } else {
                    Some(selected)
                }
            }
            None => None,
        };
        match selected {
            Some(selected) => {
                let level = self.table.trie(&selected)?;
                note.data = Some(self.pruned(contents, &level)?);
                note.pruned = has_element_child(contents);
            }
            None => note.data = Some(self.members(contents.children(), NO_MODULE)?),
        }
        Ok(())
    }
}

/// ``result[member] = value``, or ``_again``: a repeated element makes an array.
fn add<'py>(
    py: Python<'py>,
    result: &Bound<'py, PyAny>,
    member: &Bound<'py, PyAny>,
    value: Bound<'py, PyAny>,
) -> PyResult<()> {
    match get_item(py, result, member) {
        None => set_item(py, result, member, &value),
        Some(seen) => {
            if let Ok(list) = seen.cast::<PyList>() {
                if seen.get_type().is(py.get_type::<PyList>()) {
                    return list.append(value);
                }
            }
            let list = PyList::new(py, [seen, value])?;
            set_item(py, result, member, list.as_any())
        }
    }
}
