//! Phase B for XML push-updates (issue 33): ``Decoder.keys_xml``. The document is read by the
//! fast reader (xmlfast.rs, framing in fastframe.rs) or parsed with the hardened parser
//! (xmlparse.rs) and its framing read as ``decode`` reads it (xmlframe.rs: telemetry message,
//! envelope, NETCONF notification with Huawei's and IOS-XE's legacy leaves), the datastore
//! contents left in place; they are then written into the tape a JSON document is parsed into
//! (xmltape.rs), as the JSON-shaped tree of RFC 7951 that
//! ``yangkey.xmltree.XmlConverter.members`` builds (namespaces mapped to module names through
//! ``ns_modules``, a member qualified where its module changes, repeated elements as an array
//! at the first one's place, leaf text as lxml gives it, ``prefix:name`` text with a known
//! prefix noted as the reference's ``QNameText``), and walked by walk.rs, which canonicalizes
//! the key values and composes the keys. No Python object is built for the data.
//!
//! A yang-patch goes to xmlpatch.rs. Anything else (IOS-XE's contents as XML text, an error, a
//! value the native canons leave to Python) returns None: the reference answers, and words
//! any error.

use crate::fastframe::{self, Frame};
use crate::model::Note;
use crate::routes::{routed, routed_by, Routed};
use crate::walk::{self, QNames};
use crate::xmlconv::{Conv, NsTable};
use crate::xmlfast::{self, Fast};
use crate::xmlparse::parse;
pub(crate) use crate::xmltape::members_tape; // xmlpatch.rs names it here
use crate::xmltape::tape;
use crate::{start, state_of, Ctx, Decoder, Start};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use roxmltree::NodeId;
use std::sync::Arc;

impl Decoder {
    /// The namespace table of ``ns_modules`` (the last one's, kept), or None.
    pub(crate) fn ns_table(
        &self,
        state: &mut crate::State,
        ns_modules: &Bound<'_, PyAny>,
    ) -> Option<Arc<NsTable>> {
        let py = ns_modules.py();
        Some(match &state.table {
            Some((seen, table)) if seen.bind(py).is(ns_modules) => table.clone(),
            _ => {
                let table = Arc::new(NsTable::new(ns_modules).ok()?);
                state.table = Some((ns_modules.clone().unbind(), table.clone()));
                table
            }
        })
    }

    /// The route of an XML document's subscription id and node (routes.rs), with the
    /// namespace table and the id as Python holds it; None: the reference answers.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub(crate) fn xml_route<'py>(
        &self,
        py: Python<'py>,
        state: &mut crate::State,
        ns_modules: &Bound<'py, PyAny>,
        node: Option<&str>,
        subscription_id: u32,
        route: &Bound<'py, PyAny>,
        routes: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<(Arc<NsTable>, Bound<'py, PyAny>, Routed<'py>)>> {
        let Some(table) = self.ns_table(state, ns_modules) else {
            return Ok(None);
        };
        state.names.next_document();
        let id = subscription_id.into_pyobject(py)?.into_any();
        let name = match node {
            Some(name) => Some(state.names.name(py, name)?),
            None => None,
        };
        let routed = routed_by(
            py,
            Some(node),
            &name,
            &id,
            subscription_id,
            route,
            routes,
            None,
        )?;
        Ok(routed.map(|routed| (table, id, routed)))
    }

