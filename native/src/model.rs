//! The Python side's model, handed in once (``Decoder(model)``): the classes a decode
//! returns or raises and the reference's checks of header fields, which the native path calls
//! for anything but the common well-formed value, so both paths word every refusal alike.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// Why a native decode stops.
pub enum Fail {
    /// The reference decoder takes this document (malformed, an encoding or a depth the
    /// native parsers leave to it): it gives the answer, and words the error.
    Defer,
    /// The error the reference raises for it (a yangkey error, built by its own classes).
    Raise(PyErr),
}

impl From<PyErr> for Fail {
    fn from(err: PyErr) -> Self {
        Fail::Raise(err)
    }
}

pub type R<T> = Result<T, Fail>;

pub struct Model {
    pub notification: Py<PyAny>,
    pub edit: Py<PyAny>,
    pub tuple_new: Py<PyAny>,
    pub qname_text: Py<PyAny>,
    pub input_error: Py<PyAny>,
    pub framing_error: Py<PyAny>,
    pub shape_error: Py<PyAny>,
    pub notification_error: Py<PyAny>,
    pub parse_target: Py<PyAny>,
    pub node_name: Py<PyAny>,
    pub subscription_id: Py<PyAny>,
    pub sequence_number: Py<PyAny>,
    pub operation: Py<PyAny>,
    pub content_json: Py<PyAny>,
    pub content_xml: Py<PyAny>,
    pub push_update: Py<PyAny>,
    pub push_change_update: Py<PyAny>,
    pub str_type: Py<PyAny>,
    /// RFC 8072's edit operations, the push-update header members and the telemetry
    /// message's namespace: the reference's constants, read once.
    pub operations: Vec<String>,
    pub push_header: Vec<String>,
    pub ns_telemetry: String,
}

fn item(model: &Bound<'_, PyDict>, name: &str) -> PyResult<Py<PyAny>> {
    match model.get_item(name)? {
        Some(value) => Ok(value.unbind()),
        None => Err(pyo3::exceptions::PyKeyError::new_err(format!(
            "yangkey_native.Decoder: the model has no {name:?}"
        ))),
    }
}

fn strings(model: &Bound<'_, PyDict>, name: &str) -> PyResult<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for value in item(model, name)?.bind(model.py()).try_iter()? {
        names.push(value?.extract()?);
    }
    Ok(names)
}

impl Model {
    pub fn new(model: &Bound<'_, PyDict>) -> PyResult<Self> {
        let py = model.py();
        let builtins = py.import("builtins")?;
        let tuple = builtins.getattr("tuple")?;
        Ok(Model {
            notification: item(model, "Notification")?,
            edit: item(model, "Edit")?,
            tuple_new: tuple.getattr("__new__")?.unbind(),
            qname_text: item(model, "QNameText")?,
            input_error: item(model, "InputError")?,
            framing_error: item(model, "FramingError")?,
            shape_error: item(model, "ShapeError")?,
            notification_error: item(model, "NotificationError")?,
            parse_target: item(model, "parse_target")?,
            node_name: item(model, "node_name")?,
            subscription_id: item(model, "subscription_id")?,
            sequence_number: item(model, "sequence_number")?,
            operation: item(model, "operation")?,
            content_json: item(model, "CONTENT_TYPE_JSON")?,
            content_xml: item(model, "CONTENT_TYPE_XML")?,
            push_update: pyo3::types::PyString::intern(py, "push-update")
                .into_any()
                .unbind(),
            push_change_update: pyo3::types::PyString::intern(py, "push-change-update")
                .into_any()
                .unbind(),
            str_type: builtins.getattr("str")?.unbind(),
            operations: strings(model, "OPERATIONS")?,
            push_header: strings(model, "PUSH_HEADER")?,
            ns_telemetry: item(model, "NS_TELEMETRY")?.extract(py)?,
        })
    }

    /// ``class(reason, source=source)`` as the error to raise.
    pub fn error(
        &self,
        py: Python<'_>,
        class: &Py<PyAny>,
        reason: String,
        source: &Bound<'_, PyAny>,
    ) -> Fail {
        let kwargs = PyDict::new(py);
        if let Err(err) = kwargs.set_item("source", source) {
            return Fail::Raise(err);
        }
        match class.bind(py).call((reason,), Some(&kwargs)) {
            Ok(instance) => Fail::Raise(PyErr::from_value(instance)),
            Err(err) => Fail::Raise(err),
        }
    }

    pub fn framing(&self, py: Python<'_>, reason: String, source: &Bound<'_, PyAny>) -> Fail {
        self.error(py, &self.framing_error, reason, source)
    }

