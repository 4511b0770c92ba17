//! XML notifications (yangkey.xmlnotifications): parsed by roxmltree (no DTD, no entity but
//! the five predefined and character references, UTF-8 only), framed as the reference's general
//! path does, and converted into the JSON-shaped tree of RFC 7951 (namespaces mapped to module
//! names, repeated elements as arrays, ``prefix:name`` leaf text with a known prefix as a
//! ``QNameText``).

use crate::model::{local, plain_node_name, py_strip, uint32_text, Fail, Kind, Note, R};
use crate::pyconv::{get_item, set_item, string};
use crate::Ctx;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use roxmltree::{Document, Node, ParsingOptions};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// libxml2 without XML_PARSE_HUGE refuses text over 10,000,000 bytes and names over 50,000;
/// such documents (and deeper ones) go to the reference, which words the refusal.
const MAX_DOCUMENT: usize = 10_000_000;
const MAX_NAME: usize = 50_000;
const MAX_DEPTH: usize = 128;

/// Module names by namespace, from the ``ns_modules`` a decode is given (a schema index's,
/// built once: the Decoder keeps the table of the last one it saw).
pub struct NsTable {
    /// module id -> (name, Python string)
    modules: Vec<(String, Py<PyAny>)>,
    by_ns: HashMap<String, u32>,
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
            by_ns: HashMap::new(),
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

/// Parse ``text`` with the hardened settings; None: the reference takes it.
fn parse(text: &str) -> Option<Document<'_>> {
    if text.len() > MAX_DOCUMENT {
        return None;
    }
    if declared_encoding_not_utf8(text) {
        return None;
    }
    let options = ParsingOptions {
        allow_dtd: false,
        ..ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, options).ok()?;
    // Depth by node id: a parent comes before its children in document order.
    let mut depths = vec![0u16; doc.descendants().count() + 1];
    // Namespace names are stored once per declaration: checked once each (by address).
    let mut checked: Vec<*const u8> = Vec::new();
    for node in doc.descendants().filter(|n| n.is_element()) {
        for ns in node.namespaces() {
            let uri = ns.uri();
            if !checked.contains(&uri.as_ptr()) {
                if !plain_uri(uri) {
                    return None;
                }
                checked.push(uri.as_ptr());
            }
        }
        let parent = node.parent().map_or(0, |p| depths[p.id().get_usize()]);
        let depth = parent + 1;
        if depth as usize > MAX_DEPTH
            || node.tag_name().name().len() > MAX_NAME
            || node.attributes().any(|a| a.name().len() > MAX_NAME)
        {
            return None;
        }
        depths[node.id().get_usize()] = depth;
    }
    Some(doc)
}

/// A namespace name libxml2 takes as a URI for sure (RFC 3986): a scheme before any ':',
/// unreserved and sub-delimiter characters, '/', '?', one '#', '%' starting an escape.
/// libxml2 refuses others ("xmlns: '...' is not a valid URI"), so anything else goes to the
/// reference, which decides.
fn plain_uri(uri: &str) -> bool {
    let bytes = uri.as_bytes();
    // A ':' before any '/', '?' or '#' ends a scheme (else a relative reference's first
    // segment would hold it, which RFC 3986 does not allow).
    if let Some(end) = uri.find([':', '/', '?', '#']) {
        let scheme = &bytes[..end];
        let valid = scheme.first().is_some_and(u8::is_ascii_alphabetic)
            && scheme
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b));
        if bytes[end] == b':' && !valid {
            return false;
        }
    }
    bytes.iter().filter(|b| **b == b'#').count() <= 1
        && bytes.iter().enumerate().all(|(i, b)| match b {
            b'%' => bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => true,
            _ => b"-._~:/?#@!$&'()*+,;=".contains(b),
        })
}

