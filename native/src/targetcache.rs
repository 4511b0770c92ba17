//! Parsed yang-patch targets kept by their bytes (patchtarget.rs's [`Cache`]): one flat
//! open-addressing table of small fixed slots (a power of two of them, probed linearly and at
//! most [`PROBE`] slots far), whose entries' bytes, decoded key values, steps and key ranges
//! are in three vectors shared by every entry. A hit reads one slot, the entry's bytes (its
//! decoded key values follow them) and its steps: three or four cache lines, where a standard
//! map of entries each holding four allocations read six or seven.
//!
//! The slot is chosen by a seeded hash of the target's bytes ([`Cache::hash`]): targets are
//! text a device sends, which must not choose their slots. A hit is confirmed by comparing
//! every byte, and the probe is bounded, so even targets that did share a hash would cost a
//! few compares and a parse each, never a walk of the whole table.

/// A kept target's steps as offsets: module and name in the target, its key values as a range
/// of the entry's keys (``keys.1`` 0: none), where its segment ends.
#[derive(Clone, Copy)]
pub(super) struct CachedStep {
    pub(super) module: (u16, u16),
    pub(super) name: (u16, u16),
    /// Its key values: the entry's ``keys.0..keys.1`` (``keys.1`` 0: the step names no
    /// instance; one that does has a value at least).
    pub(super) keys: (u16, u16),
    pub(super) end: u16,
}

/// An entry: its hash (0: the slot is free), where its bytes are in [`Cache::text`], where its
/// steps are in [`Cache::steps`] and its key values' ranges in [`Cache::keys`].
#[derive(Clone, Copy, Default)]
struct Slot {
    hash: u64,
    at: u32,
    len: u16,
    steps: u8,
    keys: u8,
    first_step: u32,
    first_key: u32,
}

/// Slots a lookup reads at most before it gives up (and the target is parsed), and an
/// insertion before it gives up (and the target is not kept).
const PROBE: usize = 8;

/// Slots of a new table; it doubles when half full, up to twice [`super::CACHE_MAX`].
const FIRST_SLOTS: usize = 64;

/// A key value to keep ([`Cache::insert`]): text, or a kept one's range in [`Cache::text`].
pub(super) enum Value<'v> {
    Text(&'v str),
    Kept(u32, u32),
}

/// A kept target ([`Cache::find`]): its steps and its key values' ranges in the cache's text.
pub(super) struct Found<'c> {
    pub(super) steps: &'c [CachedStep],
    pub(super) keys: &'c [(u32, u32)],
}

pub(super) struct Cache {
    /// Drawn when the table is made: targets are text a device sends.
    seeds: [u64; 2],
    slots: Vec<Slot>,
    /// Entries kept (the table is emptied at a notification's start past
    /// [`super::CACHE_MAX`]).
    pub(super) len: usize,
    /// Every entry's bytes, each followed by its decoded key values.
    pub(super) text: String,
    steps: Vec<CachedStep>,
    keys: Vec<(u32, u32)>,
}

/// ``a * b`` folded to 64 bits (the high half xor the low): wyhash's and foldhash's step.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = (a as u128) * (b as u128);
    (product as u64) ^ (product >> 64) as u64
}

impl Cache {
    pub(super) fn new() -> Self {
        let seeded = crate::hashing::Seeded::default();
        use std::hash::BuildHasher;
        let mut seeds = [seeded.hash_one(1u64), seeded.hash_one(2u64)];
        if test_hook_constant_hash() {
            seeds = [0, 0];
        }
        Cache {
            seeds,
            slots: vec![Slot::default(); FIRST_SLOTS],
            len: 0,
            text: String::new(),
            steps: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// Every entry dropped (the vectors keep their room).
    pub(super) fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.len = 0;
        self.text.clear();
        self.steps.clear();
        self.keys.clear();
    }

    /// The seeded hash of ``bytes``, never 0: 16 bytes a step, each folded into the state
    /// by one multiply (the last 16 read overlapping the step before), then the state
    /// folded with the seed. Both seeds 0 (the test hook): 1 for every target.
    #[inline(always)]
    fn hash(&self, bytes: &[u8]) -> u64 {
        let [seed, other] = self.seeds;
        if seed == 0 {
            return 1;
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        let n = bytes.len();
        let mut h = seed ^ n as u64;
        if n > 16 {
            // (whole chunks of the bytes before the last: no bounds checked in the loop)
            let halves = |chunk: &[u8]| -> (u64, u64) {
                let chunk: [u8; 16] = chunk.try_into().unwrap_or_default();
                let (low, high) = chunk.split_at(8);
                let half = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or_default());
                (half(low), half(high))
            };
            for chunk in bytes[..n - 1].chunks_exact(16) {
                let (low, high) = halves(chunk);
                h = fold(low ^ other, high ^ h);
            }
            let (low, high) = halves(&bytes[n - 16..]);
            h = fold(low ^ other, high ^ h);
        } else if n >= 8 {
            h = fold(word(0) ^ other, word(n - 8) ^ h);
        } else {
            let mut last = 0u64;
            for (index, &byte) in bytes.iter().enumerate() {
                last |= (byte as u64) << (8 * index);
            }
            h = fold(last ^ other, h);
        }
        fold(h, seed) | 1 << 63
    }

    /// The entry of exactly these bytes, if kept.
    #[inline(always)]
    pub(super) fn find(&self, bytes: &[u8]) -> Option<Found<'_>> {
        let hash = self.hash(bytes);
        let mask = self.slots.len() - 1;
        let mut index = hash as usize;
        for _ in 0..PROBE {
            let slot = self.slots[index & mask];
            if slot.hash == hash && slot.len as usize == bytes.len() {
                let at = slot.at as usize;
                if same_bytes(&self.text.as_bytes()[at..at + bytes.len()], bytes) {
                    let (steps, keys) = (slot.first_step as usize, slot.first_key as usize);
                    return Some(Found {
                        steps: &self.steps[steps..steps + slot.steps as usize],
                        keys: &self.keys[keys..keys + slot.keys as usize],
                    });
                }
            } else if slot.hash == 0 {
                return None;
            }
            index = index.wrapping_add(1);
        }
        None
    }

