//! ``Outbox``: a Spark task's native key pass producing straight into ``RdProducer`` (issue 33).
//!
//! A task's line loop (yangkey/spark/delivery/direct.py) hands ``Outbox.run`` a chunk's lines:
//! each is keyed by ``Decoder.keys``/``keys_xml`` exactly as the Python loop
//! (yangkey/spark/lines.py) calls them, and where the answer makes the one message
//! ``MessageBuilder.native_message`` would build (one topic, a plain int sequence number, a str
//! event time, within the message size limit) the message is kept here as the line, its key
//! and its route's fixed headers: no ``KeyedMessage`` tuple, no Python code per record. Any
//! other line stops the run; the loop takes it the Python way and appends its messages
//! (``Outbox.add``) so that the outbox keeps the input's order. ``RdProducer.produce_outbox``
//! then produces everything held, in order, with the headers the tuple would have carried:
//! the route's fixed ones, the sequence number, the event time, then the topic's extra ones.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};

use crate::rdkafka::HeaderList;
use crate::sink::RdProducer;
use crate::Decoder;

/// Why ``run`` stopped at a line (LIMITS, RAISED and UNANSWERED of yangkey/spark/lines.py).
/// Empty, or over the notification size limit: ``build``'s own checks.
const LIMITS: u8 = 0;
/// The pass raised (the Python loop's ``asked = False``).
const RAISED: u8 = 1;
/// The pass answered None.
const UNANSWERED: u8 = 2;
/// An answer whose messages Python builds (several topics, a message near the size limit, a
/// value of another type).
const FOUND: u8 = 3;
/// Every line taken.
const DONE: u8 = 4;

/// Routes remembered by address before starting afresh (items hold their routes themselves).
const MAX_KNOWN: usize = 16_384;

/// A route's fixed headers: (name, value or None).
type Fixed = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// What a route (``(entry, (fixed headers, their size))``) gives a message.
struct Route {
    /// The entry and fixed headers, kept alive: their addresses are ``known``'s key.
    _kept: (Py<PyAny>, Py<PyAny>),
    /// None: not one topic (Python builds the messages).
    topic: Option<String>,
    fixed: Fixed,
    size: i64,
}

enum Item {
    Direct {
        route: Arc<Route>,
        key: Option<Py<PyBytes>>,
        value: Py<PyBytes>,
        sequence: ([u8; 24], usize),
        stamp: Option<Py<PyString>>,
    },
    Message(Py<PyTuple>),
}

/// Bytes of a header value: bytes, str or None; Err for anything else.
fn value_of(value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if value.is_none() {
        return Ok(None);
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(Some(bytes.as_bytes().to_vec()));
    }
    Ok(Some(
        value.cast::<PyString>()?.to_str()?.as_bytes().to_vec(),
    ))
}

/// The messages of a task's lines on their way to ``RdProducer``; see the module doc.
#[pyclass(module = "yangkey_native")]
pub struct Outbox {
    decoder: Py<Decoder>,
    ns_modules: Py<PyAny>,
    route: Py<PyAny>,
    routes: Py<PyAny>,
    route_xml: Py<PyAny>,
    routes_xml: Py<PyAny>,
    one_topic: Option<String>,
    keys: bool,
    limit: usize,
    room: i64,
    sequence_name: Vec<u8>,
    event_time_name: Vec<u8>,
    /// ``len()`` of both names (Python's, in characters) and of the sequence number's alone.
    own_sizes: i64,
    sequence_size: i64,
    known: HashMap<(usize, usize), Arc<Route>>,
    items: Vec<Item>,
    counts: HashMap<String, usize>,
    /// The topic of the message ``produce_outbox`` was refused (for the sink's error).
    #[pyo3(get)]
    failed_topic: Option<String>,
}

