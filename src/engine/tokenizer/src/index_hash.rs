//! A hasher for small integer keys (indices, lengths): one multiplication (Fibonacci hashing)
//! instead of SipHash, for maps whose keys no caller chooses adversarially to collide (they are
//! positions and lengths inside one request's own text). Deterministic: no random state.

use std::hash::{BuildHasherDefault, Hasher};

/// 2^64 divided by the golden ratio: the multiplier of Fibonacci hashing.
const FIBONACCI: u64 = 0x9E37_79B9_7F4A_7C15;

/// The hasher: an integer key is multiplied once; bytes (not used by integer keys) are folded in
/// one at a time.
#[derive(Default, Clone, Copy)]
pub struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(FIBONACCI);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(FIBONACCI);
    }
}

/// The `BuildHasher` of [`IndexHasher`], for `HashMap<usize, _, IndexHash>`.
pub type IndexHash = BuildHasherDefault<IndexHasher>;