/// An XML declaration naming an encoding other than UTF-8: libxml2 decodes by it.
fn declared_encoding_not_utf8(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !text.starts_with("<?xml") {
        return false;
    }
    let Some(end) = text.find("?>") else {
        return false;
    };
    let declaration = &text[..end];
    let Some(at) = declaration.find("encoding") else {
        return false;
    };
    let rest = declaration[at + "encoding".len()..].trim_start();
    let Some(rest) = rest.strip_prefix('=') else {
        return true;
    };
    let rest = rest.trim_start();
    let value = rest.trim_start_matches(['"', '\'']);
    let value: String = value
        .chars()
        .take_while(|c| *c != '"' && *c != '\'')
        .collect();
    !value.eq_ignore_ascii_case("utf-8")
}

/// ``element.text`` as lxml gives it with comments and PIs removed: the text before the first
/// child element ("" for none).
fn text<'a>(node: Node<'a, '_>) -> Cow<'a, str> {
    let mut result: Option<Cow<'a, str>> = None;
    for child in node.children() {
        if child.is_element() {
            break;
        }
        if child.is_text() {
            let piece = child.text().unwrap_or("");
            result = Some(match result {
                None => Cow::Borrowed(piece),
                Some(mut joined) => {
                    joined.to_mut().push_str(piece);
                    joined
                }
            });
        }
    }
    result.unwrap_or(Cow::Borrowed(""))
}

fn has_element_child(node: Node<'_, '_>) -> bool {
    node.children().any(|c| c.is_element())
}

fn elements<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(|c| c.is_element())
}

/// The element tree -> the JSON-shaped tree.
struct Conv<'py, 'c, 'd> {
    py: Python<'py>,
    table: &'c NsTable,
    unknown: Vec<(String, Bound<'py, PyAny>)>,
    unknown_ids: HashMap<&'d str, u32>,
    names: HashMap<(&'d str, &'d str, u32), (Bound<'py, PyAny>, u32), Fx>,
    qname_text: Bound<'py, PyAny>,
}

const NO_MODULE: u32 = u32::MAX;

/// A fast hasher for the per-document tag table (keys come from one document, and the table
/// lives for one decode: no flooding to fear from a cheap hash).
#[derive(Clone, Copy, Default)]
struct Fx;

impl std::hash::BuildHasher for Fx {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(buf));
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl<'py, 'c, 'd> Conv<'py, 'c, 'd> {
    fn new(py: Python<'py>, table: &'c NsTable, qname_text: Bound<'py, PyAny>) -> Self {
        Conv {
            py,
            table,
            unknown: Vec::new(),
            unknown_ids: HashMap::new(),
            names: HashMap::with_hasher(Fx),
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
    fn members<'i: 'd>(
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
    fn contents<'i: 'd>(
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

/// ``_Children``: child elements by local name, the first of each; names seen twice.
struct Kids<'a, 'i> {
    first: Vec<(&'a str, Node<'a, 'i>)>,
    repeated: Vec<&'a str>,
}

impl<'a, 'i> Kids<'a, 'i> {
    fn new(node: Node<'a, 'i>) -> Self {
        let mut kids = Kids {
            first: Vec::new(),
            repeated: Vec::new(),
        };
        for child in elements(node) {
            let name = child.tag_name().name();
            if kids.first.iter().any(|(n, _)| *n == name) {
                if !kids.repeated.contains(&name) {
                    kids.repeated.push(name);
                }
            } else {
                kids.first.push((name, child));
            }
        }
        kids
    }

    fn one(&self, ctx: &Ctx<'_, '_>, name: &str) -> R<Option<Node<'a, 'i>>> {
        if self.repeated.contains(&name) {
            return Err(ctx.model.notification_err(
                ctx.py,
                format!("element <{name}> appears more than once"),
                ctx.source,
            ));
        }
        Ok(self
            .first
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, node)| *node))
    }

    /// ``_text``: the child's text, stripped; None when there is no such child.
    fn text(&self, ctx: &Ctx<'_, '_>, name: &str) -> R<Option<String>> {
        Ok(self
            .one(ctx, name)?
            .map(|child| py_strip(&text(child)).to_string()))
    }

    fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.first.iter().map(|(n, _)| *n)
    }
}

/// ``_name_text``: a node name as written (not stripped), checked as the reference does.
fn name_text<'py>(
    ctx: &Ctx<'py, '_>,
    kids: &Kids<'_, '_>,
    name: &str,
    what: &str,
) -> R<Option<Bound<'py, PyAny>>> {
    let Some(child) = kids.one(ctx, name)? else {
        return Ok(None);
    };
    let value = text(child);
    if value.is_empty() {
        return Ok(None);
    }
    if plain_node_name(&value) {
        return Ok(Some(string(ctx.py, &value)?));
    }
    let checked = ctx
        .model
        .node_name
        .bind(ctx.py)
        .call1((value.as_ref(), what, ctx.source))?;
    Ok(if checked.is_none() {
        None
    } else {
        Some(checked)
    })
}

fn uint32<'py>(
    ctx: &Ctx<'py, '_>,
    value: Option<String>,
    check: &Py<PyAny>,
) -> R<Option<Bound<'py, PyAny>>> {
    let Some(value) = value else { return Ok(None) };
    if let Some(n) = uint32_text(&value) {
        return Ok(Some(
            n.into_pyobject(ctx.py).map_err(PyErr::from)?.into_any(),
        ));
    }
    let checked = check.bind(ctx.py).call1((value, ctx.source))?;
    Ok(if checked.is_none() {
        None
    } else {
        Some(checked)
    })
}

