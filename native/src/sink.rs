//! ``RdProducer``: the Spark job's Kafka producer over librdkafka's C API (issue 33).
//!
//! yangkey's ``KafkaSink`` (yangkey/spark/delivery/sink.py) produced through confluent-kafka's
//! ``Producer.produce``, one Python call per message, five headers converted (one malloc each)
//! per call: that and its ``poll`` cost as much as the whole plain produce loop. This class
//! takes a chunk of ``(topic, key, value, headers)`` tuples in one call and hands each to
//! ``rd_kafka_produceva`` (cached topic handles, copied payloads, headers built with
//! ``rd_kafka_headers_new``/``add``). The transactional calls mirror confluent-kafka's and
//! raise ``RdKafkaError`` carrying the ``rd_kafka_error_t``'s fields; the Python adapter
//! (yangkey/spark/delivery/native_producer.py) turns it into the ``KafkaException`` the
//! sink's error handling reads. Every call that waits on the broker releases the GIL.
//!
//! Delivery reports (``delivery.report.only.error``: failures only) are counted here, the
//! first failure's topic and librdkafka's words kept for the sink's error; log lines are
//! queued for Python to drain into the logger confluent-kafka would have called.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::rdkafka::{self, Api, HeaderList, KafkaErr, Message, Ptr, Vu};

pyo3::create_exception!(
    yangkey_native,
    RdKafkaError,
    PyException,
    "A librdkafka error: args (code, name, string, retriable, fatal, txn_requires_abort)."
);

/// Log lines held at most between two drains (the oldest are kept: they say what went wrong).
const MAX_LOG_LINES: usize = 10_000;

/// A librdkafka handle: thread-safe by librdkafka's contract.
#[derive(Clone, Copy)]
struct Handle(Ptr);
// SAFETY: rd_kafka_t and rd_kafka_topic_t may be used from any thread.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Handle {
    /// The pointer (a method, so that a closure captures the whole Send handle).
    fn get(self) -> Ptr {
        self.0
    }
}

/// What the callbacks write (librdkafka's threads, or the polling one): boxed, its address is
/// the handle's opaque.
struct Shared {
    api: Arc<Api>,
    failed: AtomicU64,
    first_failure: Mutex<Option<(String, String)>>,
    logs: Mutex<Vec<(i32, String, String, String)>>,
}

unsafe extern "C" fn on_delivery(_rk: Ptr, message: *const Message, opaque: Ptr) {
    if message.is_null() || opaque.is_null() {
        return;
    }
    // SAFETY: ``opaque`` is the producer's boxed Shared, alive until rd_kafka_destroy returns.
    let shared = unsafe { &*(opaque as *const Shared) };
    let message = unsafe { &*message };
    if message.err == 0 {
        return;
    }
    shared.failed.fetch_add(1, Ordering::Relaxed);
    let mut first = shared
        .first_failure
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if first.is_none() {
        let api = &shared.api;
        let topic = if message.rkt.is_null() {
            "?".to_owned()
        } else {
            rdkafka::text(unsafe { (api.topic_name)(message.rkt) })
        };
        *first = Some((topic, rdkafka::text(unsafe { (api.err2str)(message.err) })));
    }
}

/// Client errors (a broker down, ...) are not logged: confluent-kafka sets an error callback
/// that drops them when the application gives none (the sink gives none), and the
/// transactional calls and delivery reports say what failed.
unsafe extern "C" fn on_error(_rk: Ptr, _code: c_int, _reason: *const c_char, _opaque: Ptr) {}

unsafe extern "C" fn on_log(
    rk: *const c_void,
    level: c_int,
    fac: *const c_char,
    buf: *const c_char,
) {
    if rk.is_null() {
        return;
    }
    let shared = match OPAQUE_READER.get() {
        Some(read) => unsafe { read(rk) },
        None => return,
    };
    if shared.is_null() {
        return;
    }
    // SAFETY: as in on_delivery.
    let shared = unsafe { &*(shared as *const Shared) };
    let name = rdkafka::text(unsafe { (shared.api.name)(rk) });
    let mut logs = shared.logs.lock().unwrap_or_else(|e| e.into_inner());
    if logs.len() < MAX_LOG_LINES {
        logs.push((level, rdkafka::text(fac), name, rdkafka::text(buf)));
    }
}

/// ``rd_kafka_opaque`` of the first library loaded: the log callback gets only the handle.
static OPAQUE_READER: std::sync::OnceLock<unsafe extern "C" fn(*const c_void) -> Ptr> =
    std::sync::OnceLock::new();