impl Outbox {
    /// The route of a pass's answer (its ``extra``: ``(entry, (fixed headers, their size))``),
    /// remembered by the addresses of its entry and fixed headers (a route is a tuple per
    /// node, a learned one a new tuple each time; those two are shared); None for anything
    /// else (the Python path takes it).
    fn route_of(&mut self, extra: &Bound<'_, PyAny>) -> Option<Arc<Route>> {
        let pair = extra
            .cast::<PyTuple>()
            .ok()
            .filter(|pair| pair.len() == 2)?;
        let (entry, fixed) = (pair.get_item(0).ok()?, pair.get_item(1).ok()?);
        let address = (entry.as_ptr() as usize, fixed.as_ptr() as usize);
        if let Some(route) = self.known.get(&address) {
            return Some(route.clone());
        }
        let read = || -> PyResult<(Option<String>, Fixed, i64)> {
            let pair = fixed.cast::<PyTuple>()?;
            let size = pair.get_item(1)?.extract::<i64>()?;
            let mut headers = Vec::new();
            for header in pair.get_item(0)?.try_iter()? {
                let header = header?;
                let header = header.cast::<PyTuple>()?;
                let name = header.get_item(0)?;
                let name = name.cast::<PyString>()?.to_str()?.as_bytes().to_vec();
                headers.push((name, value_of(&header.get_item(1)?)?));
            }
            let topic = match &self.one_topic {
                Some(topic) => Some(topic.clone()),
                None => {
                    let topics = entry.getattr("topics")?;
                    if topics.len()? == 1 {
                        Some(topics.get_item(0)?.cast::<PyString>()?.to_str()?.to_owned())
                    } else {
                        None
                    }
                }
            };
            Ok((topic, headers, size))
        };
        // anything unexpected: the Python path builds (and words) it
        let (topic, headers, size) = read().unwrap_or((None, Vec::new(), 0));
        let route = Arc::new(Route {
            _kept: (entry.unbind(), fixed.unbind()),
            topic,
            fixed: headers,
            size,
        });
        if self.known.len() >= MAX_KNOWN {
            self.known.clear();
        }
        self.known.insert(address, route.clone());
        Some(route)
    }

    /// Keep the message ``found`` makes of ``line`` when it is ``native_message``'s one
    /// message within the size limit (``header_bytes`` raised as it raises the builder's);
    /// false leaves the line to Python.
    fn keep(
        &mut self,
        found: &Bound<'_, PyTuple>,
        line: &Bound<'_, PyBytes>,
        header_bytes: &mut i64,
    ) -> PyResult<bool> {
        let Some(route) = self.route_of(&found.get_item(0)?) else {
            return Ok(false);
        };
        let Some(topic) = &route.topic else {
            return Ok(false);
        };
        // b"%d" % (sequence_number or 0)
        let sequence = found.get_item(2)?;
        let number = if sequence.is_none() {
            0
        } else if sequence.is_exact_instance_of::<PyInt>() {
            match sequence.extract::<i64>() {
                Ok(number) => number,
                Err(_) => return Ok(false),
            }
        } else {
            return Ok(false);
        };
        let mut digits = [0u8; 24];
        let length = {
            use std::io::Write;
            let mut cursor = std::io::Cursor::new(&mut digits[..]);
            write!(cursor, "{number}").map_err(|e| PyException::new_err(e.to_string()))?;
            cursor.position() as usize
        };
        // str(event_time).encode() when event_time is truthy
        let event_time = found.get_item(3)?;
        let stamp = if event_time.is_none() {
            None
        } else if let Ok(text) = event_time.cast_exact::<PyString>() {
            match text.to_str() {
                Ok("") => None,
                Ok(words) => Some((text.clone().unbind(), words.len() as i64)),
                Err(_) => return Ok(false),
            }
        } else {
            return Ok(false);
        };
        let size = route.size
            + length as i64
            + match &stamp {
                Some((_, stamp)) => self.own_sizes + stamp,
                None => self.sequence_size,
            };
        let key = if self.keys {
            let key = found.get_item(4)?;
            if key.is_none() {
                None
            } else {
                match key.cast_into::<PyBytes>() {
                    Ok(key) => Some(key),
                    Err(_) => return Ok(false),
                }
            }
        } else {
            None
        };
        let bound = (*header_bytes).max(size);
        let wire = key.as_ref().map_or(0, |k| k.as_bytes().len()) + line.as_bytes().len();
        if wire as i64 > self.room - bound {
            return Ok(false); // Python words the oversized message (settled)
        }
        *header_bytes = bound;
        match self.counts.get_mut(topic.as_str()) {
            Some(count) => *count += 1,
            None => {
                self.counts.insert(topic.clone(), 1);
            }
        }
        self.items.push(Item::Direct {
            route: route.clone(),
            key: key.map(Bound::unbind),
            value: line.clone().unbind(),
            sequence: (digits, length),
            stamp: stamp.map(|(text, _)| text),
        });
        Ok(true)
    }
}

