//! yangkey_native: the optional compiled fast path of yangkey (issue 33, phase A: decode).
//!
//! ``Decoder(model).decode(raw, source, ns_modules)`` does in one pass what
//! ``yangkey.notifications.decode`` does (JSON per RFC 7951, XML per RFC 6020/7950 encoding, the
//! framings yangkey reads) and returns the same ``Notification`` or raises the same error. It
//! returns None for a document it leaves to the reference decoder: one its parsers refuse
//! (malformed, an encoding other than UTF-8, a DTD, an entity, nesting or size past the
//! limits), whose error the reference words. The Python adapter is ``yangkey/native.py``.

mod direct;
mod fastframe;
mod feed;
mod feedvalue;
mod hashing;
mod json;
mod jsonframe;
mod model;
mod patchscan;
mod pyconv;
mod rdkafka;
mod routes;
mod sink;
mod tape;
mod walk;
mod xmlconv;
mod xmlfast;
mod xmlfeed;
mod xmlframe;
mod xmlkeys;
mod xmlparse;
mod xmlpatch;
mod xmltape;

use model::{Fail, Model, Note};
use pyconv::NameCache;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use std::sync::{Arc, Mutex, TryLockError};
use xmlconv::NsTable;

/// The interface version: yangkey uses this module only when it expects the same number.
/// Raise it on any change of what ``Decoder`` takes or returns.
const CONTRACT: u32 = 6;

pub struct Ctx<'py, 'a> {
    pub py: Python<'py>,
    pub model: &'a Model,
    pub source: &'a Bound<'py, PyAny>,
    pub names: &'a mut NameCache,
    pub table: Option<Arc<NsTable>>,
    /// The selector of an XML push-update's data (``decode``'s ``wanted``), or None.
    pub wanted: Option<&'a Bound<'py, PyAny>>,
    /// ``Decoder.keys``: a push-update's datastore-contents stay in the tape
    /// (``Note::contents``); anything else a key pass does not read defers.
    pub keys_only: bool,
}

struct State {
    names: NameCache,
    /// The namespace table of the last ``ns_modules`` seen (the object kept, compared by
    /// identity: a schema index's map is built once and never changed).
    table: Option<(Py<PyAny>, Arc<NsTable>)>,
    /// XML documents ``keys_xml`` read with the full parser (the fast reader left them).
    full_parses: u32,
}

impl State {
    fn new() -> Self {
        State {
            names: NameCache::new(),
            table: None,
            full_parses: 0,
        }
    }
}

/// The Decoder's caches from ``guard`` (``self.state.try_lock()``), or fresh ones in ``own``
/// when another thread is decoding with this Decoder (it let this one in while it ran Python
/// code): waiting here, holding the GIL, would never end.
fn state_of<'a>(
    guard: &'a mut std::sync::TryLockResult<std::sync::MutexGuard<'_, State>>,
    own: &'a mut Option<State>,
) -> &'a mut State {
    match guard {
        Ok(state) => state,
        Err(TryLockError::Poisoned(poisoned)) => poisoned.get_mut(),
        Err(TryLockError::WouldBlock) => own.insert(State::new()),
    }
}

/// Decodes notifications into the model's ``Notification``; see the module doc.
#[pyclass(module = "yangkey_native", frozen)]
struct Decoder {
    model: Model,
    state: Mutex<State>,
}

#[derive(PartialEq)]
enum Start {
    Json,
    Xml,
    Empty,
    Other,
}

/// ``decode``'s choice of decoder by the first byte, after ASCII whitespace and a UTF-8 BOM.
fn start(data: &[u8]) -> Start {
    let first = match data.first() {
        Some(b'{') => return Start::Json,
        Some(b'<') => return Start::Xml,
        _ => {
            let trimmed = data.trim_ascii_start();
            let trimmed = trimmed.strip_prefix(b"\xef\xbb\xbf").unwrap_or(trimmed);
            trimmed.trim_ascii_start().first().copied()
        }
    };
    match first {
        Some(b'<') => Start::Xml,
        Some(b'{' | b'[') => Start::Json,
        _ if data
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')) =>
        {
            Start::Empty
        }
        _ => Start::Other,
    }
}

