//! XML notifications (yangkey.xmlnotifications): framed as the reference's general path does
//! (telemetry message, envelope, NETCONF notification with the legacy sequencing leaves,
//! push-update with datastore-contents or IOS-XE's datastore-contents-xml, push-change-update
//! with yang-patch edits), each step in its order, so the same document gives the same
//! Notification or the same error.

use crate::model::{local, plain_node_name, py_strip, uint32_text, Fail, Kind, Note, R};
use crate::pyconv::string;
use crate::xmlconv::{Conv, NO_MODULE};
use crate::xmlparse::{elements, fragment, has_element_child, parse, text};
use crate::Ctx;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use roxmltree::Node;

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

pub fn notification<'py, 'd>(
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
                if ctx.keys_only {
                    // A key pass reads no subscription metadata: its refusals only.
                    Kids::new(subscription).one(ctx, "xpath-filter")?;
                } else {
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
                    } else if ctx.keys_only {
                        return Err(Fail::Defer); // another document: the reference keys it
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
            // ``Decoder.keys_xml``: the walk reads the elements in place (xmlkeys.rs).
            Some(contents) if ctx.keys_only => {
                note.contents = Some(contents.id().get_usize());
                Ok(())
            }
            Some(contents) => conv.contents(ctx, contents, note),
            None => {
                note.data = Some(PyDict::new(py).into_any());
                Ok(())
            }
        };
    }
    if ctx.keys_only {
        return Err(Fail::Defer); // yang-patch edits: the reference walks them
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
