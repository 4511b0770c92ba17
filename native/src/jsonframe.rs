//! The JSON framings (yangkey.notifications): telemetry message, envelope, RFC 8040
//! notification with the legacy sequencing members, push-update (datastore-contents, and the
//! pre-RFC 8641 datastore-contents-xml/-json text) and push-change-update (yang-patch edits).
//! Each step mirrors the reference's general path, in its order, so the same document gives
//! the same Notification or the same error.

use crate::json::{self, get, Member, Value};
use crate::model::{local, plain_node_name, uint32_text, Fail, Kind, Note, R};
use crate::pyconv::to_py;
use crate::Ctx;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

type Members<'v, 'a> = [&'v Member<'a>];

/// ``_find``: member ``name`` whether or not it carries a module qualifier (null as absent).
fn find<'v, 'a>(members: &Members<'v, 'a>, name: &str) -> Option<&'v Value<'a>> {
    let exact = members.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v);
    if let Some(value) = exact {
        if !matches!(value, Value::Null) {
            return Some(value);
        }
    }
    for (member, value) in members.iter().map(|m| (&m.0, &m.1)) {
        if local(member) == name {
            return if matches!(value, Value::Null) { None } else { Some(value) };
        }
    }
    None
}

fn refs<'v, 'a>(members: &'v [Member<'a>]) -> Vec<&'v Member<'a>> {
    members.iter().collect()
}

fn get_ref<'v, 'a>(members: &Members<'v, 'a>, name: &str) -> Option<&'v Value<'a>> {
    members.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn has(members: &Members<'_, '_>, name: &str) -> bool {
    members.iter().any(|(k, _)| k == name)
}

fn py_value<'py>(ctx: &mut Ctx<'py, '_>, value: Option<&Value<'_>>) -> PyResult<Option<Bound<'py, PyAny>>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => to_py(ctx.py, v, ctx.names).map(Some),
    }
}

/// ``_node_name``: a plain name directly, anything else by the reference's check.
fn node_name<'py>(ctx: &mut Ctx<'py, '_>, value: Option<&Value<'_>>, what: &str) -> R<Option<Bound<'py, PyAny>>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Str(s)) if s.is_empty() => Ok(None),
        Some(Value::Str(s)) if plain_node_name(s) => Ok(Some(crate::pyconv::string(ctx.py, s)?)),
        Some(v) => {
            let value = to_py(ctx.py, v, ctx.names)?;
            let name = ctx.model.node_name.bind(ctx.py).call1((value, what, ctx.source))?;
            Ok(if name.is_none() { None } else { Some(name) })
        }
    }
}

/// A uint32 header field (subscription id, sequence number): an integer or ASCII digits in
/// range directly; anything else by the reference's check, which refuses it.
fn uint32<'py>(ctx: &mut Ctx<'py, '_>, value: Option<&Value<'_>>, check: &Py<PyAny>) -> R<Option<Bound<'py, PyAny>>> {
    let number = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Int(n)) if (0..=u32::MAX as i64).contains(n) => Some(*n as u32),
        Some(Value::Str(s)) => uint32_text(s),
        _ => None,
    };
    let py = ctx.py;
    match number {
        Some(n) => Ok(Some(n.into_pyobject(py).map_err(PyErr::from)?.into_any())),
        None => {
            let value = py_value(ctx, value)?.unwrap_or_else(|| py.None().into_bound(py));
            let checked = check.bind(py).call1((value, ctx.source))?;
            Ok(if checked.is_none() { None } else { Some(checked) })
        }
    }
}

pub fn notification<'py>(ctx: &mut Ctx<'py, '_>, obj: &Value<'_>, note: &mut Note<'py>) -> R<()> {
    match obj {
        Value::Object(members) => members_notification(ctx, &refs(members), note),
        _ => Err(ctx.model.framing(ctx.py, "a notification must be a JSON object".into(), ctx.source)),
    }
}

