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
        let word = u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
        state = (state.rotate_left(23) ^ word).wrapping_mul(MIX);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut tail = [0u8; 8];
        tail[..rest.len()].copy_from_slice(rest);
        state = (state.rotate_left(23) ^ u64::from_le_bytes(tail)).wrapping_mul(MIX);
    }
    state ^= state >> 31;
    state.wrapping_mul(MIX)
}
