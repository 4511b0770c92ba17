//! The instance feed of XML push-updates and yang-patches (issue 33, contract 6):
//! ``Decoder.keys_xml(..., with_instances=True)`` and ``Decoder.instances(..., ns_modules)``.
//! The datastore contents (a yang-patch's edit values) become the tape xmlkeys.rs makes of
//! them, every member kept (the feed reads each leaf below a target, a qualified one by its
//! local name too), and feed.rs writes each branch's ``yangkey-instances`` header from the key
//! walk, as it does for JSON (a yang-patch's edits through xmlpatch.rs and patchwalk.rs's edit
//! walk into the same sink). The values are what the reference's tree holds
//! (``XmlConverter``): leaf text as lxml gives it, and ``prefix:name`` text whose prefix is in
//! scope and bound to a namespace of the map as a ``QNameText`` carrying ``module:name`` (RFC
//! 7951 §6.8/§6.11 against RFC 7950 §9.10.3), made and handed to the reference's converter as
//! such. What the feed does not mirror for XML (an integer leaf holding such text, a converter
//! given an element with children) stops the pass: the reference answers.

use crate::fastframe;
use crate::walk::{self, QNames, Walker};
use crate::xmlfast;
use crate::xmltape::members_tape;
use crate::{header_tuple, start, state_of, Decoder, Start};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyTuple};

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
    /// ``Decoder.instances`` of an XML push-update or yang-patch in a framing the fast reader
    /// takes: per branch of ``walker`` its feed header or None; None for anything else (a
    /// framing the fast reader leaves, any error, no instance, a value not mirrored).
    pub(crate) fn xml_instances<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        ns_modules: &Bound<'py, PyAny>,
        walker: &Bound<'py, Walker>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        if start(data) != Start::Xml {
            return Ok(None);
        }
        if crate::patchscan::is_xml_patch(data) {
            return self.xml_patch_instances(py, data, ns_modules, walker);
        }
        let walker = walker.get();
        let Some(text) = xmlfast::utf8(data) else {
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
        let (tape, qnames, _) = members_tape(&fast, &table, &[frame.contents], None);
        let qnames = QNames {
            class: self.model.qname_text.clone_ref(py),
            at: qnames,
        };
        let walked = walk::instances(py, &mut state.names, walker, tape.root(), Some(&qnames));
        let Ok(headers) = walked else {
            return Ok(None);
        };
        if !headers.iter().any(Option::is_some) {
            return Ok(None);
        }
        Ok(Some(header_tuple(py, headers)?))
    }

    /// [`Decoder::xml_instances`] of a yang-patch: its key pass with the feed on
    /// (xmlpatch.rs), routed to ``walker`` whatever the subscription, its keys dropped.
    fn xml_patch_instances<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        ns_modules: &Bound<'py, PyAny>,
        walker: &Bound<'py, Walker>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let node = pyo3::types::PyString::new(py, "node").into_any();
        let answer = PyTuple::new(
            py,
            [walker.as_any().clone(), node, py.None().into_bound(py)],
        )?;
        let answer = answer.unbind();
        let route = PyCFunction::new_closure(py, None, None, move |args, _| {
            Ok::<_, PyErr>(answer.clone_ref(args.py()))
        })?;
        let found = self.xml_patch(py, data, ns_modules, route.as_any(), false, None, true)?;
        let Some(found) = found else {
            return Ok(None);
        };
        let headers = found.get_item(7)?;
        let any = headers
            .cast::<PyTuple>()
            .is_ok_and(|h| h.iter().any(|header| !header.is_none()));
        Ok(any.then(|| headers.cast_into::<PyTuple>().ok()).flatten())
    }
}