#[pymethods]
impl Outbox {
    /// ``decoder`` and the route arguments: a ``NativePass``'s (the JSON pass asked with
    /// learning on); ``one_topic``: every message's topic, or None for the route's entry's
    /// only topic; ``keys``: messages carry their key; ``limit``: the builder's notification
    /// size limit; ``room``: the message size limit less the record overhead; the names of the
    /// sequence number and event time headers.
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        decoder: Py<Decoder>,
        ns_modules: Py<PyAny>,
        route: Py<PyAny>,
        routes: Py<PyAny>,
        route_xml: Py<PyAny>,
        routes_xml: Py<PyAny>,
        one_topic: Option<String>,
        keys: bool,
        limit: usize,
        room: i64,
        sequence_name: &str,
        event_time_name: &str,
    ) -> Self {
        let sequence_size = sequence_name.chars().count() as i64;
        Outbox {
            decoder,
            ns_modules,
            route,
            routes,
            route_xml,
            routes_xml,
            one_topic,
            keys,
            limit,
            room,
            sequence_name: sequence_name.as_bytes().to_vec(),
            event_time_name: event_time_name.as_bytes().to_vec(),
            own_sizes: sequence_size + event_time_name.chars().count() as i64,
            sequence_size,
            known: HashMap::new(),
            items: Vec::new(),
            counts: HashMap::new(),
            failed_topic: None,
        }
    }

    /// Key ``lines[start:]`` (bytes each), keeping each line's message, until a line the Python
    /// loop must take: returns ``(its index, why, the pass's answer or None, header_bytes)``
    /// (``why``: 0 empty or over the size limit, 1 the pass raised, 2 it answered None, 3 an
    /// answer Python builds; 4 and ``len(lines)``: every line kept). ``header_bytes``: the
    /// builder's bound, returned raised by the messages kept.
    fn run<'py>(
        &mut self,
        py: Python<'py>,
        lines: &Bound<'py, PyList>,
        start: usize,
        source: &Bound<'py, PyAny>,
        header_bytes: i64,
    ) -> PyResult<(usize, u8, Option<Bound<'py, PyTuple>>, i64)> {
        let decoder = self.decoder.clone_ref(py);
        let decoder = decoder.bind(py).get();
        let ns_modules = self.ns_modules.clone_ref(py).into_bound(py);
        let (route, routes) = (self.route.bind(py).clone(), self.routes.bind(py).clone());
        let route_xml = self.route_xml.bind(py).clone();
        let routes_xml = self.routes_xml.bind(py).clone();
        let mut bound = header_bytes;
        let count = lines.len();
        for at in start..count {
            let line = lines.get_item(at)?.cast_into::<PyBytes>()?;
            let data = line.as_bytes();
            if data.is_empty() || data.len() > self.limit {
                return Ok((at, LIMITS, None, bound));
            }
            let found = if data[0] == b'<' {
                decoder.keys_xml(
                    py,
                    &line,
                    source,
                    &ns_modules,
                    &route_xml,
                    false,
                    Some(&routes_xml),
                    false,
                )
            } else {
                decoder.keys(
                    py,
                    &line,
                    source,
                    &ns_modules,
                    &route,
                    false,
                    Some(&routes),
                    false,
                    true,
                )
            };
            let found = match found {
                Ok(Some(found)) => found,
                Ok(None) => return Ok((at, UNANSWERED, None, bound)),
                Err(error) if error.is_instance_of::<PyException>(py) => {
                    return Ok((at, RAISED, None, bound))
                }
                Err(error) => return Err(error),
            };
            if !self.keep(&found, &line, &mut bound)? {
                return Ok((at, FOUND, Some(found), bound));
            }
        }
        Ok((count, DONE, None, bound))
    }

    /// Append ``messages`` (``(topic, key, value, headers)`` tuples), in order.
    fn add(&mut self, messages: &Bound<'_, PyList>) -> PyResult<()> {
        for message in messages.iter() {
            self.items
                .push(Item::Message(message.cast_into::<PyTuple>()?.unbind()));
        }
        Ok(())
    }

    /// The messages ``run`` kept per topic since the last call.
    fn counts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let counts = PyDict::new(py);
        for (topic, count) in self.counts.drain() {
            counts.set_item(topic, count)?;
        }
        Ok(counts)
    }

    /// What ``produce_outbox`` would produce, as ``(topic, key, value, headers)`` tuples
    /// (before the topic's extra headers), the outbox emptied: for tests.
    fn take<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let names = (
            self.sequence_name.as_slice(),
            self.event_time_name.as_slice(),
        );
        let mut taken = Vec::with_capacity(self.items.len());
        for item in std::mem::take(&mut self.items) {
            let (route, key, value, sequence, stamp) = match item {
                Item::Message(message) => {
                    taken.push(message.into_bound(py).into_any());
                    continue;
                }
                Item::Direct {
                    route,
                    key,
                    value,
                    sequence,
                    stamp,
                } => (route, key, value, sequence, stamp),
            };
            let stamp = stamp.map(|s| s.into_bound(py));
            let stamp = stamp.as_ref().map(|s| s.to_str()).transpose()?;
            let mut pairs = Vec::new();
            headers(&route, &sequence, stamp, names, |name, value| {
                let name = String::from_utf8_lossy(name).into_owned();
                pairs.push((name, value.map(|v| PyBytes::new(py, v))));
            });
            let message = (route.topic.clone(), key, value, PyTuple::new(py, pairs)?);
            taken.push(message.into_pyobject(py)?.into_any());
        }
        Ok(taken)
    }

    fn __len__(&self) -> usize {
        self.items.len()
    }
}

