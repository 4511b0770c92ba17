//! Parsed yang-patch targets kept by their bytes (patchtarget.rs's [`Cache`]): one flat
//! open-addressing table of small fixed slots (a power of two of them, probed linearly and at
//! most [`PROBE`] slots far), the entries' bytes and key values in chunks that never move,
//! and their steps in one vector that every notification's ``Targets`` starts from (lent to
//! it, its own steps pushed after them): a hit reads one slot and the entry's bytes, and
//! answers where its steps already are; nothing is pushed (rebasing and pushing a kept
//! target's steps and key values was half of a hit's cost).
//!
//! The slot is chosen by a seeded hash of the target's bytes ([`Cache::hash`]): targets are
//! text a device sends, which must not choose their slots. A hit is confirmed by comparing
//! every byte, and the probe is bounded, so even targets that did share a hash would cost a
//! few compares and a parse each, never a walk of the whole table.
//!
//! Lifetimes: the kept steps' names and the kept key values borrow the chunks, typed
//! ``'static``; the chunks are only emptied by [`Cache::clear`], which empties the steps and
//! values with them, and only when a notification starts (``Targets::new``).

/// An entry: its hash (0: the slot is free), its bytes' address in a chunk and their length,
/// and where its steps are in [`Cache::steps`] (``pending``: still in the steps of the
/// notification that kept it, until it ends: ``Targets::settle``).
#[derive(Clone, Copy, Default)]
pub(super) struct Slot {
    hash: u64,
    at: usize,
    len: u16,
    pub(super) steps: u8,
    pub(super) pending: bool,
    pub(super) first_step: u32,
}

impl Slot {
    /// The entry's bytes, a copy of its target.
    ///
    /// SAFETY (of the lifetime): a chunk's bytes never move and are only dropped by
    /// [`Cache::clear`], which ``Targets::new`` calls before any ``Targets`` reads an entry.
    pub(super) fn target<'t>(&self) -> &'t str {
        // SAFETY: ``at`` and ``len`` are those of a ``str`` copied whole into a chunk
        // ([`Cache::store`]), which keeps its bytes where they are until the table is emptied.
        unsafe {
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                self.at as *const u8,
                self.len as usize,
            ))
        }
    }
}

/// Slots a lookup reads at most before it gives up (and the target is parsed), and an
/// insertion before it gives up (and the target is not kept).
const PROBE: usize = 8;

/// Slots of a new table; it doubles when a quarter full, up to four times [`super::CACHE_MAX`]
/// (a fuller table left some targets of a thousand no free slot within [`PROBE`]: parsed
/// each time).
const FIRST_SLOTS: usize = 64;

/// Bytes of a chunk (a target and its key values longer than it get one of their own).
const CHUNK: usize = 1 << 16;

pub(super) struct Cache {
    /// Drawn when the table is made: targets are text a device sends.
    seeds: [u64; 2],
    slots: Vec<Slot>,
    /// Entries kept (the table is emptied at a notification's start past
    /// [`super::CACHE_MAX`]).
    pub(super) len: usize,
    /// Every entry's bytes and key values, in vectors never grown past their capacity: their
    /// bytes stay where they are until [`Cache::clear`].
    chunks: Vec<Vec<u8>>,
    /// The kept entries' steps, their names in the entries' bytes (the first steps of every
    /// notification's: lent to its ``Targets``), and their key values (the first of every
    /// notification's ``Targets::values``), in the chunks.
    pub(super) steps: Vec<super::TargetStep<'static>>,
    pub(super) values: Vec<std::borrow::Cow<'static, str>>,
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
        let mut seeds = [seeded.hash_one(1u64) | 1, seeded.hash_one(2u64)];
        if test_hook_constant_hash() {
            seeds = [0, 0];
        }
        Cache {
            seeds,
            slots: vec![Slot::default(); FIRST_SLOTS],
            len: 0,
            chunks: Vec::new(),
            steps: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Every entry dropped, with its steps and key values (the vectors keep their room).
    pub(super) fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.len = 0;
        self.steps.clear();
        self.values.clear();
        self.chunks.truncate(1);
        if let Some(chunk) = self.chunks.first_mut() {
            chunk.clear();
        }
    }

    /// ``text`` copied into a chunk, where it stays until [`Cache::clear`].
    pub(super) fn store<'t>(&mut self, text: &str) -> &'t str {
        let len = text.len();
        let fits = self
            .chunks
            .last()
            .is_some_and(|chunk| chunk.capacity() - chunk.len() >= len);
        if !fits {
            self.chunks.push(Vec::with_capacity(CHUNK.max(len)));
        }
        let Some(chunk) = self.chunks.last_mut() else {
            unreachable!("a chunk was pushed")
        };
        let start = chunk.len();
        // within its capacity: nothing moves
        chunk.extend_from_slice(text.as_bytes());
        // SAFETY: the bytes just copied from a ``str``; the chunk never grows past its
        // capacity, so they stay where they are until ``clear`` drops or empties it.
        unsafe {
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                chunk.as_ptr().add(start),
                len,
            ))
        }
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

    /// The slot of exactly these bytes, if kept.
    #[inline(always)]
    pub(super) fn find(&self, bytes: &[u8]) -> Option<Slot> {
        let hash = self.hash(bytes);
        let mask = self.slots.len() - 1;
        let mut index = hash as usize;
        for _ in 0..PROBE {
            let slot = self.slots[index & mask];
            if slot.hash == hash && slot.len as usize == bytes.len() {
                if same_bytes(slot.target().as_bytes(), bytes) {
                    return Some(slot);
                }
            } else if slot.hash == 0 {
                return None;
            }
            index = index.wrapping_add(1);
        }
        None
    }

    /// Keeps ``target`` (a copy), pending: its ``steps`` steps are the notification's from
    /// ``first_step`` on, until ``Targets::settle`` moves them here. Returns its slot, None
    /// when no slot near its hash is free (it will be parsed each time).
    pub(super) fn insert(&mut self, target: &str, first_step: usize, steps: usize) -> Option<()> {
        if (self.len + 1) * 4 > self.slots.len() {
            self.grow();
        }
        let hash = self.hash(target.as_bytes());
        let mask = self.slots.len() - 1;
        let index = (0..PROBE)
            .map(|step| (hash as usize + step) & mask)
            .find(|&index| self.slots[index].hash == 0)?;
        let copy = self.store(target);
        self.slots[index] = Slot {
            hash,
            at: copy.as_ptr() as usize,
            len: target.len() as u16,
            steps: steps as u8,
            pending: true,
            first_step: first_step as u32,
        };
        self.len += 1;
        Some(())
    }

    /// The slot of these bytes (an entry [`Cache::insert`] kept in this notification: a
    /// table grown since has moved it; None when growing dropped it).
    pub(super) fn slot(&mut self, bytes: &[u8]) -> Option<&mut Slot> {
        let hash = self.hash(bytes);
        let mask = self.slots.len() - 1;
        let index = (0..PROBE)
            .map(|step| (hash as usize + step) & mask)
            .find(|&index| {
                let slot = &self.slots[index];
                slot.hash == hash && slot.target().as_bytes() == bytes
            })?;
        Some(&mut self.slots[index])
    }

    /// Twice the slots (up to four times [`super::CACHE_MAX`]), every entry placed anew by its
    /// hash (one that finds no free slot near it is dropped, its bytes and steps left where
    /// they are: nothing read from them moves).
    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        if size > 4 * super::CACHE_MAX {
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
