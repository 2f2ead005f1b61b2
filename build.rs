//! Build-time work for the tokenizer: check every input against its pin, then precompute the
//! tables the runtime only reads, so the first request after an isolate starts builds nothing.
//!
//! The build script of the tokenizer package (src/engine/tokenizer/Cargo.toml: `build =
//! "../../../build.rs"`). Cargo runs it in that package's directory, so the paths it reads and
//! watches are relative to src/engine/tokenizer: the inputs come from the repository's data/.
//!
//! Inputs (each pinned by sha256 and watched with `cargo:rerun-if-changed`):
//! - `data/cl100k_base.tiktoken`: the cl100k_base vocabulary (base64 token, space, rank per line),
//!   byte-identical to the file npm gpt-tokenizer and tiktoken-rs ship.
//! - `data/js-unicode-classes.txt`: V8's `\p{L}`, `\p{N}` and `\s` (generated from Node by
//!   `data/gen-js-unicode-classes.mjs`).
//!
//! Outputs in OUT_DIR (little-endian, read with `include_bytes!`):
//! - `cl100k_token_bytes.bin` + `cl100k_token_offsets.bin`: every token's bytes, in rank order.
//! - `cl100k_rank_slots.bin`: an open-addressing table (linear probing, 2^SLOT_BITS u32 slots) from
//!   token bytes to rank; a slot holds `fingerprint << RANK_BITS | rank`, `u32::MAX` when empty.
//!   The 8 tokens whose bytes start with EF BB BF are left out: gpt-tokenizer can never find them
//!   (it decodes token bytes with a BOM-stripping TextDecoder), and we reproduce that.
//! - `cl100k_two_byte_ranks.bin`: a direct 65,536-entry table of the two-byte tokens.
//! - `cl100k_byte_ranks.bin`: a direct 256-entry table of the one-byte tokens.
//! - `js_class_blocks.bin` + `js_class_table.bin`: a two-level code-point → class table.
//! - `cl100k_tables.rs`: the constants and `include_bytes!` statics tying them together.

#[path = "src/engine/tokenizer/hash.rs"]
mod hash;

use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const VOCABULARY: &str = "../../../data/cl100k_base.tiktoken";
const VOCABULARY_SHA256: &str = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7";
const CLASSES: &str = "../../../data/js-unicode-classes.txt";
const CLASSES_SHA256: &str = "2c80c18978a5517175f3641b788f66a72efda514b8498aaf2f3244e368096f85";

const SLOT_BITS: u32 = 18;
const RANK_BITS: u32 = 17;
const EMPTY_SLOT: u32 = u32::MAX;
const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// Code-point classes as the pre-tokenizer sees them (precedence: newline, space, letter, number).
const CLASS_OTHER: u8 = 0;
const CLASS_LETTER: u8 = 1;
const CLASS_NUMBER: u8 = 2;
const CLASS_SPACE: u8 = 3;
const CLASS_NEWLINE: u8 = 4;