struct Topic {
    rkt: Handle,
    extra: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

fn err(error: KafkaErr) -> PyErr {
    RdKafkaError::new_err((
        error.code,
        error.name,
        error.string,
        error.retriable,
        error.fatal,
        error.txn_requires_abort,
    ))
}

/// ``err`` of ``produce``: its args end with the index of the message refused.
fn produce_err(error: KafkaErr, index: usize) -> PyErr {
    RdKafkaError::new_err((
        error.code,
        error.name,
        error.string,
        error.retriable,
        error.fatal,
        error.txn_requires_abort,
        index,
    ))
}

fn millis(timeout: f64) -> c_int {
    if timeout < 0.0 {
        -1
    } else {
        (timeout * 1000.0).min(c_int::MAX as f64) as c_int
    }
}

/// Bytes of a key, value or header value: bytes, str (UTF-8) or None.
fn bytes_of<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a [u8]>> {
    if value.is_none() {
        return Ok(None);
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(Some(bytes.as_bytes()));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Some(text.to_str()?.as_bytes()));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "expected bytes, str or None, got {}",
        value.get_type().name()?
    )))
}

/// ``(rd_kafka_version(), rd_kafka_version_str())`` of the librdkafka at ``path``; OSError
/// when it cannot be opened or lacks a function the producer calls.
#[pyfunction]
pub fn rdkafka_version(path: &str) -> PyResult<(i32, String)> {
    let api = rdkafka::load(path).map_err(pyo3::exceptions::PyOSError::new_err)?;
    // SAFETY: both take nothing and return static data.
    Ok(unsafe { ((api.version)(), rdkafka::text((api.version_str)())) })
}

/// The librdkafka producer of one Spark task attempt.
#[pyclass(module = "yangkey_native")]
pub struct RdProducer {
    api: Arc<Api>,
    rk: Handle,
    shared: Box<Shared>,
    topics: HashMap<String, Topic>,
}

