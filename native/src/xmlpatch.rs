//! XML yang-patch keys natively (RFC 8641 section 3.10's push-change-update, RFC 8072's edits
//! in XML): ``Decoder.keys_xml`` of a push-change-update the fast reader takes (xmlfast.rs) in
//! any framing its ``header`` reads (a NETCONF notification with Huawei's legacy leaves, an
//! envelope, a telemetry message, bare), its subscription named by ``id`` or IOS-XE's
//! ``subscription-id``. Its framing and edits are read as
//! ``yangkey.xmlnotifications._xml_notification`` reads them (each edit's target and
//! operation the element's text stripped, its value ``XmlConverter.members`` of the value
//! element's children), and keyed by patchwalk.rs as a JSON yang-patch is: the key pass reads
//! the values in place in the reader's arena (patcharena.rs), and writes them into the tape
//! (xmltape.rs) only for a read it leaves to the tape there (a walk below the target, a
//! converter's key or filter value), or for the instance feed.
//!
//! Anything else returns None and the reference answers (and words any error): a field the
//! reference reads given twice, an edit without target or operation, a target or operation
//! element with child elements, whatever patchwalk.rs leaves to the reference.

use crate::fastframe::{fields, header, push_id, Header};
use crate::model::py_strip;
use crate::tape::V;
use crate::walk::{self, Arena, ArenaEdits, QNames, XmlEdit};
use crate::xmlfast::{self, same_bytes, Fast, Other, F, NONE};
use crate::xmlkeys::answer;
use crate::{state_of, Decoder};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// What the framing of a push-change-update gives the key pass.
struct PatchFrame<'f> {
    subscription_id: u32,
    node: Option<&'f str>,
    event_time: Option<&'f str>,
    sequence_number: Option<u32>,
    /// Each edit's target and operation elements, and its value element (or [`NONE`]).
    edits: Vec<(u32, u32, u32)>,
}

thread_local! {
    /// [`PatchFrame::edits`]' vector from one document to the next: a vector of a patch's
    /// size is a request past glibc's small ones, which consolidates its fast bins first.
    static EDITS: std::cell::Cell<Vec<(u32, u32, u32)>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Vectors longer than this (a patch of some 4,000 edits) are not kept.
const EDITS_MAX: usize = 1 << 12;

impl Drop for PatchFrame<'_> {
    fn drop(&mut self) {
        if self.edits.capacity() <= EDITS_MAX {
            let mut edits = std::mem::take(&mut self.edits);
            edits.clear();
            EDITS.set(edits);
        }
    }
}

/// [`fields`] of an edit's target, operation, value and edit-id (read, and refused twice, by
/// the reference, unused by the keys): a child's name told by its length first, read from
/// the element (one comparison a child, not one for each name, and only its bytes read).
#[inline]
fn edit_fields(fast: &Fast<'_>, edit: u32) -> F<[u32; 3]> {
    let mut found = [NONE; 4];
    for at in fast.children(edit) {
        let (i, name): (usize, &[u8]) = match fast.els[at as usize].local.1 {
            6 => (0, b"target"),
            9 => (1, b"operation"),
            5 => (2, b"value"),
            7 => (3, b"edit-id"),
            _ => continue,
        };
        if !same_bytes(fast.local(at).as_bytes(), name) {
            continue;
        }
        if found[i] != NONE {
            return Err(Other);
        }
        found[i] = at;
    }
    Ok([found[0], found[1], found[2]])
}

