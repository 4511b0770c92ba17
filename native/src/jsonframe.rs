//! The JSON framings (yangkey.notifications): telemetry message, envelope, RFC 8040
//! notification with the legacy sequencing members, push-update (datastore-contents, and the
//! pre-RFC 8641 datastore-contents-xml/-json text) and push-change-update (yang-patch edits).
//! Each step mirrors the reference's general path, in its order, so the same document gives
//! the same Notification or the same error.

use crate::json;
use crate::model::{local, plain_node_name, uint32_text, Fail, Kind, Note, R};
use crate::pyconv::to_py;
use crate::tape::{Node, V};
use crate::Ctx;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// An object's members (all, or those the RFC 8040 notification leaves after its header).
type Members<'d, 'a> = [(&'d str, V<'d, 'a>)];

/// How many members a framing object keeps on the stack (the framings' objects have a few).
const ON_STACK: usize = 8;

/// An object's members, on the stack when they are few: every framing object was a vector's
/// allocation and release per notification. The stack's array is left uninitialised (its
/// fill, then its copy, were a memcpy each per framing object: a twentieth of a key pass).
struct Collected<'d, 'a> {
    stack: [std::mem::MaybeUninit<(&'d str, V<'d, 'a>)>; ON_STACK],
    len: usize,
    heap: Vec<(&'d str, V<'d, 'a>)>,
}

impl<'d, 'a> std::ops::Deref for Collected<'d, 'a> {
    type Target = Members<'d, 'a>;

    #[inline]
    fn deref(&self) -> &Self::Target {
        if self.len <= ON_STACK {
            // SAFETY: the first ``len`` entries were written (members).
            unsafe { std::slice::from_raw_parts(self.stack.as_ptr().cast(), self.len) }
        } else {
            &self.heap
        }
    }
}

/// ``let $name = `` an object's members, collected in the binding itself
/// ([`Collected::fill`]): built in a block or a function and moved to the binding, the
/// collection was copied (a memcpy of its whole array) at every framing object.
macro_rules! let_members {
    ($name:ident = $object:expr) => {
        let mut $name = Collected {
            // SAFETY: an array of MaybeUninit needs no initialisation. (Written as an
            // array of ``uninit()``, it was zeroed: a memset of 264 bytes per framing object.)
            stack: unsafe {
                std::mem::MaybeUninit::<[std::mem::MaybeUninit<_>; ON_STACK]>::uninit()
                    .assume_init()
            },
            len: 0,
            heap: Vec::new(),
        };
        $name.fill($object);
        let $name = &*$name;
    };
}

impl<'d, 'a> Collected<'d, 'a> {
    /// The members of ``object`` written in place: returned from a function, the collection
    /// was copied (a memcpy of its whole array) into the caller's frame.
    #[inline(always)]
    fn fill(&mut self, object: V<'d, 'a>) {
        for member in object.members() {
            if self.len < ON_STACK {
                self.stack[self.len].write(member);
            } else {
                if self.len == ON_STACK {
                    self.heap = self.to_vec(); // the whole stack, written
                }
                self.heap.push(member);
            }
            self.len += 1;
        }
    }
}

/// ``dict.get``: the value of member ``name`` (exact spelling).
fn get<'d, 'a>(members: &Members<'d, 'a>, name: &str) -> Option<V<'d, 'a>> {
    members
        .iter()
        .rev()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| *v)
}

/// ``dict.get`` that takes JSON null as absent (``is None`` in the reference).
fn get_some<'d, 'a>(members: &Members<'d, 'a>, name: &str) -> Option<V<'d, 'a>> {
    get(members, name).filter(|v| !v.is_null())
}

/// ``_find``: member ``name`` whether or not it carries a module qualifier (null as absent).
fn find<'d, 'a>(members: &Members<'d, 'a>, name: &str) -> Option<V<'d, 'a>> {
    if let Some(value) = get_some(members, name) {
        return Some(value);
    }
    members
        .iter()
        .find(|(k, _)| local(k) == name)
        .map(|(_, v)| *v)
        .filter(|v| !v.is_null())
}

fn py_value<'py>(
    ctx: &mut Ctx<'py, '_>,
    value: Option<V<'_, '_>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    match value {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        // A key pass reads one header value per notification: a string of its own costs
        // less than the value cache's entry (which only pays off for repeated values).
        Some(v) if ctx.keys_only && v.as_str().is_some() => {
            crate::pyconv::string(ctx.py, v.as_str().unwrap_or_default()).map(Some)
        }
        Some(v) => to_py(ctx.py, v, ctx.names).map(Some),
    }
}

fn py_or_none<'py>(
    ctx: &mut Ctx<'py, '_>,
    value: Option<V<'_, '_>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = ctx.py;
    Ok(py_value(ctx, value)?.unwrap_or_else(|| py.None().into_bound(py)))
}

/// ``_node_name``: a plain name directly, anything else by the reference's check.
fn node_name<'py>(
    ctx: &mut Ctx<'py, '_>,
    value: Option<V<'_, '_>>,
    what: &str,
) -> R<Option<Bound<'py, PyAny>>> {
    let Some(v) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    match v.as_str() {
        Some("") => Ok(None),
        // A key pass takes a device's name from the name cache: it repeats from one
        // notification to the next, and only the route memo's lookup reads it.
        Some(s) if plain_node_name(s) && ctx.keys_only => Ok(Some(ctx.names.name(ctx.py, s)?)),
        Some(s) if plain_node_name(s) => Ok(Some(crate::pyconv::string(ctx.py, s)?)),
        _ => {
            let value = to_py(ctx.py, v, ctx.names)?;
            let name = ctx
                .model
                .node_name
                .bind(ctx.py)
                .call1((value, what, ctx.source))?;
            Ok(if name.is_none() { None } else { Some(name) })
        }
    }
}

