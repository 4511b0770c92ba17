//! The hash of the module's maps whose keys come from devices: route answers by (id, node
//! name) (routes.rs) and namespace and tag tables of XML documents (xmlconv.rs); its seed
//! also seeds the table of parsed yang-patch targets (targetcache.rs, which hashes their
//! bytes its own way).
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