/// ``decode_xml``: the document (UTF-8 text) -> Notification fields.
pub fn decode<'py>(ctx: &mut Ctx<'py, '_>, text: &str, note: &mut Note<'py>) -> R<()> {
    let doc = parse(text).ok_or(Fail::Defer)?;
    let table = ctx.table.clone().ok_or(Fail::Defer)?;
    let qname = ctx.model.qname_text.bind(ctx.py).clone();
    let mut conv = Conv::new(ctx.py, &table, qname);
    notification(ctx, &mut conv, doc.root_element(), note)
}

/// ``xml_contents``: datastore contents written as XML text (inside JSON) -> the tree.
pub fn contents_from_text<'py>(ctx: &mut Ctx<'py, '_>, text: &str) -> R<Bound<'py, PyAny>> {
    let wrapped = fragment(text);
    let doc = parse(&wrapped).ok_or(Fail::Defer)?;
    let table = ctx.table.clone().ok_or(Fail::Defer)?;
    let qname = ctx.model.qname_text.bind(ctx.py).clone();
    let mut conv = Conv::new(ctx.py, &table, qname);
    Ok(conv.members(doc.root_element().children(), NO_MODULE)?)
}

/// ``_parse_fragment``'s text: stripped (ASCII whitespace, as bytes.strip), an XML
/// declaration dropped, under the ``yangkey-contents`` wrapper.
fn fragment(text: &str) -> String {
    let mut stripped =
        text.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'));
    if stripped.starts_with("<?xml") {
        if let Some(end) = stripped.find("?>") {
            stripped = &stripped[end + 2..];
        }
    }
    format!("<yangkey-contents>{stripped}</yangkey-contents>")
}