    /// The keys of a document the fast reader took (xmlfast.rs): the same answer as the
    /// full parser's path, without its tree.
    #[allow(clippy::too_many_arguments)]
    fn fast_keys<'py>(
        &self,
        py: Python<'py>,
        fast: &Fast<'_>,
        frame: &Frame<'_>,
        ns_modules: &Bound<'py, PyAny>,
        route: &Bound<'py, PyAny>,
        with_xpaths: bool,
        routes: Option<&Bound<'py, PyAny>>,
        with_instances: bool,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let mut guard = self.state.try_lock();
        let mut own = None;
        let state = state_of(&mut guard, &mut own);
        let Some((table, id, (walker, node_name, extra))) = self.xml_route(
            py,
            state,
            ns_modules,
            frame.node,
            frame.subscription_id,
            route,
            routes,
        )?
        else {
            return Ok(None);
        };
        let walk = walker.get();
        let reads = (!with_instances).then(|| walk.names());
        let (tape, qnames, _) = members_tape(fast, &table, &[frame.contents], reads);
        let qnames = QNames {
            class: self.model.qname_text.clone_ref(py),
            at: qnames,
        };
        let mut headers = Vec::new();
        let Ok((key, branch_keys, xpaths)) = walk::keys_with(
            py,
            &mut state.names,
            walk,
            tape.root(),
            &node_name,
            frame.subscription_id,
            with_xpaths,
            with_instances.then_some(&mut headers),
            Some(&qnames),
        ) else {
            return Ok(None);
        };
        let sequence = frame.sequence_number;
        let found = answer(
            py,
            [extra, id],
            sequence,
            frame.event_time,
            [key, branch_keys, xpaths],
        )?;
        crate::xmlfeed::fed(py, found, with_instances.then_some(headers))
    }

    /// ``Decoder.keys_xml`` (lib.rs): ``Decoder.keys`` of an XML push-update.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn xml_keys<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        source: &Bound<'py, PyAny>,
        ns_modules: &Bound<'py, PyAny>,
        route: &Bound<'py, PyAny>,
        with_xpaths: bool,
        routes: Option<&Bound<'py, PyAny>>,
        with_instances: bool,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        if start(data) != Start::Xml {
            return Ok(None); // JSON: keys answers
        }
        if crate::patchscan::is_xml_patch(data) {
            // yang-patch: the fast reader's framings keyed natively (xmlpatch.rs)
            return self.xml_patch(
                py,
                data,
                ns_modules,
                route,
                with_xpaths,
                routes,
                with_instances,
            );
        }
        let Some(text) = xmlfast::utf8(data) else {
            return Ok(None);
        };
        // The fast reader decides what is well formed: roxmltree (xmlparse.rs, which hands
        // over what it knows roxmltree takes and libxml2 refuses) only reads, for the framings
        // the fast one leaves to it (IOS-XE's datastore-contents-xml as XML text, which it
        // defers; an empty update), documents the fast reader took. Anything else: the
        // reference.
        let Ok(fast) = xmlfast::parse(text) else {
            return Ok(None);
        };
        if let Ok(frame) = fastframe::frame(&fast, &self.model.ns_telemetry) {
            return self.fast_keys(
                py,
                &fast,
                &frame,
                ns_modules,
                route,
                with_xpaths,
                routes,
                with_instances,
            );
        }
        drop(fast);
        let Some(doc) = parse(text) else {
            return Ok(None);
        };
        let mut guard = self.state.try_lock();
        let mut own = None;
        let state = state_of(&mut guard, &mut own);
        state.full_parses = state.full_parses.wrapping_add(1);
        let Some(table) = self.ns_table(state, ns_modules) else {
            return Ok(None);
        };
        state.names.next_document();
        let mut ctx = Ctx {
            py,
            model: &self.model,
            source,
            names: &mut state.names,
            table: Some(table.clone()),
            wanted: None,
            keys_only: true,
        };
        let mut note = Note::new();
        let qname_text = self.model.qname_text.bind(py).clone();
        let mut conv = Conv::new(py, &table, qname_text);
        let root = doc.root_element();
        if crate::xmlframe::notification(&mut ctx, &mut conv, root, &mut note).is_err() {
            return Ok(None); // the reference decodes it and raises its error
        }
        let (Some(at), Some(id)) = (note.contents, note.subscription_id.as_ref()) else {
            return Ok(None);
        };
        let Ok(subscription_id) = id.extract::<u32>() else {
            return Ok(None);
        };
        let Some(contents) = doc.get_node(NodeId::new(at as u32)) else {
            return Ok(None);
        };
        let Some((walker, node_name, extra)) =
            routed(py, &note, id, subscription_id, route, routes, false)?
        else {
            return Ok(None);
        };
        let (tape, qnames) = tape(text, &table, contents);
        let qnames = QNames {
            class: self.model.qname_text.clone_ref(py),
            at: qnames,
        };
        let mut headers = Vec::new();
        let Ok((key, branch_keys, xpaths)) = walk::keys_with(
            py,
            ctx.names,
            walker.get(),
            tape.root(),
            &node_name,
            subscription_id,
            with_xpaths,
            with_instances.then_some(&mut headers),
            Some(&qnames),
        ) else {
            return Ok(None);
        };
        let none = || py.None().into_bound(py);
        let found = PyTuple::new(
            py,
            [
                extra,
                id.clone(),
                note.sequence_number.clone().unwrap_or_else(none),
                note.event_time.clone().unwrap_or_else(none),
                key,
                branch_keys,
                xpaths,
            ],
        )?;
        crate::xmlfeed::fed(py, Some(found), with_instances.then_some(headers))
    }
}

/// ``Decoder.keys``' answer: ``(extra, id, sequence_number, event_time, key, branch_keys,
/// xpaths)``.
pub(crate) fn answer<'py>(
    py: Python<'py>,
    [extra, id]: [Bound<'py, PyAny>; 2],
    sequence_number: Option<u32>,
    event_time: Option<&str>,
    [key, branch_keys, xpaths]: [Bound<'py, PyAny>; 3],
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let sequence = match sequence_number {
        Some(n) => n.into_pyobject(py)?.into_any(),
        None => py.None().into_bound(py),
    };
    let time = match event_time {
        Some(t) => PyString::new(py, t).into_any(),
        None => py.None().into_bound(py),
    };
    Ok(Some(PyTuple::new(
        py,
        [extra, id, sequence, time, key, branch_keys, xpaths],
    )?))
}
