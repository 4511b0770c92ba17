//! The instance feed of XML push-updates (issue 33, contract 6): ``Decoder.keys_xml(...,
//! with_instances=True)`` and ``Decoder.instances(..., ns_modules)``. The datastore contents
//! become the tape xmlkeys.rs makes of them, every member kept (the feed reads each leaf
//! below a target, a qualified one by its local name too), and feed.rs writes each branch's
//! ``yangkey-instances`` header from the key walk, as it does for JSON. The values are what
//! the reference's tree holds (``XmlConverter``): leaf text as lxml gives it, and
//! ``prefix:name`` text whose prefix is in scope and bound to a namespace of the map as a
//! ``QNameText`` carrying ``module:name`` (RFC 7951 §6.8/§6.11 against RFC 7950 §9.10.3), made
//! and handed to the reference's converter as such. What the feed does not mirror for XML (an
//! integer leaf holding such text, a converter given an element with children) stops the
//! pass: the reference answers. A yang-patch's feed stays the reference's.

use crate::fastframe;
use crate::walk::{self, QNames, Walker};
use crate::xmlfast;
use crate::xmlkeys::members_reading;
use crate::{header_tuple, start, state_of, Decoder, Start};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// ``keys``' answer ``found`` with its eighth item, the feed ``headers`` (when asked for).
pub(crate) fn fed<'py>(
    py: Python<'py>,
    found: Option<Bound<'py, PyTuple>>,
    headers: Option<Vec<Option<Vec<u8>>>>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let (Some(found), Some(headers)) = (found.as_ref(), headers) else {
        return Ok(found);
    };
    let headers = header_tuple(py, headers)?.into_any();
    let mut items: Vec<Bound<'py, PyAny>> = found.iter().collect();
    items.push(headers);
    Ok(Some(PyTuple::new(py, items)?))
}

impl Decoder {
    /// ``Decoder.instances`` of an XML push-update in a framing the fast reader takes: per
    /// branch of ``walker`` its feed header or None; None for anything else (a yang-patch,
    /// a framing the fast reader leaves, any error, no instance, a value not mirrored).
    pub(crate) fn xml_instances<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        ns_modules: &Bound<'py, PyAny>,
        walker: &Walker,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        if start(data) != Start::Xml || crate::patchscan::is_xml_patch(data) {
            return Ok(None);
        }
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(None);
        };
        let Ok(fast) = xmlfast::parse(text) else {
            return Ok(None);
        };
        let Ok(frame) = fastframe::frame(&fast, &self.model.ns_telemetry) else {
            return Ok(None);
        };
        let mut guard = self.state.try_lock();
        let mut own = None;
        let state = state_of(&mut guard, &mut own);
        let Some(table) = self.ns_table(state, ns_modules) else {
            return Ok(None);
        };
        state.names.next_document();
        let (tape, qnames, _) = members_reading(&fast, &table, &[frame.contents], None);
        let qnames = QNames {
            class: self.model.qname_text.clone_ref(py),
            at: qnames,
        };
        // The key walk with the feed on (walk.rs offers no feed-only walk with an XML
        // document's QNames): its keys are dropped.
        let mut headers = Vec::new();
        let walked = walk::keys_with(
            py,
            &mut state.names,
            walker,
            tape.root(),
            "node",
            frame.subscription_id,
            false,
            Some(&mut headers),
            Some(&qnames),
        );
        if walked.is_err() || !headers.iter().any(Option::is_some) {
            return Ok(None);
        }
        Ok(Some(header_tuple(py, headers)?))
    }
}