    pub fn notification_err(
        &self,
        py: Python<'_>,
        reason: String,
        source: &Bound<'_, PyAny>,
    ) -> Fail {
        self.error(py, &self.notification_error, reason, source)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    PushUpdate,
    PushChangeUpdate,
}

/// What the decoders learn, then one ``Notification`` built from it.
pub struct Note<'py> {
    pub kind: Kind,
    pub node: Option<Bound<'py, PyAny>>,
    pub subscription_id: Option<Bound<'py, PyAny>>,
    pub event_time: Option<Bound<'py, PyAny>>,
    pub sequence_number: Option<Bound<'py, PyAny>>,
    pub data: Option<Bound<'py, PyAny>>,
    /// Where a push-update's datastore-contents object is in the JSON tape (keys only).
    pub contents: Option<usize>,
    /// Where a push-change-update's yang-patch object is in the JSON tape (keys only).
    pub patch: Option<usize>,
    pub edits: Option<Bound<'py, PyAny>>,
    pub subscription: Option<Bound<'py, PyAny>>,
    pub pruned: bool,
    /// The Notification handed to a selector (XML ``wanted``) before ``data`` is known: the
    /// one returned, with ``data`` and ``pruned`` set then (as the reference does).
    pub shown: Option<Bound<'py, PyAny>>,
}

impl<'py> Note<'py> {
    pub fn new() -> Self {
        Note {
            kind: Kind::PushUpdate,
            node: None,
            subscription_id: None,
            event_time: None,
            sequence_number: None,
            data: None,
            contents: None,
            patch: None,
            edits: None,
            subscription: None,
            pruned: false,
            shown: None,
        }
    }

    pub fn build(
        self,
        py: Python<'py>,
        model: &Model,
        source: &Bound<'py, PyAny>,
        json: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(shown) = &self.shown {
            let data = match &self.data {
                Some(data) => data.clone(),
                None => PyDict::new(py).into_any(),
            };
            shown.setattr("data", data)?;
            shown.setattr("pruned", self.pruned)?;
            return Ok(shown.clone());
        }
        self.object(py, model, source, json)
    }

    /// A Notification of the fields known so far (for a selector), kept as the one to return.
    pub fn show(
        &mut self,
        py: Python<'py>,
        model: &Model,
        source: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let shown = self.object(py, model, source, false)?;
        self.shown = Some(shown.clone());
        Ok(shown)
    }

    fn object(
        &self,
        py: Python<'py>,
        model: &Model,
        source: &Bound<'py, PyAny>,
        json: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let none = || py.None().into_bound(py);
        let or_none = |v: &Option<Bound<'py, PyAny>>| v.clone().unwrap_or_else(none);
        let content = if json {
            &model.content_json
        } else {
            &model.content_xml
        };
        let kind = match self.kind {
            Kind::PushUpdate => &model.push_update,
            Kind::PushChangeUpdate => &model.push_change_update,
        };
        let data = match &self.data {
            Some(data) => data.clone(),
            None => PyDict::new(py).into_any(),
        };
        let edits = match &self.edits {
            Some(edits) => edits.clone(),
            None => PyTuple::empty(py).into_any(),
        };
        let args = PyTuple::new(
            py,
            [
                source.clone(),
                content.bind(py).clone(),
                kind.bind(py).clone(),
                or_none(&self.node),
                or_none(&self.subscription_id),
                or_none(&self.event_time),
                or_none(&self.sequence_number),
                data,
                edits,
                or_none(&self.subscription),
                pyo3::types::PyBool::new(py, self.pruned)
                    .to_owned()
                    .into_any(),
            ],
        )?;
        model.notification.bind(py).call1(args)
    }
}

/// A uint32 written as text of ASCII digits (the reference's ``parse_unsigned``); None
/// leaves the value to the reference's check, which accepts or words the refusal.
pub fn uint32_text(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = text.trim_start_matches('0');
    if digits.len() > 10 {
        return None;
    }
    if digits.is_empty() {
        return Some(0);
    }
    digits
        .parse::<u64>()
        .ok()
        .filter(|n| *n <= u32::MAX as u64)
        .map(|n| n as u32)
}

/// A node name the reference would take as it is, decided without it: printable ASCII, no
/// surrounding space. Anything else goes to its ``_node_name``.
pub fn plain_node_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.iter().all(|b| (0x20..0x7f).contains(b))
        && bytes[0] != b' '
        && bytes[bytes.len() - 1] != b' '
}

/// Python's ``str.strip()``: its whitespace is Unicode's White_Space plus U+001C..U+001F.
/// In line: text that starts and ends with a printable ASCII character (most: a yang-patch's
/// targets and operations, key values) has nothing to strip, a call for the rest.
#[inline(always)]
pub fn py_strip(text: &str) -> &str {
    match (text.as_bytes().first(), text.as_bytes().last()) {
        (Some(b'!'..=b'~'), Some(b'!'..=b'~')) => text,
        _ => strip_whitespace(text),
    }
}

#[inline(never)]
fn strip_whitespace(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// ``member.rpartition(":")[2]``.
pub fn local(member: &str) -> &str {
    match member.rfind(':') {
        Some(at) => &member[at + 1..],
        None => member,
    }
}