fn members_notification<'py>(ctx: &mut Ctx<'py, '_>, obj: &Members<'_, '_>, note: &mut Note<'py>) -> R<()> {
    let py = ctx.py;
    for (member, body) in obj.iter().map(|m| (&m.0, &m.1)) {
        let Value::Object(body_members) = body else { continue };
        let body_refs = refs(body_members);
        match local(member) {
            "message" => return message(ctx, &body_refs, note),
            "envelope" => {
                if let Some(time) = get_ref(&body_refs, "event-time") {
                    note.event_time = py_value(ctx, Some(time))?;
                }
                if let Some(node) = node_name(ctx, get_ref(&body_refs, "hostname"), "hostname")? {
                    note.node = Some(node);
                }
                let check = ctx.model.sequence_number.clone_ref(py);
                note.sequence_number = uint32(ctx, get_ref(&body_refs, "sequence-number"), &check)?;
                return match get_ref(&body_refs, "contents") {
                    None | Some(Value::Null) => {
                        Err(ctx.model.framing(py, "envelope has no contents".into(), ctx.source))
                    }
                    Some(contents) => notification(ctx, contents, note),
                };
            }
            "notification" => {
                if let Some(time) = get_ref(&body_refs, "eventTime") {
                    note.event_time = py_value(ctx, Some(time))?;
                }
                if let Some(node) = node_name(ctx, find(&body_refs, "sysName"), "sysName")? {
                    note.node = Some(node);
                }
                if let Some(sequence) = find(&body_refs, "sequenceNumber") {
                    let check = ctx.model.sequence_number.clone_ref(py);
                    note.sequence_number = uint32(ctx, Some(sequence), &check)?;
                }
                let rest: Vec<&Member<'_>> = body_refs
                    .iter()
                    .copied()
                    .filter(|(k, _)| !matches!(local(k), "eventTime" | "sysName" | "sequenceNumber"))
                    .collect();
                return members_notification(ctx, &rest, note);
            }
            "push-update" => return push(ctx, Kind::PushUpdate, &body_refs, note),
            "push-change-update" => return push(ctx, Kind::PushChangeUpdate, &body_refs, note),
            _ => {}
        }
    }
    let names: Vec<&str> = obj.iter().take(5).map(|(k, _)| k.as_ref()).collect();
    let names = if names.is_empty() { "none".to_string() } else { names.join(", ") };
    Err(ctx.model.framing(
        py,
        format!("no push-update or push-change-update found (top-level members: {names})"),
        ctx.source,
    ))
}

fn message<'py>(ctx: &mut Ctx<'py, '_>, body: &Members<'_, '_>, note: &mut Note<'py>) -> R<()> {
    if let Some(Value::Object(manifest)) = find(body, "network-node-manifest") {
        if note.node.is_none() {
            note.node = node_name(ctx, get(manifest, "name"), "network-node-manifest name")?;
        }
    }
    if let Some(Value::Object(metadata)) = find(body, "telemetry-message-metadata") {
        let metadata = refs(metadata);
        if let Some(subscription @ Value::Object(_)) = find(&metadata, "yang-push-subscription") {
            note.subscription = Some(to_py(ctx.py, subscription, ctx.names)?);
        }
        if note.event_time.is_none() {
            let export = get_ref(&metadata, "node-export-timestamp");
            note.event_time = match export {
                Some(time) if time.truthy() => py_value(ctx, Some(time))?,
                _ => py_value(ctx, get_ref(&metadata, "collection-timestamp"))?,
            };
        }
    }
    match find(body, "payload") {
        None => Err(ctx.model.framing(ctx.py, "telemetry message has no payload".into(), ctx.source)),
        Some(payload) => notification(ctx, payload, note),
    }
}

/// ``_unread``: a push-update member that may hold data in a framing no decoder reads.
fn unread(member: &str, push_header: &[String]) -> bool {
    let name = local(member);
    !push_header.iter().any(|h| h == name) && (!member.contains(':') || name.contains("content"))
}

