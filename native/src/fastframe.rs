//! The framing of a push-update or push-change-update read from the fast XML reader's arena
//! (xmlfast.rs), as ``_xml_notification`` reads it: a NETCONF notification with Huawei's
//! legacy sequencing leaves, an envelope, a telemetry message's payload, each inside another,
//! or bare; the push element's id (IOS-XE's ``subscription-id`` too). Anything it does not
//! read exactly is [`Other`]: the full parser (xmlframe.rs) and the reference answer.

use crate::model::{plain_node_name, py_strip, uint32_text};
use crate::xmlfast::{same_bytes, Fast, Other, F, NONE};

/// What the framing gives a key pass.
pub struct Frame<'f> {
    pub subscription_id: u32,
    pub node: Option<&'f str>,
    pub event_time: Option<&'f str>,
    pub sequence_number: Option<u32>,
    pub contents: u32,
}

/// The children of ``el`` named as ``names`` (local names), the first of each; a name seen
/// twice: the reference refuses it when it reads it, so the full parser takes it.
pub(crate) fn fields<const N: usize>(fast: &Fast<'_>, el: u32, names: [&str; N]) -> F<[u32; N]> {
    let mut found = [NONE; N];
    for child in fast.children(el) {
        let local = fast.local(child);
        if let Some(i) = names
            .iter()
            .position(|n| same_bytes(n.as_bytes(), local.as_bytes()))
        {
            if found[i] != NONE {
                return Err(Other);
            }
            found[i] = child;
        }
    }
    Ok(found)
}

pub(crate) fn stripped<'f>(fast: &'f Fast<'_>, el: u32) -> Option<&'f str> {
    (el != NONE).then(|| py_strip(fast.text(el)))
}

/// ``_name_text``: as written; a plain name only (the reference's check words any other).
pub(crate) fn node_name<'f>(fast: &'f Fast<'_>, el: u32) -> F<Option<&'f str>> {
    if el == NONE {
        return Ok(None);
    }
    match fast.text(el) {
        "" => Ok(None),
        name if plain_node_name(name) => Ok(Some(name)),
        _ => Err(Other),
    }
}

pub(crate) fn uint32(text: Option<&str>) -> F<Option<u32>> {
    match text {
        None => Ok(None),
        Some(text) => uint32_text(text).map(Some).ok_or(Other),
    }
}

