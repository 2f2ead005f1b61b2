//! The byte-string hash and the perfect hash's bucket, slot and fingerprint functions, shared by
//! the tokenizer's build.rs (which lays out the rank table) and its runtime lookup (which reads
//! it). Both sides must compute the same values for the same bytes, so both depend on this one
//! crate (a build-dependency and a dependency), which depends on nothing. Every function is
//! `#[inline]`, so the lookup compiles it at the tokenizer's own opt-level.

/// Multiplier of the hash (2^64 / golden ratio, odd).
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// Multiplier of a pilot before it is mixed into a key's hash (odd, unrelated to `MIX`).
const PILOT_MIX: u64 = 0xC2B2_AE3D_27D4_EB4F;

/// A 64-bit hash of `bytes`; its top 32 bits pick the perfect hash's bucket, all 64 its slot.
#[inline]
pub fn piece_hash(bytes: &[u8]) -> u64 {
    let mut state = (bytes.len() as u64).wrapping_mul(MIX);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        state = (state.rotate_left(23) ^ word).wrapping_mul(MIX);
    }
    // The last 1..=7 bytes as one word without copying them: overlapping loads (first and last
    // four bytes; or first, middle and last byte) determine them, the length being mixed in.
    let rest = chunks.remainder();
    let n = rest.len();
    let tail = if n >= 4 {
        let first = u32::from_le_bytes(rest[..4].try_into().expect("four bytes"));
        let last = u32::from_le_bytes(rest[n - 4..].try_into().expect("four bytes"));
        Some(first as u64 | (last as u64) << 32)
    } else if n > 0 {
        Some(rest[0] as u64 | (rest[n / 2] as u64) << 8 | (rest[n - 1] as u64) << 16)
    } else {
        None
    };
    if let Some(word) = tail {
        state = (state.rotate_left(23) ^ word).wrapping_mul(MIX);
    }
    state ^= state >> 31;
    state.wrapping_mul(MIX)
}

/// The bucket (`< buckets`) of a key whose [`piece_hash`] is `hash`.
#[inline(always)]
pub fn bucket_of(hash: u64, buckets: usize) -> usize {
    (((hash >> 32) * buckets as u64) >> 32) as usize
}

/// The slot (`< slots`) of a key whose [`piece_hash`] is `hash` when its bucket's pilot is `pilot`.
/// Keys of one bucket share their top 32 bits, so the mix spreads all 64.
#[inline(always)]
pub fn slot_of(hash: u64, pilot: u8, slots: usize) -> usize {
    let mut mixed = hash ^ (u64::from(pilot) + 1).wrapping_mul(PILOT_MIX);
    mixed ^= mixed >> 32;
    mixed = mixed.wrapping_mul(MIX);
    (((mixed >> 32) * slots as u64) >> 32) as usize
}

/// The `bits`-bit fingerprint of a key whose [`piece_hash`] is `hash` (bits the bucket and slot
/// depend on least).
#[inline(always)]
pub fn fingerprint(hash: u64, bits: u32) -> u32 {
    (hash as u32 >> 8) & ((1 << bits) - 1)
}