fn notification<'py, 'd>(
    ctx: &mut Ctx<'py, '_>,
    conv: &mut Conv<'py, '_, 'd>,
    element: Node<'d, '_>,
    note: &mut Note<'py>,
) -> R<()> {
    let py = ctx.py;
    let tag = element.tag_name();
    let namespace = tag.namespace().unwrap_or("");
    let local_name = tag.name();
    let kids = Kids::new(element);
    if local_name == "message" && namespace == ctx.model.ns_telemetry {
        if let Some(manifest) = kids.one(ctx, "network-node-manifest")? {
            if note.node.is_none() {
                note.node = name_text(
                    ctx,
                    &Kids::new(manifest),
                    "name",
                    "network-node-manifest name",
                )?;
            }
        }
        if let Some(metadata) = kids.one(ctx, "telemetry-message-metadata")? {
            let meta = Kids::new(metadata);
            if let Some(subscription) = meta.one(ctx, "yang-push-subscription")? {
                let members = conv.members(elements(subscription), NO_MODULE)?;
                let by_local = PyDict::new(py);
                for (key, value) in members.cast::<PyDict>().map_err(PyErr::from)?.iter() {
                    let key: String = key.extract()?;
                    by_local.set_item(local(&key), value)?;
                }
                if let Some(filter) = Kids::new(subscription).one(ctx, "xpath-filter")? {
                    let namespaces = PyDict::new(py);
                    for ns in filter.namespaces() {
                        if let Some(prefix) = ns.name() {
                            if prefix != "xml" {
                                namespaces.set_item(prefix, ns.uri())?;
                            }
                        }
                    }
                    by_local.set_item("namespaces", namespaces)?;
                }
                note.subscription = Some(by_local.into_any());
            }
            let time_set = note
                .event_time
                .as_ref()
                .is_some_and(|t| t.is_truthy().unwrap_or(false));
            if !time_set {
                note.event_time = meta
                    .text(ctx, "node-export-timestamp")?
                    .map(|t| string(py, &t))
                    .transpose()?;
            }
        }
        let inner = match kids.one(ctx, "payload")? {
            Some(payload) => elements(payload).next(),
            None => None,
        };
        let Some(inner) = inner else {
            return Err(ctx.model.framing(
                py,
                "telemetry message has no payload".into(),
                ctx.source,
            ));
        };
        return notification(ctx, conv, inner, note);
    }
    if local_name == "envelope" {
        if let Some(time) = kids.text(ctx, "event-time")?.filter(|t| !t.is_empty()) {
            note.event_time = Some(string(py, &time)?);
        }
        if let Some(node) = name_text(ctx, &kids, "hostname", "hostname")? {
            note.node = Some(node);
        }
        let sequence = kids.text(ctx, "sequence-number")?;
        note.sequence_number = uint32(ctx, sequence, &ctx.model.sequence_number)?;
        let inner = match kids.one(ctx, "contents")? {
            Some(contents) => elements(contents).next(),
            None => None,
        };
        let Some(inner) = inner else {
            return Err(ctx
                .model
                .framing(py, "envelope has no contents".into(), ctx.source));
        };
        return notification(ctx, conv, inner, note);
    }
    if local_name == "notification" {
        if let Some(time) = kids.text(ctx, "eventTime")?.filter(|t| !t.is_empty()) {
            note.event_time = Some(string(py, &time)?);
        }
        let node = match name_text(ctx, &kids, "hostname", "hostname")? {
            Some(node) => Some(node),
            None => name_text(ctx, &kids, "sysName", "sysName")?,
        };
        if node.is_some() {
            note.node = node;
        }
        let sequence = match kids.text(ctx, "sequence-number")? {
            Some(sequence) => Some(sequence),
            None => kids.text(ctx, "sequenceNumber")?,
        };
        if sequence.is_some() {
            note.sequence_number = uint32(ctx, sequence, &ctx.model.sequence_number)?;
        }
        let push = match kids.one(ctx, "push-update")? {
            Some(push) => Some(push),
            None => kids.one(ctx, "push-change-update")?,
        };
        let Some(push) = push else {
            const HEADER: [&str; 5] = [
                "eventTime",
                "hostname",
                "sysName",
                "sequence-number",
                "sequenceNumber",
            ];
            let others: Vec<&str> = kids
                .names()
                .filter(|n| !HEADER.contains(n))
                .take(5)
                .collect();
            let but = if others.is_empty() {
                String::new()
            } else {
                format!(" but <{}>", others.join(">, <"))
            };
            return Err(ctx.model.framing(
                py,
                format!("NETCONF notification carries no push-update or push-change-update{but}"),
                ctx.source,
            ));
        };
        return notification(ctx, conv, push, note);
    }
    if local_name == "push-update" || local_name == "push-change-update" {
        return push(ctx, conv, &kids, local_name == "push-update", note);
    }
    Err(ctx.model.framing(
        py,
        format!("no push-update or push-change-update found (root element <{local_name}>)"),
        ctx.source,
    ))
}

