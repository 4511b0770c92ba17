//! The hash of the module's maps whose keys come from devices: route answers by (id, node
//! name) (routes.rs), namespace and tag tables of XML documents (xmlconv.rs), and parsed
//! yang-patch targets, kept by [`Seeded::hash_bytes`] of their bytes in a map that takes that
//! hash as it is ([`Taken`], patchtarget.rs).
//!
//! A multiply-rotate of 8 bytes a step, **seeded per map** from the standard library's random
//! keys ([`Seeded`]): node names, targets, namespaces and tags are text a device sends, and an
//! unseeded hash of such text lets a sender choose keys that all collide. SipHash (the
//! standard library's) was a tenth of a key pass's route lookup and more.

use std::hash::{BuildHasher, Hasher};

/// A map's hash builder: its seed, drawn once when the map is made (cheap to copy: a map
/// made per document takes it from one made once, e.g. xmlconv's ``NsTable``).
#[derive(Clone, Copy)]
pub(crate) struct Seeded(u64);

impl Default for Seeded {
    fn default() -> Self {
        Seeded(std::collections::hash_map::RandomState::new().hash_one(0x9e37_79b9_u32) | 1)
    }
}

impl BuildHasher for Seeded {
    type Hasher = Mixer;

    #[inline]
    fn build_hasher(&self) -> Mixer {
        Mixer(self.0)
    }
}

impl Seeded {
    /// ``bytes`` (and their length) hashed with this seed to a word a [`Taken`] map keeps
    /// as it is: [`Mixer`]'s steps, the last 8 bytes read overlapping the step before (no
    /// copy of a tail, as [`Mixer::write`] makes), then murmur3's finish, so that every bit
    /// reaches the low ones a map's buckets take and the high ones its tags take.
    #[inline]
    pub(crate) fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        let n = bytes.len();
        let mut h = Mixer(self.0);
        h.mix(n as u64);
        if n >= 8 {
            let mut at = 0;
            while at + 8 < n {
                h.mix(word(at));
                at += 8;
            }
            h.mix(word(n - 8));
        } else {
            let mut last = 0u64;
            for (index, &byte) in bytes.iter().enumerate() {
                last |= (byte as u64) << (8 * index);
            }
            h.mix(last);
        }
        let h = h.0;
        let h = (h ^ h >> 33).wrapping_mul(0xff51_afd7_ed55_8ccd);
        let h = (h ^ h >> 33).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ h >> 33
    }
}

/// A map's hash builder for keys that are hashes already ([`Seeded::hash_bytes`]'s): taken
/// as they are.
#[derive(Clone, Copy, Default)]
pub(crate) struct Taken;

pub(crate) struct TakenHasher(u64);

impl BuildHasher for Taken {
    type Hasher = TakenHasher;

    #[inline]
    fn build_hasher(&self) -> TakenHasher {
        TakenHasher(0)
    }
}

impl Hasher for TakenHasher {
    /// (Only ``u64`` keys are kept: any other is folded in a byte a step.)
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ byte as u64).wrapping_mul(0x100_0000_01b3);
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) struct Mixer(u64);

impl Mixer {
    #[inline]
    fn mix(&mut self, word: u64) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        self.0 = (self.0 ^ word).wrapping_mul(K).rotate_left(29);
    }
}

impl Hasher for Mixer {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.mix(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(last) ^ (rest.len() as u64) << 59);
        }
    }

    /// (A ``str`` key ends with a byte 0xff: one step, not a block of one byte.)
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let h = self.0;
        (h ^ h >> 32).wrapping_mul(0xff51_afd7_ed55_8ccd) ^ h >> 29
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_alike_and_seeds_differ() {
        let (a, b) = (Seeded::default(), Seeded::default());
        assert_eq!(a.hash_one("ge-0/0/1"), a.hash_one("ge-0/0/1"));
        assert_ne!(a.hash_one("ge-0/0/1"), a.hash_one("ge-0/0/2"));
        assert_ne!(a.0, b.0);
    }
}