impl RdProducer {
    fn rk(&self) -> PyResult<Ptr> {
        if self.rk.0.is_null() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the producer is closed",
            ));
        }
        Ok(self.rk.0)
    }

    fn topic(&mut self, topic: &str, headers_for: &Bound<'_, PyAny>) -> PyResult<&Topic> {
        if !self.topics.contains_key(topic) {
            let mut extra = Vec::new();
            for header in headers_for.call1((topic,))?.try_iter()? {
                let header = header?;
                let pair = header.cast::<PyTuple>()?;
                let name = pair.get_item(0)?;
                let value = pair.get_item(1)?;
                extra.push((
                    name.cast::<PyString>()?.to_str()?.as_bytes().to_vec(),
                    bytes_of(&value)?.map(<[u8]>::to_vec),
                ));
            }
            let name = CString::new(topic)
                .map_err(|_| pyo3::exceptions::PyValueError::new_err("topic holds a NUL"))?;
            // SAFETY: rk is live; NULL conf: the producer's topic defaults.
            let rkt =
                unsafe { (self.api.topic_new)(self.rk()?, name.as_ptr(), std::ptr::null_mut()) };
            if rkt.is_null() {
                return Err(err(self.api.code_error(
                    rdkafka::ERR_INVALID_ARG,
                    Some(format!("cannot make a handle for topic {topic}")),
                )));
            }
            self.topics.insert(
                topic.to_owned(),
                Topic {
                    rkt: Handle(rkt),
                    extra,
                },
            );
        }
        Ok(&self.topics[topic])
    }

    /// Produce one message of ``topic``: its ``own`` headers written by ``fill``, then the
    /// topic's extra ones. Ok(false): the local queue was full and a delivery failed meanwhile
    /// (nothing produced); a refused message raises (``index``: its place in the call's).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send_one(
        &mut self,
        py: Python<'_>,
        topic: &str,
        headers_for: &Bound<'_, PyAny>,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        own: usize,
        fill: impl FnOnce(&HeaderList) -> PyResult<()>,
        index: usize,
    ) -> PyResult<bool> {
        let rk = self.rk()?;
        let api = self.api.clone();
        let topic = self.topic(topic, headers_for)?;
        let rkt = topic.rkt.0;
        let count = own + topic.extra.len();
        let list = HeaderList::new(&api, count);
        fill(&list)?;
        for (name, value) in &topic.extra {
            list.add(name, value.as_deref());
        }
        let args = [
            Vu::ptr(rdkafka::VTYPE_RKT, rkt),
            Vu::mem(rdkafka::VTYPE_VALUE, value),
            Vu::mem(rdkafka::VTYPE_KEY, key),
            Vu::int(rdkafka::VTYPE_MSGFLAGS, rdkafka::MSG_F_COPY),
            Vu::ptr(rdkafka::VTYPE_HEADERS, list.list),
        ];
        let args = if list.list.is_null() {
            &args[..4]
        } else {
            &args[..]
        };
        loop {
            // SAFETY: every pointer in args lives until produceva returns (payloads are
            // copied); the headers list passes to librdkafka on success only.
            let error = unsafe { (api.produceva)(rk, args.as_ptr(), args.len()) };
            match api.take_error(error) {
                None => {
                    list.release();
                    return Ok(true);
                }
                Some(e) if e.code == rdkafka::ERR_QUEUE_FULL => {
                    // the local queue is full: let deliveries drain, GIL released
                    let handle = Handle(rk);
                    let poll = api.poll;
                    py.detach(move || unsafe { poll(handle.get(), 50) });
                    if self.shared.failed.load(Ordering::Relaxed) > 0 {
                        return Ok(false);
                    }
                }
                Some(e) => {
                    // confluent-kafka's words for a refused message
                    let words = api.code_error(e.code, None).string;
                    let refused =
                        api.code_error(e.code, Some(format!("Unable to produce message: {words}")));
                    return Err(produce_err(refused, index));
                }
            }
        }
    }

    /// ``send_one`` of a ``(topic, key, value, headers)`` tuple.
    pub(crate) fn send_tuple(
        &mut self,
        py: Python<'_>,
        message: &Bound<'_, PyTuple>,
        headers_for: &Bound<'_, PyAny>,
        index: usize,
    ) -> PyResult<bool> {
        let topic = message.get_item(0)?;
        let topic = topic.cast::<PyString>()?.to_str()?;
        let key = message.get_item(1)?;
        let value = message.get_item(2)?;
        let headers = message.get_item(3)?;
        let headers = headers.cast::<PyTuple>()?;
        let (key, value) = (bytes_of(&key)?, bytes_of(&value)?);
        let fill = |list: &HeaderList| -> PyResult<()> {
            for header in headers.iter() {
                let pair = header.cast::<PyTuple>()?;
                let name = pair.get_item(0)?;
                let value = pair.get_item(1)?;
                list.add(
                    name.cast::<PyString>()?.to_str()?.as_bytes(),
                    bytes_of(&value)?,
                );
            }
            Ok(())
        };
        self.send_one(
            py,
            topic,
            headers_for,
            key,
            value,
            headers.len(),
            fill,
            index,
        )
    }

    fn wait(&self, py: Python<'_>, call: impl FnOnce(&Api, Ptr) -> Ptr + Send) -> PyResult<()> {
        let rk = Handle(self.rk()?);
        let api = self.api.clone();
        let error = py.detach(move || Handle(call(&api, rk.get())));
        match self.api.take_error(error.0) {
            None => Ok(()),
            Some(error) => Err(err(error)),
        }
    }

    fn destroy(&mut self) {
        for (_, topic) in self.topics.drain() {
            // SAFETY: each handle was made by topic_new and is destroyed once.
            unsafe { (self.api.topic_destroy)(topic.rkt.0) };
        }
        if !self.rk.0.is_null() {
            // SAFETY: the handle is live and destroyed once; Shared outlives it.
            unsafe { (self.api.destroy)(self.rk.0) };
            self.rk = Handle(std::ptr::null_mut());
        }
    }
}