impl Decoder {
    fn run<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        source: &Bound<'py, PyAny>,
        ns_modules: &Bound<'py, PyAny>,
        wanted: Option<&Bound<'py, PyAny>>,
    ) -> Result<Bound<'py, PyAny>, Fail> {
        let mut guard = self.state.try_lock();
        let mut own = None;
        let state = state_of(&mut guard, &mut own);
        let table = match &state.table {
            Some((seen, table)) if seen.bind(py).is(ns_modules) => table.clone(),
            _ => {
                let table = Arc::new(NsTable::new(ns_modules)?);
                state.table = Some((ns_modules.clone().unbind(), table.clone()));
                table
            }
        };
        state.names.next_document();
        let mut ctx = Ctx {
            py,
            model: &self.model,
            source,
            names: &mut state.names,
            table: Some(table),
            wanted,
            keys_only: false,
        };
        let mut note = Note::new();
        match start(data) {
            Start::Json => {
                let doc = match json::parse(data, true) {
                    Ok(doc) => doc,
                    Err(json::JsonError::Refused) => return Err(Fail::Defer),
                    Err(json::JsonError::Duplicate(name)) => {
                        let quoted = PyString::new(py, &name).repr()?;
                        return Err(self.model.notification_err(
                            py,
                            format!("JSON object has member {quoted} more than once"),
                            source,
                        ));
                    }
                };
                jsonframe::notification(&mut ctx, doc.root(), &mut note)?;
                Ok(note.build(py, &self.model, source, true)?)
            }
            Start::Xml => {
                let text = std::str::from_utf8(data).map_err(|_| Fail::Defer)?;
                xmlframe::decode(&mut ctx, text, &mut note)?;
                Ok(note.build(py, &self.model, source, false)?)
            }
            Start::Empty => Err(self.model.error(
                py,
                &self.model.input_error,
                "empty notification".into(),
                source,
            )),
            Start::Other => Err(self.model.error(
                py,
                &self.model.input_error,
                "not a JSON or XML notification (first byte is neither '{' nor '<')".into(),
                source,
            )),
        }
    }

    /// The JSON prologue of ``keys`` and ``instances``: the parsed document, and in ``note``
    /// what its framing says (read as ``decode`` reads it; ``keys_only``: a push-update's
    /// datastore-contents and a yang-patch's edits stay in the tape); None for anything left
    /// to the reference: XML, a document the parser refuses, a framing error (the reference
    /// decodes it and raises its error). The caller holds the state's lock (``state_of``) and
    /// walks with its name cache. Inlined into both: as a call of its own it cost ``keys`` 35
    /// instructions more (callgrind, of ~12,000). The note is filled in the caller's frame:
    /// handed back with the document, it was copied out (~160 bytes) at every call.
    #[inline(always)]
    fn json_note<'py, 'd>(
        &self,
        py: Python<'py>,
        data: &'d [u8],
        source: &Bound<'py, PyAny>,
        state: &mut State,
        note: &mut Note<'py>,
    ) -> Option<tape::Doc<'d>> {
        if start(data) != Start::Json {
            return None; // XML: the reference answers (or keys_xml)
        }
        let doc = json::parse(data, true).ok()?;
        state.names.next_document();
        let mut ctx = Ctx {
            py,
            model: &self.model,
            source,
            names: &mut state.names,
            table: None,
            wanted: None,
            keys_only: true,
        };
        jsonframe::notification(&mut ctx, doc.root(), note).ok()?;
        Some(doc)
    }
}

#[pymethods]
impl Decoder {
    /// ``model``: the classes and checks of yangkey's notification model (see
    /// yangkey/native.py, which builds it).
    #[new]
    fn new(model: &Bound<'_, PyDict>) -> PyResult<Self> {
        Ok(Decoder {
            model: Model::new(model)?,
            state: Mutex::new(State::new()),
        })
    }