fn push<'py>(ctx: &mut Ctx<'py, '_>, kind: Kind, body: &Members<'_, '_>, note: &mut Note<'py>) -> R<()> {
    let py = ctx.py;
    note.kind = kind;
    let id = match get_ref(body, "id") {
        None | Some(Value::Null) => get_ref(body, "subscription-id"),
        id => id,
    };
    let check = ctx.model.subscription_id.clone_ref(py);
    note.subscription_id = uint32(ctx, id, &check)?;
    if kind == Kind::PushUpdate {
        let contents = match get_ref(body, "datastore-contents") {
            Some(Value::Null) | None => {
                if has(body, "datastore-contents-xml") {
                    let text = get_ref(body, "datastore-contents-xml").unwrap();
                    let Value::Str(text) = text else {
                        return Err(ctx.model.framing(
                            py,
                            format!(
                                "datastore-contents-xml must be a string of XML, not {}",
                                text.type_name()
                            ),
                            ctx.source,
                        ));
                    };
                    note.data = Some(crate::xmlframe::contents_from_text(ctx, text)?);
                    return Ok(());
                }
                if has(body, "datastore-contents-json") {
                    let text = get_ref(body, "datastore-contents-json").unwrap();
                    let parsed;
                    let contents = match text {
                        Value::Str(text) => {
                            parsed = json::parse(text.as_bytes(), false).map_err(|_| Fail::Defer)?;
                            &parsed
                        }
                        other => other,
                    };
                    return set_contents(ctx, contents, note);
                }
                let others: Vec<&str> =
                    body.iter().map(|(k, _)| k.as_ref()).filter(|k| unread(k, &ctx.model.push_header)).collect();
                if !others.is_empty() {
                    let names = others.iter().take(5).copied().collect::<Vec<_>>().join(", ");
                    return Err(ctx.model.framing(
                        py,
                        format!(
                            "push-update has no datastore-contents but {names}: no framing yangkey reads"
                        ),
                        ctx.source,
                    ));
                }
                return Ok(()); // an empty update: data stays {}
            }
            Some(contents) => contents,
        };
        return set_contents(ctx, contents, note);
    }
    let patch = match get_ref(body, "datastore-changes") {
        Some(Value::Object(changes)) => find(&refs(changes), "yang-patch"),
        _ => None,
    };
    let Some(Value::Object(patch)) = patch else {
        return Err(ctx.model.framing(
            py,
            "push-change-update has no datastore-changes/yang-patch".into(),
            ctx.source,
        ));
    };
    let edits: &[Value<'_>] = match get(patch, "edit") {
        None => &[],
        Some(Value::Array(edits)) => edits,
        Some(_) => {
            return Err(ctx.model.notification_err(py, "yang-patch edit must be a list".into(), ctx.source))
        }
    };
    let parsed = PyList::empty(py);
    let edit_class = ctx.model.edit.bind(py).clone();
    let tuple_new = ctx.model.tuple_new.bind(py).clone();
    for edit in edits {
        let Value::Object(fields) = edit else {
            return Err(ctx.model.notification_err(
                py,
                "yang-patch edit without target or operation".into(),
                ctx.source,
            ));
        };
        let target = get(fields, "target");
        let operation = get(fields, "operation");
        let (target, operation) = match (target, operation) {
            (Some(Value::Str(t)), Some(Value::Str(op))) if ctx.model.operations.iter().any(|o| o == op) => {
                (crate::pyconv::string(py, t)?, crate::pyconv::string(py, op)?)
            }
            _ => {
                if target.is_none() || operation.is_none() {
                    return Err(ctx.model.notification_err(
                        py,
                        "yang-patch edit without target or operation".into(),
                        ctx.source,
                    ));
                }
                let op = py_value(ctx, operation)?.unwrap_or_else(|| py.None().into_bound(py));
                let op = ctx.model.operation.bind(py).call1((op, ctx.source))?;
                let t = py_value(ctx, target)?.unwrap_or_else(|| py.None().into_bound(py));
                let t = ctx.model.str_type.bind(py).call1((t,))?;
                (t, op)
            }
        };
        let edit_id = match get(fields, "edit-id") {
            None => crate::pyconv::string(py, "")?,
            Some(Value::Str(s)) => crate::pyconv::string(py, s)?,
            Some(other) => {
                let v = py_value(ctx, Some(other))?.unwrap_or_else(|| py.None().into_bound(py));
                ctx.model.str_type.bind(py).call1((v,))?
            }
        };
        let value = match get(fields, "value") {
            Some(v @ Value::Object(_)) => to_py(py, v, ctx.names)?,
            _ => py.None().into_bound(py),
        };
        let steps = ctx.model.parse_target.bind(py).call1((target, ctx.source))?;
        let fields = PyTuple::new(py, [edit_id, operation, steps, value])?;
        parsed.append(tuple_new.call1((&edit_class, fields))?)?;
    }
    note.edits = Some(PyTuple::new(py, parsed.iter())?.into_any());
    Ok(())
}

fn set_contents<'py>(ctx: &mut Ctx<'py, '_>, contents: &Value<'_>, note: &mut Note<'py>) -> R<()> {
    if !contents.is_object() {
        return Err(ctx.model.error(
            ctx.py,
            &ctx.model.shape_error,
            format!("datastore-contents must be an object (RFC 7951), not {}", contents.type_name()),
            ctx.source,
        ));
    }
    note.data = Some(to_py(ctx.py, contents, ctx.names)?);
    Ok(())
}