#[pymethods]
impl RdProducer {
    /// A producer of librdkafka at ``path`` with ``config`` (string values, librdkafka's keys
    /// only); raises RdKafkaError for a key or value librdkafka refuses.
    #[new]
    fn new(py: Python<'_>, path: &str, config: Vec<(String, String)>) -> PyResult<Self> {
        let api = rdkafka::load(path).map_err(pyo3::exceptions::PyOSError::new_err)?;
        let _ = OPAQUE_READER.set(api.opaque);
        let shared = Box::new(Shared {
            api: api.clone(),
            failed: AtomicU64::new(0),
            first_failure: Mutex::new(None),
            logs: Mutex::new(Vec::new()),
        });
        let mut errstr = vec![0 as c_char; 512];
        // SAFETY: a fresh conf, owned here until rd_kafka_new takes it.
        let conf = unsafe { (api.conf_new)() };
        for (key, value) in &config {
            let (Ok(k), Ok(v)) = (CString::new(key.as_str()), CString::new(value.as_str())) else {
                unsafe { (api.conf_destroy)(conf) };
                return Err(err(api.code_error(
                    rdkafka::ERR_INVALID_ARG,
                    Some(format!("configuration property {key} holds a NUL")),
                )));
            };
            let res = unsafe {
                (api.conf_set)(
                    conf,
                    k.as_ptr(),
                    v.as_ptr(),
                    errstr.as_mut_ptr(),
                    errstr.len(),
                )
            };
            if res != rdkafka::CONF_OK {
                unsafe { (api.conf_destroy)(conf) };
                return Err(err(api.code_error(
                    rdkafka::ERR_INVALID_ARG,
                    Some(rdkafka::text(errstr.as_ptr())),
                )));
            }
        }
        let opaque = &*shared as *const Shared as Ptr;
        // SAFETY: conf is live; the callbacks only read the Shared, which outlives the handle.
        let rk = unsafe {
            (api.conf_set_dr_msg_cb)(conf, Some(on_delivery));
            (api.conf_set_log_cb)(conf, Some(on_log));
            (api.conf_set_error_cb)(conf, Some(on_error));
            (api.conf_set_opaque)(conf, opaque);
            let conf = Handle(conf);
            let errs = Handle(errstr.as_mut_ptr() as Ptr);
            let len = errstr.len();
            let new = api.new;
            py.detach(move || {
                Handle(new(
                    rdkafka::PRODUCER,
                    conf.get(),
                    errs.get() as *mut c_char,
                    len,
                ))
            })
        };
        if rk.0.is_null() {
            unsafe { (api.conf_destroy)(conf) };
            return Err(err(api.code_error(
                rdkafka::ERR_INVALID_ARG,
                Some(rdkafka::text(errstr.as_ptr())),
            )));
        }
        Ok(RdProducer {
            api,
            rk,
            shared,
            topics: HashMap::new(),
        })
    }

    /// Produce every ``(topic, key, value, headers)`` of ``messages``; ``headers_for(topic)``
    /// (asked once per topic) gives the headers added to each of that topic's messages.
    /// Returns how many were produced: fewer when the local queue was full and a delivery
    /// failed meanwhile (the caller raises the delivery error).
    fn produce(
        &mut self,
        py: Python<'_>,
        messages: &Bound<'_, PyList>,
        headers_for: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let mut sent = 0;
        for item in messages.iter() {
            if !self.send_tuple(py, item.cast::<PyTuple>()?, headers_for, sent)? {
                break;
            }
            sent += 1;
        }
        Ok(sent)
    }

    /// ``produce`` of what an ``Outbox`` holds (direct.rs), in its order, the outbox emptied;
    /// a refused message raises with its index and topic as the last two args.
    fn produce_outbox(
        &mut self,
        py: Python<'_>,
        outbox: &Bound<'_, crate::direct::Outbox>,
        headers_for: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        crate::direct::produce(self, py, &mut outbox.borrow_mut(), headers_for)
    }

    /// ``rd_kafka_poll``: serve delivery reports for up to ``timeout`` seconds.
    fn poll(&self, py: Python<'_>, timeout: f64) -> PyResult<i32> {
        let rk = Handle(self.rk()?);
        let poll = self.api.poll;
        let ms = millis(timeout);
        Ok(py.detach(move || unsafe { poll(rk.get(), ms) }))
    }

    /// ``rd_kafka_flush``; returns the messages still queued or in flight.
    fn flush(&self, py: Python<'_>, timeout: f64) -> PyResult<i32> {
        let rk = Handle(self.rk()?);
        let (flush, outq_len) = (self.api.flush, self.api.outq_len);
        let ms = millis(timeout);
        Ok(py.detach(move || unsafe {
            flush(rk.get(), ms);
            outq_len(rk.get())
        }))
    }

