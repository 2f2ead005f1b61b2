//! Keccak-256 (the pre-SHA-3 padding Ethereum and Tempo use), written out because two checks need
//! it and no crate in the tree has it: the MPP memo's server and challenge fingerprints are
//! keccak-256 prefixes (of the realm and of the challenge id), computed per request. The event
//! topics are constants, checked against this function in the tests.

/// Round constants of Keccak-f[1600].
const ROUND_CONSTANTS: [u64; 24] = [
    0x0000_0000_0000_0001,
    0x0000_0000_0000_8082,
    0x8000_0000_0000_808a,
    0x8000_0000_8000_8000,
    0x0000_0000_0000_808b,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8009,
    0x0000_0000_0000_008a,
    0x0000_0000_0000_0088,
    0x0000_0000_8000_8009,
    0x0000_0000_8000_000a,
    0x0000_0000_8000_808b,
    0x8000_0000_0000_008b,
    0x8000_0000_0000_8089,
    0x8000_0000_0000_8003,
    0x8000_0000_0000_8002,
    0x8000_0000_0000_0080,
    0x0000_0000_0000_800a,
    0x8000_0000_8000_000a,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8080,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8008,
];
/// Rotation offsets along the rho-pi walk.
const ROTATIONS: [u32; 24] = [
    1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44,
];
/// Lane order of the rho-pi walk.
const PI_LANES: [usize; 24] = [
    10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1,
];
/// Bytes absorbed per permutation at 256-bit output (1600 - 2 * 256 bits).
const RATE: usize = 136;

fn permute(state: &mut [u64; 25]) {
    for constant in ROUND_CONSTANTS {
        let mut columns = [0u64; 5];
        for (x, column) in columns.iter_mut().enumerate() {
            *column = state[x] ^ state[x + 5] ^ state[x + 10] ^ state[x + 15] ^ state[x + 20];
        }
        for x in 0..5 {
            let theta = columns[(x + 4) % 5] ^ columns[(x + 1) % 5].rotate_left(1);
            for y in (0..25).step_by(5) {
                state[y + x] ^= theta;
            }
        }
        let mut carried = state[1];
        for (lane, rotation) in PI_LANES.iter().zip(ROTATIONS) {
            let next = state[*lane];
            state[*lane] = carried.rotate_left(rotation);
            carried = next;
        }
        for y in (0..25).step_by(5) {
            let row = [
                state[y],
                state[y + 1],
                state[y + 2],
                state[y + 3],
                state[y + 4],
            ];
            for x in 0..5 {
                state[y + x] = row[x] ^ (!row[(x + 1) % 5] & row[(x + 2) % 5]);
            }
        }
        state[0] ^= constant;
    }
}

fn absorb(state: &mut [u64; 25], block: &[u8; RATE]) {
    for (lane, bytes) in state.iter_mut().zip(block.chunks_exact(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes);
        *lane ^= u64::from_le_bytes(word);
    }
    permute(state);
}

/// Keccak-256 of `input`.
pub fn keccak256(input: &[u8]) -> [u8; 32] {
    let mut state = [0u64; 25];
    let mut blocks = input.chunks_exact(RATE);
    for block in &mut blocks {
        let mut full = [0u8; RATE];
        full.copy_from_slice(block);
        absorb(&mut state, &full);
    }
    let rest = blocks.remainder();
    let mut last = [0u8; RATE];
    last[..rest.len()].copy_from_slice(rest);
    last[rest.len()] ^= 0x01;
    last[RATE - 1] ^= 0x80;
    absorb(&mut state, &last);
    let mut out = [0u8; 32];
    for (bytes, lane) in out.chunks_exact_mut(8).zip(state) {
        bytes.copy_from_slice(&lane.to_le_bytes());
    }
    out
}
