//! The few librdkafka functions the native Kafka sink calls (native/src/sink.rs), resolved at
//! run time from the librdkafka the process already uses through confluent-kafka.
//!
//! Nothing links librdkafka at build time: yangkey's Python side finds the library
//! confluent-kafka loaded (its wheel's ``confluent_kafka.libs/librdkafka-*.so.1``, or the
//! system one a source build links), checks that its ``rd_kafka_version()`` is
//! confluent-kafka's, and hands the path here. Opening an already loaded library returns the
//! same handle, so both clients share one librdkafka. The declarations follow rdkafka.h
//! (librdkafka 2.x): only stable, documented functions and structs.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Arc, Mutex, OnceLock};

use libloading::Library;

pub type Ptr = *mut c_void;

/// ``rd_kafka_message_t``: what a delivery report callback receives.
#[repr(C)]
pub struct Message {
    pub err: c_int,
    pub rkt: Ptr,
    pub partition: i32,
    pub payload: Ptr,
    pub len: usize,
    pub key: Ptr,
    pub key_len: usize,
    pub offset: i64,
    pub private: Ptr,
}

/// ``rd_kafka_topic_partition_t``.
#[repr(C)]
pub struct TopicPartition {
    pub topic: *mut c_char,
    pub partition: i32,
    pub offset: i64,
    pub metadata: Ptr,
    pub metadata_size: usize,
    pub opaque: Ptr,
    pub err: c_int,
    pub private: Ptr,
}