fn push<'py, 'd>(
    ctx: &mut Ctx<'py, '_>,
    conv: &mut Conv<'py, '_, 'd>,
    kids: &Kids<'d, '_>,
    update: bool,
    note: &mut Note<'py>,
) -> R<()> {
    let py = ctx.py;
    note.kind = if update {
        Kind::PushUpdate
    } else {
        Kind::PushChangeUpdate
    };
    let id = match kids.text(ctx, "id")? {
        Some(id) => Some(id),
        None => kids.text(ctx, "subscription-id")?,
    };
    note.subscription_id = uint32(ctx, id, &ctx.model.subscription_id)?;
    if update {
        let contents = match kids.one(ctx, "datastore-contents")? {
            Some(contents) => Some(contents),
            None => match kids.one(ctx, "datastore-contents-xml")? {
                Some(legacy) => {
                    let legacy_text = text(legacy);
                    if has_element_child(legacy) || py_strip(&legacy_text).is_empty() {
                        Some(legacy)
                    } else {
                        // XML text inside the element: parsed on its own, converted here.
                        let wrapped = fragment(&legacy_text);
                        let doc = parse(&wrapped).ok_or(Fail::Defer)?;
                        let table = ctx.table.clone().ok_or(Fail::Defer)?;
                        let qname = ctx.model.qname_text.bind(py).clone();
                        let mut conv = Conv::new(py, &table, qname);
                        return conv.contents(ctx, doc.root_element(), note);
                    }
                }
                None => {
                    let others: Vec<&str> = kids
                        .names()
                        .filter(|n| {
                            !ctx.model.push_header.iter().any(|h| h == n) && n.contains("content")
                        })
                        .take(5)
                        .collect();
                    if !others.is_empty() {
                        return Err(ctx.model.framing(
                            py,
                            format!(
                                "push-update has no datastore-contents but <{}>: no framing yangkey reads",
                                others.join(">, <")
                            ),
                            ctx.source,
                        ));
                    }
                    None
                }
            },
        };
        return match contents {
            Some(contents) => conv.contents(ctx, contents, note),
            None => {
                note.data = Some(PyDict::new(py).into_any());
                Ok(())
            }
        };
    }
    let patch = match kids.one(ctx, "datastore-changes")? {
        Some(changes) => Kids::new(changes).one(ctx, "yang-patch")?,
        None => None,
    };
    let Some(patch) = patch else {
        return Err(ctx.model.framing(
            py,
            "push-change-update has no datastore-changes/yang-patch".into(),
            ctx.source,
        ));
    };
    let edits = PyList::empty(py);
    let edit_class = ctx.model.edit.bind(py).clone();
    for edit in elements(patch) {
        if edit.tag_name().name() != "edit" {
            continue;
        }
        let fields = Kids::new(edit);
        let target = fields.text(ctx, "target")?;
        let operation = fields.text(ctx, "operation")?;
        let (Some(target), Some(operation)) = (target, operation) else {
            return Err(ctx.model.notification_err(
                py,
                "yang-patch edit without target or operation".into(),
                ctx.source,
            ));
        };
        let value = match fields.one(ctx, "value")? {
            Some(value) => conv.members(elements(value), NO_MODULE)?,
            None => py.None().into_bound(py),
        };
        let edit_id = fields.text(ctx, "edit-id")?.unwrap_or_default();
        let operation = ctx
            .model
            .operation
            .bind(py)
            .call1((operation, ctx.source))?;
        let steps = ctx
            .model
            .parse_target
            .bind(py)
            .call1((target, ctx.source))?;
        edits.append(edit_class.call1((edit_id, operation, steps, value))?)?;
    }
    note.edits = Some(PyTuple::new(py, edits.iter())?.into_any());
    Ok(())
}