    /// Keeps ``target`` with its steps and key values (each step's: ``values`` in the order
    /// of the steps' ranges). False when it could not be kept (no free slot near its hash:
    /// it will be parsed each time).
    pub(super) fn insert<'v>(
        &mut self,
        target: &str,
        steps: impl Iterator<Item = CachedStep>,
        values: impl Iterator<Item = Value<'v>>,
    ) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let hash = self.hash(target.as_bytes());
        let mask = self.slots.len() - 1;
        let Some(index) = (0..PROBE)
            .map(|step| (hash as usize + step) & mask)
            .find(|&index| self.slots[index].hash == 0)
        else {
            return false;
        };
        let (first_step, first_key) = (self.steps.len(), self.keys.len());
        let at = self.text.len();
        self.text.push_str(target);
        self.steps.extend(steps);
        for value in values {
            let start = self.text.len() as u32;
            match value {
                Value::Text(text) => self.text.push_str(text),
                // SAFETY: the range is a kept key value's, a ``str`` pushed whole: within the
                // text and at character boundaries, so the copy appends whole characters.
                Value::Kept(from, to) => unsafe {
                    (self.text.as_mut_vec()).extend_from_within(from as usize..to as usize)
                },
            }
            self.keys.push((start, self.text.len() as u32));
        }
        self.slots[index] = Slot {
            hash,
            at: at as u32,
            len: target.len() as u16,
            steps: (self.steps.len() - first_step) as u8,
            keys: (self.keys.len() - first_key) as u8,
            first_step: first_step as u32,
            first_key: first_key as u32,
        };
        self.len += 1;
        true
    }

    /// Twice the slots (up to twice [`super::CACHE_MAX`]), every entry placed anew by its
    /// hash (one that finds no free slot near it is dropped: its bytes stay in the text, its
    /// key values with them, so nothing read from them moves).
    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        if size > 2 * super::CACHE_MAX {
            return;
        }
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); size]);
        self.len = 0;
        let mask = size - 1;
        for slot in old.into_iter().filter(|slot| slot.hash != 0) {
            let free = (0..PROBE)
                .map(|step| (slot.hash as usize + step) & mask)
                .find(|&index| self.slots[index].hash == 0);
            if let Some(index) = free {
                self.slots[index] = slot;
                self.len += 1;
            }
        }
    }
}

/// ``a == b``: sixteen bytes a step (SSE2), the last sixteen read overlapping the step
/// before; shorter ones by [`crate::xmlfast::same_bytes`].
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if a.len() == b.len() && a.len() >= 16 {
        use std::arch::x86_64::*;
        let n = a.len();
        // SAFETY: every load reads 16 bytes at ``at`` with ``at + 16 <= n`` in both (unaligned
        // loads); SSE2 is part of x86_64.
        unsafe {
            let load = |s: &[u8], at: usize| _mm_loadu_si128(s.as_ptr().add(at) as *const __m128i);
            let mut same = _mm_cmpeq_epi8(load(a, n - 16), load(b, n - 16));
            let mut at = 0;
            while at + 16 < n {
                same = _mm_and_si128(same, _mm_cmpeq_epi8(load(a, at), load(b, at)));
                at += 16;
            }
            return _mm_movemask_epi8(same) == 0xffff;
        }
    }
    crate::xmlfast::same_bytes(a, b)
}

/// The test hook: ``YANGKEY_NATIVE_TARGET_HASH=constant`` in the environment when a table is
/// made gives every target the same hash, so that tests can make entries share slots (the
/// bounded probe, the compare). Read once per table (once per thread until it is full).
fn test_hook_constant_hash() -> bool {
    std::env::var_os("YANGKEY_NATIVE_TARGET_HASH").is_some_and(|v| v == "constant")
}