/// ``_xml_notification`` of a push-change-update in the framings [`header`] reads, with every
/// read field well formed; [`Other`] for the rest.
fn frame<'f>(fast: &'f Fast<'_>, telemetry: &str) -> F<PatchFrame<'f>> {
    let Header {
        node,
        event_time,
        sequence_number,
        push,
    } = header(fast, "push-change-update", telemetry)?;
    let subscription_id = push_id(fast, push)?;
    let [changes] = fields(fast, push, ["datastore-changes"])?;
    if changes == NONE {
        return Err(Other); // no changes (the reference's error)
    }
    let [patch] = fields(fast, changes, ["yang-patch"])?;
    if patch == NONE {
        return Err(Other);
    }
    // Sized once (grown edit by edit, its reallocations cost a tenth of a 100-edit patch's
    // walk), in the last document's vector.
    let mut edits = EDITS.take();
    edits.clear();
    // (at most one edit in three elements after the patch's: an edit, its target and
    // operation; no count of its children first, a walk through them)
    edits.reserve(((fast.els.len() - patch as usize) / 3).min(EDITS_MAX));
    for edit in fast.children(patch) {
        if fast.local(edit) != "edit" {
            continue;
        }
        let [target, operation, value] = edit_fields(fast, edit)?;
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

/// Each edit's target and operation (stripped), its value ``value`` of its value element
/// (called for the edits that have one, in order): read by the key pass as it goes, not
/// collected first.
fn xml_edits<'f, 'd, 'a: 'd>(
    fast: &'f Fast<'_>,
    frame: &'f PatchFrame<'_>,
    mut value: impl FnMut(u32) -> Option<V<'d, 'a>> + 'f,
) -> impl ExactSizeIterator<Item = XmlEdit<'d, 'a>> + 'f
where
    'f: 'd,
{
    frame
        .edits
        .iter()
        .map(move |&(target, operation, element)| XmlEdit {
            target: py_strip(fast.text(target)),
            operation: py_strip(fast.text(operation)),
            value: if element == NONE {
                None
            } else {
                value(element)
            },
        })
}

impl Decoder {
    /// ``Decoder.keys_xml`` of a yang-patch (xmlkeys.rs calls it for a document
    /// patchscan.rs names one): None for any framing or edit the fast reader and patchwalk.rs
    /// do not read exactly. ``with_instances``: and the instance feed headers (xmlfeed.rs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn xml_patch<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        ns_modules: &Bound<'py, PyAny>,
        route: &Bound<'py, PyAny>,
        with_xpaths: bool,
        routes: Option<&Bound<'py, PyAny>>,
        with_instances: bool,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(text) = xmlfast::utf8(data) else {
            return Ok(None);
        };
        let Ok(fast) = xmlfast::parse(text) else {
            return Ok(None);
        };
        let Ok(frame) = frame(&fast, &self.model.ns_telemetry) else {
            return Ok(None);
        };
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
        let mut headers = Vec::new();
        // The key pass reads the edits' values in the arena (patcharena.rs); what it does not
        // read there (a walk below the target, a converter's key...) asks for the tape.
        let mut found = None;
        if !with_instances {
            let arena = Arena::new(&fast, &table);
            let values = ArenaEdits {
                arena: &arena,
                edits: &frame.edits,
            };
            let edits = xml_edits(&fast, &frame, |_| None);
            match walk::xml_patch_keys(
                py,
                &mut state.names,
                walk,
                edits,
                Some(values),
                &node_name,
                frame.subscription_id,
                with_xpaths,
                None,
                None,
            ) {
                Ok(keys) => found = Some(keys),
                Err(_) if !arena.fallback.get() => return Ok(None),
                Err(_) => {}
            }
        }
        let (key, branch_keys, xpaths) = match found {
            Some(keys) => keys,
            None => {
                let mut values = Vec::with_capacity(frame.edits.len());
                values.extend(frame.edits.iter().map(|e| e.2).filter(|v| *v != NONE));
                // Only the members the walker names (steps, keys, filters): patchwalk.rs
                // reads no other, and an entry keeps its shape (object or text) whatever is
                // left out. The instance feed reads every leaf: all of them (xmlfeed.rs).
                let reads = (!with_instances).then(|| walk.names());
                let (tape, qnames, at) =
                    crate::xmlkeys::members_tape(&fast, &table, &values, reads);
                let mut at = at.into_iter();
                let edits = xml_edits(&fast, &frame, |_| {
                    Some(V {
                        doc: &tape,
                        at: at.next().unwrap_or_default(),
                    })
                });
                let qnames = QNames {
                    class: self.model.qname_text.clone_ref(py),
                    at: qnames,
                };
                let Ok(keys) = walk::xml_patch_keys(
                    py,
                    &mut state.names,
                    walk,
                    edits,
                    None,
                    &node_name,
                    frame.subscription_id,
                    with_xpaths,
                    Some(&qnames),
                    with_instances.then_some(&mut headers),
                ) else {
                    return Ok(None);
                };
                keys
            }
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
}
