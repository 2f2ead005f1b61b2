//! Build-time work for the tokenizer: check every input against its pin, then precompute the
//! tables the runtime only reads, so the first request after an isolate starts builds nothing.
//!
//! Inputs (each pinned by sha256 and watched with `cargo:rerun-if-changed`):
//! - `data/cl100k_base.tiktoken`: the cl100k_base vocabulary (base64 token, space, rank per line),
//!   byte-identical to the file npm gpt-tokenizer and tiktoken-rs ship.
//! - `data/js-unicode-classes.txt`: V8's `\p{L}`, `\p{N}` and `\s` (generated from Node by
//!   `data/gen-js-unicode-classes.mjs`).
//! - the piece hash (`piece_hash`, the `context-meter-tokenizer-hash` crate in hash/): a
//!   build-dependency, so Cargo rebuilds and reruns this script when it changes.
//!
//! Outputs in OUT_DIR (little-endian, read with `include_bytes!`). The layout is chosen for the
//! gzip size of the wasm bundle as much as for speed: what is random (a permutation, pilots) is
//! stored in as few bits as it needs, and nothing stores what can be recomputed cheaply.
//! - `cl100k_token_bytes.bin`: every token's bytes, in rank order.
//! - `cl100k_token_spans.bin`: per block of `SPAN_BLOCK` (12) ranks, 16 bytes: the offset of the
//!   block's first token (u32) and the 12 tokens' lengths (u8). A token's offset is its block's
//!   base plus the lengths before it, and one 16-byte load holds all of it (the u32 offset per
//!   rank this replaces cost 142 KB of gzip; this table costs 81 KB).
//! - `cl100k_pilots.bin` + `cl100k_rank_entries.bin`: a perfect hash (PTHash-style hash and
//!   displace, one u8 pilot per bucket) from the bytes of every token of 3 or more bytes to a slot,
//!   and per slot an `ENTRY_BITS`-bit entry `fingerprint << RANK_BITS | rank` (`EMPTY_ENTRY` for a
//!   spare slot). A lookup reads one pilot and one entry, and checks a candidate whose fingerprint
//!   matches against the token's bytes. The 2^18 u32 slots of the open-addressing table this
//!   replaces cost 499 KB of gzip; these two cost 326 KB, nearly all of it the ranks' permutation
//!   (17 bits a token) and the fingerprints (7). The 8 tokens whose bytes start with EF BB BF are
//!   left out: gpt-tokenizer can never find them (it decodes token bytes with a BOM-stripping
//!   TextDecoder), and we reproduce that.
//! - `cl100k_two_byte_ranks.bin`: a direct 65,536-entry table of the two-byte tokens.
//! - `cl100k_byte_ranks.bin`: a direct 256-entry table of the one-byte tokens.
//! - `js_class_blocks.bin` + `js_class_table.bin`: a two-level code-point → class table.
//! - `cl100k_hashed_tables.rs`: the constants and `include_bytes!` statics tying them together
//!   (named apart from the open-addressing layout's `cl100k_tables.rs`, so that checkouts of either
//!   layout sharing one target directory never include the other's constants).

use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const VOCABULARY: &str = "data/cl100k_base.tiktoken";
const VOCABULARY_SHA256: &str = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7";
const CLASSES: &str = "data/js-unicode-classes.txt";
const CLASSES_SHA256: &str = "2c80c18978a5517175f3641b788f66a72efda514b8498aaf2f3244e368096f85";