    /// ``(count, first topic, librdkafka's words)`` of the failed deliveries, or None.
    fn delivery_failure(&self) -> Option<(u64, String, String)> {
        let failed = self.shared.failed.load(Ordering::Relaxed);
        if failed == 0 {
            return None;
        }
        let first = self
            .shared
            .first_failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| ("?".to_owned(), String::new()));
        Some((failed, first.0, first.1))
    }

    /// The log lines since the last call: ``(syslog level, facility, client name, text)``.
    fn drain_logs(&self) -> Vec<(i32, String, String, String)> {
        std::mem::take(&mut *self.shared.logs.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn init_transactions(&self, py: Python<'_>, timeout: f64) -> PyResult<()> {
        let ms = millis(timeout);
        self.wait(py, move |api, rk| unsafe {
            (api.init_transactions)(rk, ms)
        })
    }

    fn begin_transaction(&self, py: Python<'_>) -> PyResult<()> {
        self.wait(py, |api, rk| unsafe { (api.begin_transaction)(rk) })
    }

    fn commit_transaction(&self, py: Python<'_>, timeout: f64) -> PyResult<()> {
        let ms = millis(timeout);
        self.wait(py, move |api, rk| unsafe {
            (api.commit_transaction)(rk, ms)
        })
    }

    fn abort_transaction(&self, py: Python<'_>, timeout: f64) -> PyResult<()> {
        let ms = millis(timeout);
        self.wait(py, move |api, rk| unsafe {
            (api.abort_transaction)(rk, ms)
        })
    }

    /// Commit ``offset`` (and ``metadata``) of ``topic[partition]`` for consumer group
    /// ``group_id`` in the open transaction (confluent-kafka's ``send_offsets_to_transaction``
    /// with that group's metadata).
    #[allow(clippy::too_many_arguments)]
    fn send_offsets_to_transaction(
        &self,
        py: Python<'_>,
        topic: &str,
        partition: i32,
        offset: i64,
        metadata: Option<&str>,
        group_id: &str,
        timeout: f64,
    ) -> PyResult<()> {
        let rk = self.rk()?;
        let invalid = |what: &str| {
            err(self.api.code_error(
                rdkafka::ERR_INVALID_ARG,
                Some(format!("{what} holds a NUL")),
            ))
        };
        let topic = CString::new(topic).map_err(|_| invalid("topic"))?;
        let group = CString::new(group_id).map_err(|_| invalid("group id"))?;
        let api = &self.api;
        // SAFETY: fresh objects, destroyed below; metadata is allocated by librdkafka's
        // allocator, which frees it with the list.
        let (list, group_metadata) = unsafe {
            let list = (api.partitions_new)(1);
            let entry = (api.partitions_add)(list, topic.as_ptr(), partition);
            (*entry).offset = offset;
            if let Some(metadata) = metadata {
                // As confluent-kafka passes it: NUL-terminated, the NUL counted in the size
                // (the broker keeps those bytes; a reader of either client sees the same).
                let copy = (api.mem_malloc)(rk, metadata.len() + 1) as *mut u8;
                std::ptr::copy_nonoverlapping(metadata.as_ptr(), copy, metadata.len());
                *copy.add(metadata.len()) = 0;
                (*entry).metadata = copy as Ptr;
                (*entry).metadata_size = metadata.len() + 1;
            }
            (
                Handle(list),
                Handle((api.group_metadata_new)(group.as_ptr())),
            )
        };
        let ms = millis(timeout);
        let result = self.wait(py, move |api, rk| unsafe {
            (api.send_offsets_to_transaction)(rk, list.get(), group_metadata.get(), ms)
        });
        unsafe {
            (api.group_metadata_destroy)(group_metadata.0);
            (api.partitions_destroy)(list.0);
        }
        result
    }

    /// Drop the queued and in-flight messages (``purge(in_queue, in_flight, blocking)``).
    fn purge(&self, py: Python<'_>) -> PyResult<()> {
        let rk = Handle(self.rk()?);
        let purge = self.api.purge;
        let code = py.detach(move || unsafe { purge(rk.get(), rdkafka::PURGE_QUEUE_AND_INFLIGHT) });
        if code != 0 {
            return Err(err(self.api.code_error(code, None)));
        }
        Ok(())
    }

    /// Flush without a limit and destroy the handle, as confluent-kafka's ``close`` does;
    /// a second call does nothing.
    fn close(&mut self, py: Python<'_>) {
        if self.rk.0.is_null() {
            return;
        }
        let rk = self.rk;
        let flush = self.api.flush;
        py.detach(move || unsafe { flush(rk.get(), -1) });
        py.detach(|| self.destroy());
    }
}

impl Drop for RdProducer {
    fn drop(&mut self) {
        if self.rk.0.is_null() && self.topics.is_empty() {
            return;
        }
        // rd_kafka_destroy joins librdkafka's threads: without the GIL, as confluent-kafka's
        // dealloc does (a task's other threads, the heartbeat, go on meanwhile).
        Python::attach(|py| py.detach(|| self.destroy()));
    }
}