/// ``rd_kafka_vu_t``: one argument of ``rd_kafka_produceva``.
#[repr(C)]
pub struct Vu {
    pub vtype: c_int,
    pub u: VuData,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Mem {
    pub ptr: *const c_void,
    pub size: usize,
}

#[repr(C)]
pub union VuData {
    pub ptr: Ptr,
    pub i: c_int,
    pub mem: Mem,
    pad: [u8; 64],
}

pub const VTYPE_RKT: c_int = 2;
pub const VTYPE_VALUE: c_int = 4;
pub const VTYPE_KEY: c_int = 5;
pub const VTYPE_MSGFLAGS: c_int = 7;
pub const VTYPE_HEADERS: c_int = 10;
pub const MSG_F_COPY: c_int = 0x2;
pub const PRODUCER: c_int = 0;
pub const PURGE_QUEUE_AND_INFLIGHT: c_int = 0x1 | 0x2;
pub const ERR_QUEUE_FULL: c_int = -184;
pub const ERR_INVALID_ARG: c_int = -186;
pub const CONF_OK: c_int = 0;

impl Vu {
    pub fn ptr(vtype: c_int, ptr: Ptr) -> Vu {
        Vu {
            vtype,
            u: VuData { ptr },
        }
    }
    pub fn int(vtype: c_int, i: c_int) -> Vu {
        Vu {
            vtype,
            u: VuData { i },
        }
    }
    pub fn mem(vtype: c_int, bytes: Option<&[u8]>) -> Vu {
        let (ptr, size) = match bytes {
            Some(b) => (b.as_ptr() as *const c_void, b.len()),
            None => (std::ptr::null(), 0),
        };
        Vu {
            vtype,
            u: VuData {
                mem: Mem { ptr, size },
            },
        }
    }
}

pub type DrCb = unsafe extern "C" fn(Ptr, *const Message, Ptr);
pub type ErrCb = unsafe extern "C" fn(Ptr, c_int, *const c_char, Ptr);
pub type LogCb = unsafe extern "C" fn(*const c_void, c_int, *const c_char, *const c_char);

macro_rules! api {
    ($($field:ident = $symbol:literal: $ty:ty;)*) => {
        /// librdkafka's functions, resolved once per library path.
        pub struct Api {
            $(pub $field: $ty,)*
            _lib: Library,
        }

        impl Api {
            fn open(path: &str) -> Result<Api, String> {
                // SAFETY: the library is librdkafka (its version is checked by the caller
                // against confluent-kafka's); loading it runs no constructor that matters.
                let lib = unsafe { Library::new(path) }.map_err(|e| format!("cannot open {path}: {e}"))?;
                $(
                    // SAFETY: the signature is rdkafka.h's.
                    let $field: $ty = *unsafe { lib.get::<$ty>($symbol) }
                        .map_err(|e| format!("{path} lacks {}: {e}",
                            String::from_utf8_lossy(&$symbol[..$symbol.len() - 1])))?;
                )*
                Ok(Api { $($field,)* _lib: lib })
            }
        }
    };
}

api! {
    version = b"rd_kafka_version\0": unsafe extern "C" fn() -> c_int;
    version_str = b"rd_kafka_version_str\0": unsafe extern "C" fn() -> *const c_char;
    conf_new = b"rd_kafka_conf_new\0": unsafe extern "C" fn() -> Ptr;
    conf_set = b"rd_kafka_conf_set\0":
        unsafe extern "C" fn(Ptr, *const c_char, *const c_char, *mut c_char, usize) -> c_int;
    conf_destroy = b"rd_kafka_conf_destroy\0": unsafe extern "C" fn(Ptr);
    conf_set_dr_msg_cb = b"rd_kafka_conf_set_dr_msg_cb\0": unsafe extern "C" fn(Ptr, Option<DrCb>);
    conf_set_log_cb = b"rd_kafka_conf_set_log_cb\0": unsafe extern "C" fn(Ptr, Option<LogCb>);
    conf_set_error_cb = b"rd_kafka_conf_set_error_cb\0": unsafe extern "C" fn(Ptr, Option<ErrCb>);
    conf_set_opaque = b"rd_kafka_conf_set_opaque\0": unsafe extern "C" fn(Ptr, Ptr);
    opaque = b"rd_kafka_opaque\0": unsafe extern "C" fn(*const c_void) -> Ptr;
    name = b"rd_kafka_name\0": unsafe extern "C" fn(*const c_void) -> *const c_char;
    new = b"rd_kafka_new\0": unsafe extern "C" fn(c_int, Ptr, *mut c_char, usize) -> Ptr;
    destroy = b"rd_kafka_destroy\0": unsafe extern "C" fn(Ptr);
    flush = b"rd_kafka_flush\0": unsafe extern "C" fn(Ptr, c_int) -> c_int;
    outq_len = b"rd_kafka_outq_len\0": unsafe extern "C" fn(Ptr) -> c_int;
    poll = b"rd_kafka_poll\0": unsafe extern "C" fn(Ptr, c_int) -> c_int;
    purge = b"rd_kafka_purge\0": unsafe extern "C" fn(Ptr, c_int) -> c_int;
    topic_new = b"rd_kafka_topic_new\0": unsafe extern "C" fn(Ptr, *const c_char, Ptr) -> Ptr;
    topic_destroy = b"rd_kafka_topic_destroy\0": unsafe extern "C" fn(Ptr);
    topic_name = b"rd_kafka_topic_name\0": unsafe extern "C" fn(*const c_void) -> *const c_char;
    produceva = b"rd_kafka_produceva\0": unsafe extern "C" fn(Ptr, *const Vu, usize) -> Ptr;
    headers_new = b"rd_kafka_headers_new\0": unsafe extern "C" fn(usize) -> Ptr;
    header_add = b"rd_kafka_header_add\0":
        unsafe extern "C" fn(Ptr, *const c_char, isize, *const c_void, isize) -> c_int;
    headers_destroy = b"rd_kafka_headers_destroy\0": unsafe extern "C" fn(Ptr);
    init_transactions = b"rd_kafka_init_transactions\0": unsafe extern "C" fn(Ptr, c_int) -> Ptr;
    begin_transaction = b"rd_kafka_begin_transaction\0": unsafe extern "C" fn(Ptr) -> Ptr;
    commit_transaction = b"rd_kafka_commit_transaction\0": unsafe extern "C" fn(Ptr, c_int) -> Ptr;
    abort_transaction = b"rd_kafka_abort_transaction\0": unsafe extern "C" fn(Ptr, c_int) -> Ptr;
    send_offsets_to_transaction = b"rd_kafka_send_offsets_to_transaction\0":
        unsafe extern "C" fn(Ptr, Ptr, Ptr, c_int) -> Ptr;
    group_metadata_new = b"rd_kafka_consumer_group_metadata_new\0":
        unsafe extern "C" fn(*const c_char) -> Ptr;
    group_metadata_destroy = b"rd_kafka_consumer_group_metadata_destroy\0": unsafe extern "C" fn(Ptr);
    partitions_new = b"rd_kafka_topic_partition_list_new\0": unsafe extern "C" fn(c_int) -> Ptr;
    partitions_add = b"rd_kafka_topic_partition_list_add\0":
        unsafe extern "C" fn(Ptr, *const c_char, i32) -> *mut TopicPartition;
    partitions_destroy = b"rd_kafka_topic_partition_list_destroy\0": unsafe extern "C" fn(Ptr);
    mem_malloc = b"rd_kafka_mem_malloc\0": unsafe extern "C" fn(Ptr, usize) -> Ptr;
    error_code = b"rd_kafka_error_code\0": unsafe extern "C" fn(*const c_void) -> c_int;
    error_name = b"rd_kafka_error_name\0": unsafe extern "C" fn(*const c_void) -> *const c_char;
    error_string = b"rd_kafka_error_string\0": unsafe extern "C" fn(*const c_void) -> *const c_char;
    error_is_fatal = b"rd_kafka_error_is_fatal\0": unsafe extern "C" fn(*const c_void) -> c_int;
    error_is_retriable = b"rd_kafka_error_is_retriable\0": unsafe extern "C" fn(*const c_void) -> c_int;
    error_txn_requires_abort = b"rd_kafka_error_txn_requires_abort\0":
        unsafe extern "C" fn(*const c_void) -> c_int;
    error_destroy = b"rd_kafka_error_destroy\0": unsafe extern "C" fn(Ptr);
    err2str = b"rd_kafka_err2str\0": unsafe extern "C" fn(c_int) -> *const c_char;
    err2name = b"rd_kafka_err2name\0": unsafe extern "C" fn(c_int) -> *const c_char;
}

/// A C string of librdkafka's as a Rust one (empty for NULL).
pub fn text(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: librdkafka returns NUL-terminated strings that live at least this long.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// An ``rd_kafka_error_t`` (or a bare ``rd_kafka_resp_err_t``), copied out.
#[derive(Debug, Clone)]
pub struct KafkaErr {
    pub code: i32,
    pub name: String,
    pub string: String,
    pub retriable: bool,
    pub fatal: bool,
    pub txn_requires_abort: bool,
}

impl Api {
    /// ``error`` copied out and destroyed; None for NULL (success).
    pub fn take_error(&self, error: Ptr) -> Option<KafkaErr> {
        if error.is_null() {
            return None;
        }
        // SAFETY: ``error`` is a live rd_kafka_error_t we own.
        unsafe {
            let out = KafkaErr {
                code: (self.error_code)(error),
                name: text((self.error_name)(error)),
                string: text((self.error_string)(error)),
                retriable: (self.error_is_retriable)(error) != 0,
                fatal: (self.error_is_fatal)(error) != 0,
                txn_requires_abort: (self.error_txn_requires_abort)(error) != 0,
            };
            (self.error_destroy)(error);
            Some(out)
        }
    }

    /// An error from a code alone (and librdkafka's words for it, unless ``string``).
    pub fn code_error(&self, code: c_int, string: Option<String>) -> KafkaErr {
        // SAFETY: err2str/err2name accept any code.
        let (name, words) = unsafe { (text((self.err2name)(code)), text((self.err2str)(code))) };
        KafkaErr {
            code,
            name,
            string: string.unwrap_or(words),
            retriable: false,
            fatal: false,
            txn_requires_abort: false,
        }
    }
}

/// The library at ``path``, opened once per process.
pub fn load(path: &str) -> Result<Arc<Api>, String> {
    static LOADED: OnceLock<Mutex<HashMap<String, Arc<Api>>>> = OnceLock::new();
    let mut loaded = LOADED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(api) = loaded.get(path) {
        return Ok(api.clone());
    }
    let api = Arc::new(Api::open(path)?);
    loaded.insert(path.to_owned(), api.clone());
    Ok(api)
}

/// A message's headers list (``rd_kafka_headers_new``; null for none), destroyed when dropped
/// unless librdkafka took it (``release``).
pub(crate) struct HeaderList<'a> {
    api: &'a Api,
    pub(crate) list: Ptr,
}

impl<'a> HeaderList<'a> {
    pub(crate) fn new(api: &'a Api, count: usize) -> Self {
        let list = if count == 0 {
            std::ptr::null_mut()
        } else {
            // SAFETY: a fresh list, ours until produceva succeeds.
            unsafe { (api.headers_new)(count) }
        };
        HeaderList { api, list }
    }

    /// Add header ``name`` (value None: a null value).
    pub(crate) fn add(&self, name: &[u8], value: Option<&[u8]>) {
        if self.list.is_null() {
            return;
        }
        let (ptr, size) = match value {
            Some(v) => (v.as_ptr() as *const c_void, v.len() as isize),
            None => (std::ptr::null(), 0),
        };
        // SAFETY: the list is live; name and value are copied.
        unsafe {
            (self.api.header_add)(
                self.list,
                name.as_ptr() as *const c_char,
                name.len() as isize,
                ptr,
                size,
            )
        };
    }

    /// librdkafka owns the list now.
    pub(crate) fn release(mut self) {
        self.list = std::ptr::null_mut();
    }
}

impl Drop for HeaderList<'_> {
    fn drop(&mut self) {
        if !self.list.is_null() {
            // SAFETY: ours, not passed to librdkafka.
            unsafe { (self.api.headers_destroy)(self.list) };
        }
    }
}
