//! The byte-string hash shared by build.rs (which lays out the rank table) and the runtime lookup
//! (which probes it). Both sides must compute the same value for the same bytes, so this file is
//! compiled into both (`#[path]` from build.rs) and depends on nothing.

/// Multiplier of the hash (2^64 / golden ratio, odd).
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// A 64-bit hash of `bytes`; its top bits pick the slot, bits 8..23 the fingerprint.
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