/// A direct item's headers, in ``native_message``'s order: the route's fixed ones, the
/// sequence number, the event time (when there is one).
fn headers(
    route: &Route,
    sequence: &([u8; 24], usize),
    stamp: Option<&str>,
    (sequence_name, event_time_name): (&[u8], &[u8]),
    mut add: impl FnMut(&[u8], Option<&[u8]>),
) {
    for (name, value) in &route.fixed {
        add(name, value.as_deref());
    }
    add(sequence_name, Some(&sequence.0[..sequence.1]));
    if let Some(stamp) = stamp {
        add(event_time_name, Some(stamp.as_bytes()));
    }
}

/// ``RdProducer.produce_outbox``: every item of ``outbox`` produced in order, the outbox
/// emptied; how many were produced (fewer: a delivery failed while the queue was full).
pub fn produce(
    producer: &mut RdProducer,
    py: Python<'_>,
    outbox: &mut Outbox,
    headers_for: &Bound<'_, PyAny>,
) -> PyResult<usize> {
    let items = std::mem::take(&mut outbox.items);
    let (sequence_name, event_time_name) = (&outbox.sequence_name, &outbox.event_time_name);
    let mut sent = 0;
    for item in &items {
        let done = match item {
            Item::Message(message) => producer.send_tuple(py, message.bind(py), headers_for, sent),
            Item::Direct {
                route,
                key,
                value,
                sequence,
                stamp,
            } => {
                let topic = route.topic.as_deref().unwrap_or_default();
                let key = key.as_ref().map(|key| key.bind(py).as_bytes());
                let value = value.bind(py).as_bytes();
                let stamp = stamp.as_ref().map(|s| s.bind(py).clone());
                let stamp = stamp.as_ref().map(|s| s.to_str()).transpose()?;
                let own = route.fixed.len() + 1 + usize::from(stamp.is_some());
                let fill = |list: &HeaderList| -> PyResult<()> {
                    let names = (sequence_name.as_slice(), event_time_name.as_slice());
                    headers(route, sequence, stamp, names, |name, value| {
                        list.add(name, value)
                    });
                    Ok(())
                };
                producer.send_one(py, topic, headers_for, key, Some(value), own, fill, sent)
            }
        };
        match done {
            Ok(true) => sent += 1,
            Ok(false) => break,
            Err(error) => {
                outbox.failed_topic = Some(match item {
                    Item::Message(message) => message.bind(py).get_item(0)?.str()?.to_string(),
                    Item::Direct { route, .. } => route.topic.clone().unwrap_or_default(),
                });
                return Err(error);
            }
        }
    }
    Ok(sent)
}