/// A uint32 header field (subscription id, sequence number): an integer or ASCII digits in
/// range directly; anything else by the reference's check, which refuses it.
fn uint32<'py>(
    ctx: &mut Ctx<'py, '_>,
    value: Option<V<'_, '_>>,
    check: &Py<PyAny>,
) -> R<Option<Bound<'py, PyAny>>> {
    let Some(v) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let number = match v.node() {
        Node::Int(n) if (0..=u32::MAX as i64).contains(&n) => Some(n as u32),
        Node::Str(_) => v.as_str().and_then(uint32_text),
        _ => None,
    };
    let py = ctx.py;
    match number {
        Some(n) => Ok(Some(n.into_pyobject(py).map_err(PyErr::from)?.into_any())),
        None => {
            let value = to_py(py, v, ctx.names)?;
            let checked = check.bind(py).call1((value, ctx.source))?;
            Ok(if checked.is_none() {
                None
            } else {
                Some(checked)
            })
        }
    }
}

pub fn notification<'py>(ctx: &mut Ctx<'py, '_>, obj: V<'_, '_>, note: &mut Note<'py>) -> R<()> {
    if !obj.is_object() {
        return Err(ctx.model.framing(
            ctx.py,
            "a notification must be a JSON object".into(),
            ctx.source,
        ));
    }
    let_members!(members = obj);
    members_notification(ctx, members, note)
}