fn main() {
    println!("cargo:rerun-if-changed=../../../build.rs");
    println!("cargo:rerun-if-changed=hash.rs");
    println!("cargo:rerun-if-changed={VOCABULARY}");
    println!("cargo:rerun-if-changed={CLASSES}");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    let vocabulary = read_pinned(VOCABULARY, VOCABULARY_SHA256);
    let tokens = parse_vocabulary(&vocabulary);
    let classes = read_pinned(CLASSES, CLASSES_SHA256);

    let mut token_bytes = Vec::new();
    let mut offsets = Vec::with_capacity(tokens.len() + 1);
    for token in &tokens {
        offsets.push(token_bytes.len() as u32);
        token_bytes.extend_from_slice(token);
    }
    offsets.push(token_bytes.len() as u32);
    let slots = rank_slots(&tokens);
    let two_byte = two_byte_ranks(&tokens);
    let byte_ranks = byte_ranks(&tokens);
    let (blocks, table) = class_table(&String::from_utf8(classes).expect("class file is UTF-8"));

    write(&out, "cl100k_token_bytes.bin", &token_bytes);
    write(&out, "cl100k_token_offsets.bin", &le_u32(&offsets));
    write(&out, "cl100k_rank_slots.bin", &le_u32(&slots));
    write(&out, "cl100k_two_byte_ranks.bin", &le_u32(&two_byte));
    write(&out, "cl100k_byte_ranks.bin", &le_u32(&byte_ranks));
    let blocks_le: Vec<u8> = blocks.iter().flat_map(|b| b.to_le_bytes()).collect();
    write(&out, "js_class_blocks.bin", &blocks_le);
    write(&out, "js_class_table.bin", &table);

    let mut rs = String::new();
    writeln!(rs, "pub const TOKEN_COUNT: usize = {};", tokens.len()).unwrap();
    writeln!(rs, "pub const SLOT_BITS: u32 = {SLOT_BITS};").unwrap();
    writeln!(rs, "pub const RANK_BITS: u32 = {RANK_BITS};").unwrap();
    writeln!(rs, "pub const EMPTY_SLOT: u32 = {EMPTY_SLOT};").unwrap();
    writeln!(rs, "pub const CLASS_OTHER: u8 = {CLASS_OTHER};").unwrap();
    writeln!(rs, "pub const CLASS_LETTER: u8 = {CLASS_LETTER};").unwrap();
    writeln!(rs, "pub const CLASS_NUMBER: u8 = {CLASS_NUMBER};").unwrap();
    writeln!(rs, "pub const CLASS_SPACE: u8 = {CLASS_SPACE};").unwrap();
    writeln!(rs, "pub const CLASS_NEWLINE: u8 = {CLASS_NEWLINE};").unwrap();
    for (name, file) in [
        ("TOKEN_BYTES", "cl100k_token_bytes.bin"),
        ("TOKEN_OFFSETS", "cl100k_token_offsets.bin"),
        ("RANK_SLOTS", "cl100k_rank_slots.bin"),
        ("TWO_BYTE_RANKS", "cl100k_two_byte_ranks.bin"),
        ("BYTE_RANKS", "cl100k_byte_ranks.bin"),
        ("CLASS_BLOCKS", "js_class_blocks.bin"),
        ("CLASS_TABLE", "js_class_table.bin"),
    ] {
        writeln!(
            rs,
            "pub static {name}: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{file}\"));"
        )
        .unwrap();
    }
    write(&out, "cl100k_tables.rs", rs.as_bytes());
}

fn read_pinned(path: &str, pin: &str) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, pin, "{path} does not match its sha256 pin");
    bytes
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap_or_else(|e| panic!("cannot write {name}: {e}"));
}