/// Bits of a rank in the packed rank entries (cl100k_base has 100,256 tokens).
const RANK_BITS: u32 = 17;
/// Bits of a slot's fingerprint (bits of the key's hash) above its rank: about 70% of lookups are
/// of bytes that are no token (the pairs a merge tries), and a fingerprint rejects all but 1/2^bits
/// of them before the token's span and bytes are read.
const FINGERPRINT_BITS: u32 = 7;
/// Bits of one packed entry: `fingerprint << RANK_BITS | rank`.
const ENTRY_BITS: u32 = RANK_BITS + FINGERPRINT_BITS;
/// The rank of a spare slot of the perfect hash: above every rank.
const EMPTY_ENTRY: u32 = (1 << RANK_BITS) - 1;
/// Slots of the perfect hash per key (a load factor of 0.95) and keys per bucket on average: with
/// these every bucket finds a pilot under 256 (the largest is 176), so a pilot is one byte.
const SLOTS_PER_KEY: f64 = 1.0 / 0.95;
const KEYS_PER_BUCKET: f64 = 2.0;
/// Ranks per block of the span table: a u32 base and 12 u8 lengths make 16 bytes.
const SPAN_BLOCK: usize = 12;
const EMPTY_SLOT: u32 = u32::MAX;
const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// Code-point classes as the pre-tokenizer sees them (precedence: newline, space, letter, number).
const CLASS_OTHER: u8 = 0;
const CLASS_LETTER: u8 = 1;
const CLASS_NUMBER: u8 = 2;
const CLASS_SPACE: u8 = 3;
const CLASS_NEWLINE: u8 = 4;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={VOCABULARY}");
    println!("cargo:rerun-if-changed={CLASSES}");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    let vocabulary = read_pinned(VOCABULARY, VOCABULARY_SHA256);
    let tokens = parse_vocabulary(&vocabulary);
    let classes = read_pinned(CLASSES, CLASSES_SHA256);

    let mut token_bytes = Vec::new();
    let mut spans = Vec::new();
    for block in tokens.chunks(SPAN_BLOCK) {
        let base = u32::try_from(token_bytes.len()).expect("under 4 GiB");
        spans.extend_from_slice(&base.to_le_bytes());
        for token in block {
            spans.push(u8::try_from(token.len()).expect("tokens are at most 255 bytes"));
            token_bytes.extend_from_slice(token);
        }
        spans.resize(spans.len().next_multiple_of(4 + SPAN_BLOCK), 0);
    }
    let hash = PerfectHash::of(&tokens);
    let two_byte = two_byte_ranks(&tokens);
    let byte_ranks = byte_ranks(&tokens);
    let (blocks, table) = class_table(&String::from_utf8(classes).expect("class file is UTF-8"));

    write(&out, "cl100k_token_bytes.bin", &token_bytes);
    write(&out, "cl100k_token_spans.bin", &spans);
    write(&out, "cl100k_pilots.bin", &hash.pilots);
    write(
        &out,
        "cl100k_rank_entries.bin",
        &pack_bits(&hash.entries, ENTRY_BITS),
    );
    write(&out, "cl100k_two_byte_ranks.bin", &le_u32(&two_byte));
    write(&out, "cl100k_byte_ranks.bin", &le_u32(&byte_ranks));
    let blocks_le: Vec<u8> = blocks.iter().flat_map(|b| b.to_le_bytes()).collect();
    write(&out, "js_class_blocks.bin", &blocks_le);
    write(&out, "js_class_table.bin", &table);

    let mut rs = String::new();
    writeln!(rs, "pub const TOKEN_COUNT: usize = {};", tokens.len()).unwrap();
    writeln!(rs, "pub const RANK_BITS: u32 = {RANK_BITS};").unwrap();
    writeln!(rs, "pub const EMPTY_ENTRY: u32 = {EMPTY_ENTRY};").unwrap();
    writeln!(rs, "pub const ENTRY_BITS: u32 = {ENTRY_BITS};").unwrap();
    writeln!(rs, "pub const EMPTY_SLOT: u32 = {EMPTY_SLOT};").unwrap();
    writeln!(rs, "pub const SPAN_BLOCK: usize = {SPAN_BLOCK};").unwrap();
    writeln!(rs, "pub const BUCKETS: usize = {};", hash.pilots.len()).unwrap();
    writeln!(rs, "pub const SLOTS: usize = {};", hash.entries.len()).unwrap();
    writeln!(rs, "pub const CLASS_OTHER: u8 = {CLASS_OTHER};").unwrap();
    writeln!(rs, "pub const CLASS_LETTER: u8 = {CLASS_LETTER};").unwrap();
    writeln!(rs, "pub const CLASS_NUMBER: u8 = {CLASS_NUMBER};").unwrap();
    writeln!(rs, "pub const CLASS_SPACE: u8 = {CLASS_SPACE};").unwrap();
    writeln!(rs, "pub const CLASS_NEWLINE: u8 = {CLASS_NEWLINE};").unwrap();
    // The class table's row of 256 letters (blocks such as CJK ideographs or Hangul point to it),
    // u16::MAX when there is none: the pre-tokenizer's letter runs skip the table read there.
    let letter_row = table
        .chunks(256)
        .position(|row| row.iter().all(|&c| c == CLASS_LETTER))
        .map_or(u16::MAX, |row| u16::try_from(row).expect("row index"));
    writeln!(rs, "pub const CLASS_LETTER_ROW: u16 = {letter_row};").unwrap();
    for (name, file) in [
        ("TOKEN_BYTES", "cl100k_token_bytes.bin"),
        ("TOKEN_SPANS", "cl100k_token_spans.bin"),
        ("PILOTS", "cl100k_pilots.bin"),
        ("RANK_ENTRIES", "cl100k_rank_entries.bin"),
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
    write(&out, "cl100k_hashed_tables.rs", rs.as_bytes());
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

/// `values` packed little-endian, `bits` bits each, then 3 zero bytes so that a reader can load
/// any entry with one unaligned four-byte load.
fn pack_bits(values: &[u32], bits: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * bits as usize / 8 + 4);
    let (mut acc, mut held) = (0u64, 0u32);
    for &value in values {
        assert!(value < 1 << bits);
        acc |= u64::from(value) << held;
        held += bits;
        while held >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            held -= 8;
        }
    }
    out.push(acc as u8);
    out.extend_from_slice(&[0; 3]);
    out
}