fn members_notification<'py>(
    ctx: &mut Ctx<'py, '_>,
    obj: &Members<'_, '_>,
    note: &mut Note<'py>,
) -> R<()> {
    let py = ctx.py;
    for (member, body) in obj.iter().copied() {
        if !body.is_object() {
            continue;
        }
        let_members!(body_members = body);
        match local(member) {
            "message" => return message(ctx, body_members, note),
            "envelope" => {
                if let Some(time) = get(body_members, "event-time") {
                    note.event_time = py_value(ctx, Some(time))?;
                }
                if let Some(node) = node_name(ctx, get(body_members, "hostname"), "hostname")? {
                    note.node = Some(node);
                }
                let check = ctx.model.sequence_number.clone_ref(py);
                note.sequence_number = uint32(ctx, get(body_members, "sequence-number"), &check)?;
                return match get_some(body_members, "contents") {
                    None => {
                        Err(ctx
                            .model
                            .framing(py, "envelope has no contents".into(), ctx.source))
                    }
                    Some(contents) => notification(ctx, contents, note),
                };
            }
            "notification" => {
                if let Some(time) = get(body_members, "eventTime") {
                    note.event_time = py_value(ctx, Some(time))?;
                }
                if let Some(node) = node_name(ctx, find(body_members, "sysName"), "sysName")? {
                    note.node = Some(node);
                }
                if let Some(sequence) = find(body_members, "sequenceNumber") {
                    let check = ctx.model.sequence_number.clone_ref(py);
                    note.sequence_number = uint32(ctx, Some(sequence), &check)?;
                }
                let rest: Vec<_> = body_members
                    .iter()
                    .copied()
                    .filter(|(k, _)| {
                        !matches!(local(k), "eventTime" | "sysName" | "sequenceNumber")
                    })
                    .collect();
                return members_notification(ctx, &rest, note);
            }
            "push-update" => return push(ctx, Kind::PushUpdate, body_members, note),
            "push-change-update" => return push(ctx, Kind::PushChangeUpdate, body_members, note),
            _ => {}
        }
    }
    let names: Vec<&str> = obj.iter().take(5).map(|(k, _)| *k).collect();
    let names = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    Err(ctx.model.framing(
        py,
        format!("no push-update or push-change-update found (top-level members: {names})"),
        ctx.source,
    ))
}

fn message<'py>(ctx: &mut Ctx<'py, '_>, body: &Members<'_, '_>, note: &mut Note<'py>) -> R<()> {
    if let Some(manifest) = find(body, "network-node-manifest").filter(|v| v.is_object()) {
        if note.node.is_none() {
            note.node = node_name(ctx, manifest.get("name"), "network-node-manifest name")?;
        }
    }
    if let Some(metadata) = find(body, "telemetry-message-metadata").filter(|v| v.is_object()) {
        let_members!(fields = metadata);
        let metadata = fields;
        if let Some(subscription) =
            find(metadata, "yang-push-subscription").filter(|v| v.is_object())
        {
            note.subscription = Some(to_py(ctx.py, subscription, ctx.names)?);
        }
        if note.event_time.is_none() {
            note.event_time = match get(metadata, "node-export-timestamp") {
                Some(time) if time.truthy() => py_value(ctx, Some(time))?,
                _ => py_value(ctx, get(metadata, "collection-timestamp"))?,
            };
        }
    }
    match find(body, "payload") {
        None => Err(ctx.model.framing(
            ctx.py,
            "telemetry message has no payload".into(),
            ctx.source,
        )),
        Some(payload) => notification(ctx, payload, note),
    }
}

/// ``_unread``: a push-update member that may hold data in a framing no decoder reads.
fn unread(member: &str, push_header: &[String]) -> bool {
    let name = local(member);
    !push_header.iter().any(|h| h == name) && (!member.contains(':') || name.contains("content"))
}