fn le_u32(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Token bytes indexed by rank; ranks must be exactly 0..n with every single byte a token.
fn parse_vocabulary(file: &[u8]) -> Vec<Vec<u8>> {
    let text = std::str::from_utf8(file).expect("vocabulary is ASCII");
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (b64, rank) = line.split_once(' ').expect("line is `base64 rank`");
        let rank: usize = rank.parse().expect("rank is a number");
        if tokens.len() <= rank {
            tokens.resize(rank + 1, None);
        }
        assert!(tokens[rank].is_none(), "rank {rank} twice");
        tokens[rank] = Some(base64_decode(b64));
    }
    let tokens: Vec<Vec<u8>> = tokens
        .into_iter()
        .map(|t| t.expect("ranks are contiguous"))
        .collect();
    assert!(tokens.len() < (1 << RANK_BITS));
    let mut singles = [false; 256];
    for t in tokens.iter().filter(|t| t.len() == 1) {
        singles[t[0] as usize] = true;
    }
    assert!(singles.iter().all(|&s| s), "every byte is a token");
    tokens
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64"),
        }
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in text.as_bytes().iter().filter(|&&c| c != b'=') {
        acc = (acc << 6) | value(c);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

fn rank_slots(tokens: &[Vec<u8>]) -> Vec<u32> {
    let mask = (1usize << SLOT_BITS) - 1;
    let mut slots = vec![EMPTY_SLOT; 1 << SLOT_BITS];
    let mut longest_probe = 0;
    for (rank, token) in tokens.iter().enumerate() {
        if token.starts_with(BOM) {
            continue;
        }
        let h = hash::piece_hash(token);
        let mut index = (h >> (64 - SLOT_BITS)) as usize;
        let fingerprint = ((h >> 8) as u32) & ((1 << (32 - RANK_BITS)) - 1);
        let mut probe = 0;
        while slots[index] != EMPTY_SLOT {
            index = (index + 1) & mask;
            probe += 1;
        }
        longest_probe = longest_probe.max(probe);
        slots[index] = (fingerprint << RANK_BITS) | rank as u32;
        assert_ne!(slots[index], EMPTY_SLOT);
    }
    assert!(
        longest_probe < 64,
        "rank table probes too long: {longest_probe}"
    );
    slots
}

/// Direct table of the two-byte tokens (the first lookup of every merge is a byte pair):
/// index `b0 << 8 | b1`, `EMPTY_SLOT` when the pair is not a token.
fn two_byte_ranks(tokens: &[Vec<u8>]) -> Vec<u32> {
    let mut table = vec![EMPTY_SLOT; 1 << 16];
    for (rank, token) in tokens.iter().enumerate().filter(|(_, t)| t.len() == 2) {
        table[(token[0] as usize) << 8 | token[1] as usize] = rank as u32;
    }
    table
}

/// Direct table of the one-byte tokens: index the byte, value its rank.
fn byte_ranks(tokens: &[Vec<u8>]) -> Vec<u32> {
    let mut table = vec![EMPTY_SLOT; 256];
    for (rank, token) in tokens.iter().enumerate().filter(|(_, t)| t.len() == 1) {
        table[token[0] as usize] = rank as u32;
    }
    assert!(
        table.iter().all(|&r| r != EMPTY_SLOT),
        "every byte is a token"
    );
    table
}

/// Two-level class table: `blocks[cp >> 8]` names a 256-entry row of `table`.
fn class_table(text: &str) -> (Vec<u16>, Vec<u8>) {
    let mut class = vec![CLASS_OTHER; 0x110000];
    let mut seen = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (name, ranges) = line.split_once(' ').expect("`class ranges`");
        let value = match name {
            "L" => CLASS_LETTER,
            "N" => CLASS_NUMBER,
            "S" => CLASS_SPACE,
            other => panic!("unknown class {other}"),
        };
        seen.push(name.to_string());
        for range in ranges.split(' ') {
            let (lo, hi) = range.split_once('-').expect("lo-hi");
            let lo = u32::from_str_radix(lo, 16).expect("hex");
            let hi = u32::from_str_radix(hi, 16).expect("hex");
            for cp in lo..=hi {
                assert_eq!(class[cp as usize], CLASS_OTHER, "classes overlap at {cp:x}");
                class[cp as usize] = value;
            }
        }
    }
    assert_eq!(seen, ["L", "N", "S"]);
    class[b'\r' as usize] = CLASS_NEWLINE;
    class[b'\n' as usize] = CLASS_NEWLINE;
    let mut blocks = Vec::new();
    let mut table: Vec<u8> = Vec::new();
    for row in class.chunks(256) {
        let existing = table.chunks(256).position(|r| r == row);
        let index = existing.unwrap_or_else(|| {
            table.extend_from_slice(row);
            table.len() / 256 - 1
        });
        blocks.push(u16::try_from(index).expect("fewer than 65536 rows"));
    }
    // The runtime reads ASCII classes straight from row 0.
    assert_eq!(blocks[0], 0, "block 0 is row 0");
    (blocks, table)
}