/// The framing of a ``body`` (``push-update`` or ``push-change-update``) as
/// ``_xml_notification`` reads it, outermost first: a telemetry message (its manifest's node
/// name, its metadata's export timestamp), an envelope, a NETCONF notification (with
/// Huawei's ``sysName`` and ``sequenceNumber`` where the RFC's leaves are absent), each inside
/// the one before, then the body: event time, node, sequence number and the body's element,
/// every read field well formed; [`Other`] for the rest (the other body first, a field read
/// given twice, a missing payload or contents). ``telemetry``: the telemetry message's
/// namespace.
pub(crate) fn header<'f>(fast: &'f Fast<'_>, body: &str, telemetry: &str) -> F<Header<'f>> {
    let mut head = Header {
        node: None,
        event_time: None,
        sequence_number: None,
        push: 0,
    };
    let mut el = 0;
    loop {
        match fast.local(el) {
            "message" if fast.namespaces[fast.els[el as usize].ns as usize] == telemetry => {
                let [manifest, metadata, payload] = fields(
                    fast,
                    el,
                    [
                        "network-node-manifest",
                        "telemetry-message-metadata",
                        "payload",
                    ],
                )?;
                if manifest != NONE && head.node.is_none() {
                    let [name] = fields(fast, manifest, ["name"])?;
                    head.node = node_name(fast, name)?;
                }
                if metadata != NONE {
                    let [subscription, timestamp] = fields(
                        fast,
                        metadata,
                        ["yang-push-subscription", "node-export-timestamp"],
                    )?;
                    if subscription != NONE {
                        // A key pass reads no subscription metadata: its refusals only.
                        fields(fast, subscription, ["xpath-filter"])?;
                    }
                    // ``note.event_time or _text(meta, "node-export-timestamp")``
                    if head.event_time.is_none_or(str::is_empty) {
                        head.event_time = stripped(fast, timestamp);
                    }
                }
                if payload == NONE {
                    return Err(Other);
                }
                el = fast.children(payload).next().ok_or(Other)?;
            }
            "envelope" => {
                let [time, host, seq, contents] = fields(
                    fast,
                    el,
                    ["event-time", "hostname", "sequence-number", "contents"],
                )?;
                if let Some(time) = stripped(fast, time).filter(|t| !t.is_empty()) {
                    head.event_time = Some(time);
                }
                if let Some(node) = node_name(fast, host)? {
                    head.node = Some(node);
                }
                head.sequence_number = uint32(stripped(fast, seq))?;
                if contents == NONE {
                    return Err(Other);
                }
                el = fast.children(contents).next().ok_or(Other)?;
            }
            "notification" => {
                let [time, host, sys, seq, seq_legacy, update, change] = fields(
                    fast,
                    el,
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
                if let Some(time) = stripped(fast, time).filter(|t| !t.is_empty()) {
                    head.event_time = Some(time);
                }
                // Huawei's legacy leaves are read only where the RFC's are absent (or empty).
                let node = match node_name(fast, host)? {
                    Some(node) => Some(node),
                    None => node_name(fast, sys)?,
                };
                if node.is_some() {
                    head.node = node;
                }
                let sequence = if seq != NONE { seq } else { seq_legacy };
                if sequence != NONE {
                    head.sequence_number = uint32(stripped(fast, sequence))?;
                }
                // push-update first; the other body is then Other on the next turn
                el = if update != NONE { update } else { change };
                if el == NONE {
                    return Err(Other); // no body
                }
            }
            name if name == body => {
                head.push = el;
                return Ok(head);
            }
            _ => return Err(Other), // the other body, anything else
        }
    }
}

/// What [`header`] reads.
pub(crate) struct Header<'f> {
    pub node: Option<&'f str>,
    pub event_time: Option<&'f str>,
    pub sequence_number: Option<u32>,
    pub push: u32,
}

/// The subscription id of a push element (``push-update`` or ``push-change-update``) as
/// ``_xml_notification`` reads it: ``id``, or IOS-XE's pre-RFC 8639 ``subscription-id`` where
/// ``id`` is absent, a uint32; [`Other`] for the rest (missing, not a uint32: the reference's
/// error; either given twice).
pub(crate) fn push_id(fast: &Fast<'_>, push: u32) -> F<u32> {
    let [id, legacy_id] = fields(fast, push, ["id", "subscription-id"])?;
    let id = if id != NONE { id } else { legacy_id };
    uint32(stripped(fast, id))?.ok_or(Other)
}

/// ``_xml_notification`` of a push-update with datastore contents in the framings [`header`]
/// reads and every read field well formed: ``datastore-contents``, or where it is absent
/// IOS-XE's ``datastore-contents-xml`` holding elements (or only white space; XML *text*
/// there is another document, left to the full parser and the reference); [`Other`] for the
/// rest. ``telemetry``: the telemetry message's namespace.
pub fn frame<'f>(fast: &'f Fast<'_>, telemetry: &str) -> F<Frame<'f>> {
    let Header {
        node,
        event_time,
        sequence_number,
        push,
    } = header(fast, "push-update", telemetry)?;
    let subscription_id = push_id(fast, push)?;
    let [contents, legacy_contents] =
        fields(fast, push, ["datastore-contents", "datastore-contents-xml"])?;
    // ``_legacy_contents``: its elements (NETCONF), or itself when it holds only white space
    let legacy_elements = |el: u32| {
        el != NONE && (fast.els[el as usize].first != NONE || py_strip(fast.text(el)).is_empty())
    };
    let contents = if contents != NONE {
        contents
    } else if legacy_elements(legacy_contents) {
        legacy_contents
    } else {
        return Err(Other); // contents as XML text; an empty update
    };
    Ok(Frame {
        subscription_id,
        node,
        event_time,
        sequence_number,
        contents,
    })
}