fn push<'py>(
    ctx: &mut Ctx<'py, '_>,
    kind: Kind,
    body: &Members<'_, '_>,
    note: &mut Note<'py>,
) -> R<()> {
    let py = ctx.py;
    note.kind = kind;
    let id = get_some(body, "id").or_else(|| get(body, "subscription-id"));
    let check = ctx.model.subscription_id.clone_ref(py);
    note.subscription_id = uint32(ctx, id, &check)?;
    if kind == Kind::PushUpdate {
        if let Some(contents) = get_some(body, "datastore-contents") {
            return set_contents(ctx, contents, note);
        }
        if ctx.keys_only
            && (get(body, "datastore-contents-xml").is_some()
                || get(body, "datastore-contents-json").is_some())
        {
            return Err(Fail::Defer); // text framings: the reference decodes them
        }
        if let Some(text) = get(body, "datastore-contents-xml") {
            let Some(text) = text.as_str() else {
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
        if let Some(text) = get(body, "datastore-contents-json") {
            return match text.as_str() {
                Some(text) => {
                    let doc = json::parse(text.as_bytes(), false).map_err(|_| Fail::Defer)?;
                    set_contents(ctx, doc.root(), note)
                }
                None => set_contents(ctx, text, note),
            };
        }
        let others: Vec<&str> = body
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| unread(k, &ctx.model.push_header))
            .collect();
        if !others.is_empty() {
            let names = others
                .iter()
                .take(5)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
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
    let patch = match get(body, "datastore-changes").filter(|v| v.is_object()) {
        Some(changes) => {
            let_members!(fields = changes);
            find(fields, "yang-patch").filter(|v| v.is_object())
        }
        None => None,
    };
    let Some(patch) = patch else {
        return Err(ctx.model.framing(
            py,
            "push-change-update has no datastore-changes/yang-patch".into(),
            ctx.source,
        ));
    };
    if ctx.keys_only {
        note.patch = Some(patch.at); // its edits walked in place (patchwalk.rs)
        return Ok(());
    }
    let edits: Vec<V<'_, '_>> = match patch.get("edit") {
        None => Vec::new(),
        Some(edits) => match edits.items() {
            Some(items) => items.collect(),
            None => {
                return Err(ctx.model.notification_err(
                    py,
                    "yang-patch edit must be a list".into(),
                    ctx.source,
                ))
            }
        },
    };
    let parsed = PyList::empty(py);
    let edit_class = ctx.model.edit.bind(py).clone();
    let tuple_new = ctx.model.tuple_new.bind(py).clone();
    for edit in edits {
        if !edit.is_object() {
            return Err(ctx.model.notification_err(
                py,
                "yang-patch edit without target or operation".into(),
                ctx.source,
            ));
        }
        let_members!(fields = edit);
        let target = get(fields, "target");
        let operation = get(fields, "operation");
        let known = |op: &str| ctx.model.operations.iter().any(|o| o == op);
        let (target, operation) = match (
            target.and_then(|t| t.as_str()),
            operation.and_then(|o| o.as_str()),
        ) {
            (Some(t), Some(op)) if known(op) => (
                crate::pyconv::string(py, t)?,
                crate::pyconv::string(py, op)?,
            ),
            _ => {
                if target.is_none() || operation.is_none() {
                    return Err(ctx.model.notification_err(
                        py,
                        "yang-patch edit without target or operation".into(),
                        ctx.source,
                    ));
                }
                let op = py_or_none(ctx, operation)?;
                let op = ctx.model.operation.bind(py).call1((op, ctx.source))?;
                let t = py_or_none(ctx, target)?;
                let t = ctx.model.str_type.bind(py).call1((t,))?;
                (t, op)
            }
        };
        let edit_id = match get(fields, "edit-id") {
            None => crate::pyconv::string(py, "")?,
            Some(id) => match id.as_str() {
                Some(s) => crate::pyconv::string(py, s)?,
                None => {
                    let v = py_or_none(ctx, Some(id))?;
                    ctx.model.str_type.bind(py).call1((v,))?
                }
            },
        };
        let value = match get(fields, "value").filter(|v| v.is_object()) {
            Some(v) => to_py(py, v, ctx.names)?,
            None => py.None().into_bound(py),
        };
        let steps = ctx
            .model
            .parse_target
            .bind(py)
            .call1((target, ctx.source))?;
        let fields = PyTuple::new(py, [edit_id, operation, steps, value])?;
        parsed.append(tuple_new.call1((&edit_class, fields))?)?;
    }
    note.edits = Some(PyTuple::new(py, parsed.iter())?.into_any());
    Ok(())
}

fn set_contents<'py>(ctx: &mut Ctx<'py, '_>, contents: V<'_, '_>, note: &mut Note<'py>) -> R<()> {
    if !contents.is_object() {
        return Err(ctx.model.error(
            ctx.py,
            &ctx.model.shape_error,
            format!(
                "datastore-contents must be an object (RFC 7951), not {}",
                contents.type_name()
            ),
            ctx.source,
        ));
    }
    if ctx.keys_only {
        note.contents = Some(contents.at); // walked in place (walk.rs), never converted
    } else {
        note.data = Some(to_py(ctx.py, contents, ctx.names)?);
    }
    Ok(())
}