    /// One notification's bytes -> ``Notification``; raises the reference's error; None
    /// hands the document to the reference decoder. ``wanted``: the reference's selector of
    /// what an XML push-update's data is converted of.
    #[pyo3(signature = (raw, source, ns_modules, wanted=None))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        raw: &Bound<'py, PyBytes>,
        source: &Bound<'py, PyAny>,
        ns_modules: &Bound<'py, PyAny>,
        wanted: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let wanted = wanted.filter(|w| !w.is_none());
        match self.run(py, raw.as_bytes(), source, ns_modules, wanted) {
            Ok(note) => Ok(Some(note)),
            Err(Fail::Defer) => Ok(None),
            Err(Fail::Raise(err)) => Err(err),
        }
    }

    /// The message keys of a JSON push-update without its data tree in Python (phase B):
    /// the framing read as ``decode`` reads it, then ``route(subscription_id, node)`` (node
    /// None when the notification names none) answers ``(walker, node_name, extra)`` or None
    /// (asked only when ``routes``, a dict of its earlier answers by ``(id, node)``, has none),
    /// and the walker's branches are walked over the parsed document. Returns ``(extra,
    /// subscription_id, sequence_number, event_time, key, branch_keys, xpaths)`` (``xpaths``:
    /// every instance's, sorted, when ``with_xpaths``, else None), or None for
    /// anything it leaves to the reference (not a JSON push-update with datastore-contents,
    /// any error, a value the native canons do not read, no instance found). With
    /// ``with_instances`` (a walker built with feeds), an eighth item: per branch its instance
    /// feed header's bytes or None (feed.rs), from the same walk; None when a feed stops.
    ///
    /// ``learning`` (contract 4): ``route`` is asked ``route(subscription_id, node,
    /// subscription)``, the telemetry-message's ``yang-push-subscription`` metadata (or None)
    /// as the third argument, so that it can answer for a learned subscription.
    #[pyo3(signature = (raw, source, ns_modules, route, with_xpaths=false, routes=None, with_instances=false, learning=false))]
    #[allow(clippy::too_many_arguments)]
    fn keys<'py>(
        &self,
        py: Python<'py>,
        raw: &Bound<'py, PyBytes>,
        source: &Bound<'py, PyAny>,
        ns_modules: &Bound<'py, PyAny>,
        route: &Bound<'py, PyAny>,
        with_xpaths: bool,
        routes: Option<&Bound<'py, PyAny>>,
        with_instances: bool,
        learning: bool,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let mut guard = self.state.try_lock();
        let mut own = None;
        let state = state_of(&mut guard, &mut own);
        let _ = ns_modules; // JSON names modules itself; kept for decode's signature
        let mut note = Note::new();
        let Some(doc) = self.json_note(py, raw.as_bytes(), source, state, &mut note) else {
            return Ok(None);
        };
        let names = &mut state.names;
        let at = match (note.contents, note.patch) {
            (Some(at), _) => at,
            (None, Some(at)) => at, // yang-patch (patchwalk.rs; its feed too: feed.rs)
            _ => return Ok(None),
        };
        let Some(id) = note.subscription_id.as_ref() else {
            return Ok(None);
        };
        let Ok(subscription_id) = id.extract::<u32>() else {
            return Ok(None);
        };
        let Some((walker, node_name, extra)) =
            routes::routed(py, &note, id, subscription_id, route, routes, learning)?
        else {
            return Ok(None);
        };
        let contents = tape::V { doc: &doc, at };
        let mut headers = Vec::new();
        let keyed = if note.patch.is_some() {
            walk::patch_keys(
                py,
                names,
                walker.get(),
                contents,
                &node_name,
                subscription_id,
                with_xpaths,
                with_instances.then_some(&mut headers),
            )
        } else {
            walk::keys(
                py,
                names,
                walker.get(),
                contents,
                &node_name,
                subscription_id,
                with_xpaths,
                with_instances.then_some(&mut headers),
            )
        };
        let Ok((key, branch_keys, xpaths)) = keyed else {
            return Ok(None);
        };
        let none = || py.None().into_bound(py);
        let answer = [
            extra,
            id.clone(),
            note.sequence_number.clone().unwrap_or_else(none),
            note.event_time.clone().unwrap_or_else(none),
            key,
            branch_keys,
            xpaths,
        ];
        // The tuple straight from an array: a vector's allocation per notification otherwise.
        if with_instances {
            let [a, b, c, d, e, f, g] = answer;
            let headers = header_tuple(py, headers)?.into_any();
            return Ok(Some(PyTuple::new(py, [a, b, c, d, e, f, g, headers])?));
        }
        Ok(Some(PyTuple::new(py, answer)?))
    }

    /// The instance feed headers of a JSON push-update (``yangkey ingest``'s): per branch of
    /// ``walker`` (built with feeds) the ``yangkey-instances`` header's bytes or None (no
    /// instance there); None for anything left to the reference (not a JSON push-update with
    /// datastore-contents, any error, no instance at all, a value a feed does not mirror).
    /// ``ns_modules`` (contract 6): an XML push-update's too (xmlfeed.rs); without, XML is None.
    #[pyo3(signature = (raw, source, walker, ns_modules=None))]
    fn instances<'py>(
        &self,
        py: Python<'py>,
        raw: &Bound<'py, PyBytes>,
        source: &Bound<'py, PyAny>,
        walker: &Bound<'py, walk::Walker>,
        ns_modules: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        if let Some(ns_modules) = ns_modules.filter(|_| start(raw.as_bytes()) == Start::Xml) {
            return self.xml_instances(py, raw.as_bytes(), ns_modules, walker);
        }
        let mut guard = self.state.try_lock();
        let mut own = None;
        let state = state_of(&mut guard, &mut own);
        let mut note = Note::new();
        let Some(doc) = self.json_note(py, raw.as_bytes(), source, state, &mut note) else {
            return Ok(None);
        };
        let names = &mut state.names;
        let found = match (note.contents, note.patch) {
            (Some(at), _) => {
                walk::instances(py, names, walker.get(), tape::V { doc: &doc, at }, None)
            }
            // a yang-patch's edits (patchwalk.rs)
            (None, Some(at)) => {
                walk::patch_instances(py, names, walker.get(), tape::V { doc: &doc, at })
            }
            _ => return Ok(None),
        };
        match found {
            Ok(headers) if headers.iter().any(Option::is_some) => {
                Ok(Some(header_tuple(py, headers)?))
            }
            _ => Ok(None),
        }
    }

    /// ``keys`` of an XML push-update (xmlkeys.rs; contract 4): the same arguments and
    /// answer, the datastore contents walked as the JSON-shaped tree the reference converts
    /// them into; a yang-patch's edits as ``keys`` walks a JSON one's (xmlpatch.rs). None for
    /// anything else (JSON, IOS-XE's contents as XML text, a yang-patch in a framing the fast
    /// reader leaves, any error, a value the native canons do not read, no instance found).
    /// ``with_instances`` (contract 6): the eighth item of ``keys``, the instance feed headers
    /// of a push-update or a yang-patch (xmlfeed.rs).
    #[pyo3(signature = (raw, source, ns_modules, route, with_xpaths=false, routes=None, with_instances=false))]
    #[allow(clippy::too_many_arguments)]
    fn keys_xml<'py>(
        &self,
        py: Python<'py>,
        raw: &Bound<'py, PyBytes>,
        source: &Bound<'py, PyAny>,
        ns_modules: &Bound<'py, PyAny>,
        route: &Bound<'py, PyAny>,
        with_xpaths: bool,
        routes: Option<&Bound<'py, PyAny>>,
        with_instances: bool,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.xml_keys(
            py,
            raw.as_bytes(),
            source,
            ns_modules,
            route,
            with_xpaths,
            routes,
            with_instances,
        )
    }

    /// How many documents this decoder's passes have parsed and begun to read (wraps at 2**32):
    /// for tests that a pass answering before the parse (a yang-patch, patchscan.rs) parsed
    /// nothing.
    #[getter]
    fn documents(&self) -> u32 {
        let mut guard = self.state.try_lock();
        let mut own = None;
        state_of(&mut guard, &mut own).names.documents()
    }

    /// How many XML documents ``keys_xml`` has read with the full parser (roxmltree) because
    /// the fast reader's framing left them (wraps at 2**32): for tests that the fast reader
    /// keys a document.
    #[getter]
    fn full_parses(&self) -> u32 {
        let mut guard = self.state.try_lock();
        let mut own = None;
        state_of(&mut guard, &mut own).full_parses
    }

    /// The JSON parse alone, no Python object built: True for a document the native decoder
    /// reads (well formed, no member twice). What a native walk (phase B) starts from; for
    /// benchmarks.
    fn check(&self, raw: &Bound<'_, PyBytes>) -> bool {
        json::parse(raw.as_bytes(), true).is_ok()
    }

    /// The JSON parser alone (duplicate members refused): the tree orjson.loads builds, or
    /// None for a document the native parser refuses. For benchmarks and tests.
    fn loads<'py>(
        &self,
        py: Python<'py>,
        raw: &Bound<'py, PyBytes>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        // No Python code runs while the lock is held here: nothing can wait on it.
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.names.next_document();
        match json::parse(raw.as_bytes(), true) {
            Ok(doc) => Ok(Some(pyconv::to_py(py, doc.root(), &mut state.names)?)),
            Err(_) => Ok(None),
        }
    }
}

/// Per branch its feed header as bytes, or None.
fn header_tuple(py: Python<'_>, headers: Vec<Option<Vec<u8>>>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(
        py,
        headers.into_iter().map(|header| match header {
            Some(header) => PyBytes::new(py, &header).into_any(),
            None => py.None().into_bound(py),
        }),
    )
}

#[pymodule]
fn yangkey_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CONTRACT", CONTRACT)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Decoder>()?;
    m.add_class::<walk::Walker>()?;
    m.add_class::<routes::Routes>()?;
    m.add_class::<sink::RdProducer>()?;
    m.add_class::<direct::Outbox>()?;
    m.add("RdKafkaError", m.py().get_type::<sink::RdKafkaError>())?;
    m.add_function(wrap_pyfunction!(sink::rdkafka_version, m)?)?;
    Ok(())
}