/// A minimal perfect hash (hash and displace, as PTHash): a key's hash picks a bucket, the bucket's
/// pilot picks the key's slot (`piece_hash::bucket_of`, `piece_hash::slot_of`). Buckets are placed largest
/// first, each with the smallest pilot that sends its keys to free, distinct slots.
struct PerfectHash {
    pilots: Vec<u8>,
    /// `fingerprint << RANK_BITS | rank` of the token in each slot, `EMPTY_ENTRY` (fingerprint 0)
    /// for a spare slot.
    entries: Vec<u32>,
}

impl PerfectHash {
    /// Over the tokens of 3 or more bytes, except those starting EF BB BF (see the module doc).
    fn of(tokens: &[Vec<u8>]) -> Self {
        let keys: Vec<(u64, u32)> = tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| t.len() >= 3 && !t.starts_with(BOM))
            .map(|(rank, t)| (piece_hash::piece_hash(t), rank as u32))
            .collect();
        let mut distinct: Vec<u64> = keys.iter().map(|k| k.0).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), keys.len(), "token hashes collide");
        let slots = (keys.len() as f64 * SLOTS_PER_KEY).ceil() as usize;
        let buckets = (keys.len() as f64 / KEYS_PER_BUCKET).ceil() as usize;
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); buckets];
        for (key, &(h, _)) in keys.iter().enumerate() {
            members[piece_hash::bucket_of(h, buckets)].push(key);
        }
        let mut order: Vec<usize> = (0..buckets).filter(|&b| !members[b].is_empty()).collect();
        order.sort_by_key(|&b| (std::cmp::Reverse(members[b].len()), b));
        let mut entries = vec![EMPTY_ENTRY; slots];
        let mut pilots = vec![0u8; buckets];
        let mut placed = Vec::new();
        for bucket in order {
            let pilot = (0..=u8::MAX)
                .find(|&pilot| {
                    placed.clear();
                    members[bucket].iter().all(|&key| {
                        let slot = piece_hash::slot_of(keys[key].0, pilot, slots);
                        let free = entries[slot] == EMPTY_ENTRY && !placed.contains(&slot);
                        placed.push(slot);
                        free
                    })
                })
                .expect("a pilot under 256 places every bucket");
            pilots[bucket] = pilot;
            for (&key, &slot) in members[bucket].iter().zip(&placed) {
                let (hash, rank) = keys[key];
                entries[slot] = piece_hash::fingerprint(hash, FINGERPRINT_BITS) << RANK_BITS | rank;
            }
        }
        PerfectHash { pilots, entries }
    }
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
