//! The one fast, non-cryptographic hasher of the crate (the multiply-rotate hasher of rustc's `FxHasher`),
//! for integer ids in hot scan loops (nsys) and short opcode strings (sass), where SipHash would cost
//! more than the rest of the row. Keys may come from the user's file, but a collision flood only slows a
//! scan down; it never changes a result.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    /// Little-endian 8-byte words, the last one zero-padded.
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            for (dst, src) in word.iter_mut().zip(chunk) {
                *dst = *src;
            }
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;
pub type FxHashSet<K> = HashSet<K, FxBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn hash_of<T: Hash>(value: T) -> u64 {
        let mut h = FxHasher::default();
        value.hash(&mut h);
        h.finish()
    }

    #[test]
    fn integer_and_byte_writes_agree() {
        // A word written as an integer hashes like its little-endian bytes, so the nsys (ids) and sass
        // (strings) uses of the former twins keep their exact hashes.
        let mut bytes = FxHasher::default();
        bytes.write(&7u64.to_le_bytes());
        let mut word = FxHasher::default();
        word.write_u64(7);
        assert_eq!(bytes.finish(), word.finish());
        let mut short = FxHasher::default();
        short.write(&[3u8]);
        let mut byte = FxHasher::default();
        byte.write_u8(3);
        assert_eq!(short.finish(), byte.finish());
        assert_ne!(hash_of((1i64, 2i64)), hash_of((2i64, 1i64)));
        assert_eq!(hash_of("FFMA"), hash_of("FFMA"));
    }
}
