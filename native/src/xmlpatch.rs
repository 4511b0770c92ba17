//! XML yang-patch keys natively (RFC 8641 section 3.10's push-change-update, RFC 8072's edits
//! in XML): ``Decoder.keys_xml`` of a NETCONF notification, an envelope or a bare
//! push-change-update the fast reader takes (xmlfast.rs). Its framing and edits are read as
//! ``yangkey.xmlnotifications._xml_notification`` reads them (each edit's target and
//! operation the element's text stripped, its value ``XmlConverter.members`` of the value
//! element's children, written into the tape, xmlkeys.rs), and keyed by patchwalk.rs as a JSON
//! yang-patch is.
//!
//! Anything else returns None and the reference answers (and words any error): the telemetry
//! message, Huawei's and IOS-XE's leaves, a field the reference reads given twice, an edit
//! without target or operation, a target or operation element with child elements, whatever
//! patchwalk.rs leaves to the reference.

use crate::model::py_strip;
use crate::routes::routed_by;
use crate::tape::V;
use crate::walk::{self, QNames, XmlEdit};
use crate::xmlfast::{self, fields, node_name, stripped, uint32, Fast, Other, F, NONE};
use crate::{state_of, Decoder};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

/// What the framing of a push-change-update gives the key pass.
struct PatchFrame<'f> {
    subscription_id: u32,
    node: Option<&'f str>,
    event_time: Option<&'f str>,
    sequence_number: Option<u32>,
    /// Each edit's target and operation elements, and its value element (or [`NONE`]).
    edits: Vec<(u32, u32, u32)>,
}

/// ``_xml_notification`` of a NETCONF notification, an envelope or a bare push-change-update
/// with every read field well formed; [`Other`] for the rest.
fn frame<'f>(fast: &'f Fast<'_>) -> F<PatchFrame<'f>> {
    let mut event_time = None;
    let mut node = None;
    let mut sequence_number = None;
    let mut push = 0;
    match fast.local(0) {
        "notification" => {
            let [time, host, sys, seq, seq_legacy, update, change] = fields(
                fast,
                0,
                [
                    "eventTime",
                    "hostname",
                    "sysName",
                    "sequence-number",
                    "sequenceNumber",
                    "push-update",
                    "push-change-update",
                ],
            )?;
            if sys != NONE || seq_legacy != NONE || update != NONE || change == NONE {
                return Err(Other); // Huawei's leaves, a push-update first, no yang-patch
            }
            event_time = stripped(fast, time).filter(|t| !t.is_empty());
            node = node_name(fast, host)?;
            sequence_number = uint32(stripped(fast, seq))?;
            push = change;
        }
        "envelope" => {
            let [time, host, seq, contents] = fields(
                fast,
                0,
                ["event-time", "hostname", "sequence-number", "contents"],
            )?;
            event_time = stripped(fast, time).filter(|t| !t.is_empty());
            node = node_name(fast, host)?;
            sequence_number = uint32(stripped(fast, seq))?;
            if contents == NONE {
                return Err(Other);
            }
            push = fast.children(contents).next().ok_or(Other)?;
            if fast.local(push) != "push-change-update" {
                return Err(Other);
            }
        }
        "push-change-update" => {}
        _ => return Err(Other), // the telemetry message, anything else
    }
    let [id, legacy_id, changes] =
        fields(fast, push, ["id", "subscription-id", "datastore-changes"])?;
    if legacy_id != NONE || changes == NONE {
        return Err(Other); // IOS-XE's name; no changes (the reference's error)
    }
    let subscription_id = uint32(stripped(fast, id))?.ok_or(Other)?;
    let [patch] = fields(fast, changes, ["yang-patch"])?;
    if patch == NONE {
        return Err(Other);
    }
    let mut edits = Vec::new();
    for edit in fast.children(patch) {
        if fast.local(edit) != "edit" {
            continue;
        }
        // edit-id: read (and refused twice) by the reference, unused by the keys
        let [target, operation, value, _] =
            fields(fast, edit, ["target", "operation", "value", "edit-id"])?;
        for text in [target, operation] {
            // a missing one is the reference's error; child elements: lxml's text is only
            // the text before the first, not mirrored here
            if text == NONE || fast.els[text as usize].first != NONE {
                return Err(Other);
            }
        }
        edits.push((target, operation, value));
    }
    Ok(PatchFrame {
        subscription_id,
        node,
        event_time,
        sequence_number,
        edits,
    })
}

impl Decoder {
    /// ``Decoder.keys_xml`` of a yang-patch (xmlkeys.rs calls it for a document
    /// patchscan.rs names one): None for any framing or edit the fast reader and patchwalk.rs
    /// do not read exactly.
    pub(crate) fn xml_patch<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        ns_modules: &Bound<'py, PyAny>,
        route: &Bound<'py, PyAny>,
        with_xpaths: bool,
        routes: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(None);
        };
        let Ok(fast) = xmlfast::parse(text) else {
            return Ok(None);
        };
        let Ok(frame) = frame(&fast) else {
            return Ok(None);
        };
        let mut guard = self.state.try_lock();
        let mut own = None;
        let state = state_of(&mut guard, &mut own);
        let Some(table) = self.ns_table(state, ns_modules) else {
            return Ok(None);
        };
        state.names.next_document();
        let id = frame.subscription_id.into_pyobject(py)?.into_any();
        let node = match frame.node {
            Some(name) => Some(state.names.name(py, name)?),
            None => None,
        };
        let Some((walker, node_name, extra)) = routed_by(
            py,
            Some(frame.node),
            &node,
            &id,
            frame.subscription_id,
            route,
            routes,
            None,
        )?
        else {
            return Ok(None);
        };
        let values: Vec<u32> = frame
            .edits
            .iter()
            .map(|e| e.2)
            .filter(|v| *v != NONE)
            .collect();
        // Only the members the walker names (steps, keys, filters): patchwalk.rs reads no
        // other, and an entry keeps its shape (object or text) whatever is left out.
        let walk = walker.get();
        let (tape, qnames, at) = crate::xmlkeys::members_tape(&fast, &table, &values, walk.names());
        let mut at = at.into_iter();
        let edits: Vec<XmlEdit<'_, '_>> = frame
            .edits
            .iter()
            .map(|&(target, operation, value)| XmlEdit {
                target: py_strip(fast.text(target)),
                operation: py_strip(fast.text(operation)),
                value: (value != NONE).then(|| V {
                    doc: &tape,
                    at: at.next().unwrap_or_default(),
                }),
            })
            .collect();
        let qnames = QNames {
            class: self.model.qname_text.clone_ref(py),
            at: qnames,
        };
        let Ok((key, branch_keys, xpaths)) = walk::xml_patch_keys(
            py,
            &mut state.names,
            walk,
            &edits,
            &node_name,
            frame.subscription_id,
            with_xpaths,
            Some(&qnames),
        ) else {
            return Ok(None);
        };
        let sequence = match frame.sequence_number {
            Some(n) => n.into_pyobject(py)?.into_any(),
            None => py.None().into_bound(py),
        };
        let time = match frame.event_time {
            Some(t) => PyString::new(py, t).into_any(),
            None => py.None().into_bound(py),
        };
        Ok(Some(PyTuple::new(
            py,
            [extra, id, sequence, time, key, branch_keys, xpaths],
        )?))
    }
}
