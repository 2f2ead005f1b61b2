//! cl100k_base token counts, exact to npm gpt-tokenizer@4.0.0 (`encode` with
//! `disallowedSpecial: new Set()`: special-token spellings are ordinary text).
//!
//! API contract used by every family (stable; internals may change):
//! - [`encode`] returns the token ids; [`count`] their number.
//! - [`largest_fitting_prefix`] finds the true maximum code-point boundary for S-4; [`Tokenized`]
//!   tokenizes a text once and serves both its count and any number of such searches.
//! - [`char_boundary`] turns a code-point offset into a byte offset (characters are code points).
//! - [`is_piece_start`] tells where a text can be cut so that the halves' counts add up.
//!
//! How it stays exact: the pre-tokenizer ([`split`]) reproduces gpt-tokenizer's split regex as V8
//! runs it (JavaScript `\s`, V8's Unicode 17 `\p{L}`/`\p{N}` tables generated from Node), and the
//! merge ([`bpe`]) reproduces its rank function, including the TextDecoder quirk that makes the 8
//! tokens starting EF BB BF unreachable. The oracle corpus (tests/tokenizer/main.rs) checks ids.
//!
//! How it stays fast: every table is precomputed by build.rs into static bytes (nothing is built at
//! first call), no regex engine runs, pieces up to 96 bytes merge in stack arrays without looking
//! any part up twice, and long pieces merge in O(n log n) or, when most of their bytes are
//! multi-byte code points or one repeated ASCII letter, are searched token by token ([`backtrack`]). Small
//! per-thread caches ([`cache`]) answer repeated pieces, repeated pair merges and repeated pair
//! validity checks without touching the 1.1 MB rank tables.
//!
//! This is its own crate (`context-meter-tokenizer`, re-exported by the worker as
//! `engine::tokenizer`) so the release profile builds it at opt-level 3 while the rest is built for
//! size. Its build.rs reads the pinned vocabulary and class table in data/; the piece hash both
//! sides use is the `context-meter-tokenizer-hash` crate in hash/.
//!
//! Invariants: pure and deterministic; no allocation beyond the output and scratch vectors.

mod backtrack;
mod block_merge;
mod bpe;
mod cache;
mod index_hash;
mod prefix;
mod rank;
mod scan;
mod split;
mod tables;

pub use index_hash::{IndexHash, IndexHasher};
pub use prefix::{char_boundary, Fit, Same, Tokenized};

/// Whether the pre-tokenizer starts a piece between the adjacent code points `before` and `after`
/// in every text that holds them: then the count of a text cut there is the sum of the counts of
/// its two halves. True for a letter followed by an ASCII non-letter and for a number followed by
/// an ASCII non-digit (classes as the pre-tokenizer sees them: V8's `\p{L}`, `\p{N}`).
pub fn is_piece_start(before: char, after: char) -> bool {
    after.is_ascii() && split::starts_piece_after(tables::class_of(before as u32), after as u8)
}

/// Whether V8's `/[\p{L}\p{N}]/u` matches `c`: the letter and number classes of the pre-tokenizer's
/// table (Unicode 17, generated from Node), for callers that split text the way JavaScript does.
pub fn is_letter_or_number(c: char) -> bool {
    matches!(
        tables::class_of(c as u32),
        tables::CLASS_LETTER | tables::CLASS_NUMBER
    )
}

/// Token ids of `text` under cl100k_base, special-token spellings encoded as ordinary text.
pub fn encode(text: &str) -> Vec<u32> {
    let mut out = Vec::with_capacity(text.len() / 3 + 1);
    cache::with(|caches| {
        for_each_piece(text, caches, |piece, slot, caches| {
            bpe::encode_piece_in(piece, |_| slot, &mut out, caches)
        })
    });
    out
}

/// Number of tokens of `text` under cl100k_base.
pub fn count(text: &str) -> usize {
    let mut scratch = Vec::new();
    let mut total = 0;
    cache::with(|caches| {
        for_each_piece(text, caches, |piece, slot, caches| {
            total += bpe::count_piece_in(piece, |_| slot, &mut scratch, caches)
        })
    });
    total
}

/// Pieces the pre-tokenizer runs ahead of the merge (see [`for_each_piece`]).
#[cfg(target_arch = "x86_64")]
const AHEAD: usize = 4;

/// Calls `f` on every piece of `text` in order with its piece-cache slot. On x86_64 the
/// pre-tokenizer runs [`AHEAD`] pieces ahead so that each piece's cache slot is fetched while the
/// pieces before it are merged (a piece cache lookup that waits for memory was the largest single
/// cost of a count); the slot is computed once, at the prefetch, and handed to the lookup. Off
/// x86_64 (in wasm, where the worker runs) there is no prefetch instruction to issue, so the pieces
/// are not run ahead through a ring: each piece's slot is computed just before its lookup.
#[inline(always)]
fn for_each_piece(
    text: &str,
    caches: &mut cache::Caches,
    mut f: impl FnMut(&[u8], cache::PieceSlot, &mut cache::Caches),
) {
    let bytes = text.as_bytes();
    #[cfg(target_arch = "x86_64")]
    {
        let mut pieces = split::pieces(text);
        let mut ring: [(std::ops::Range<usize>, cache::PieceSlot); AHEAD] = Default::default();
        let mut queued = 0;
        for slot in &mut ring {
            let Some(piece) = pieces.next() else { break };
            *slot = (piece.clone(), caches.prefetch_piece(&bytes[piece]));
            queued += 1;
        }
        let mut head = 0;
        while queued > 0 {
            let (piece, slot) = std::mem::take(&mut ring[head]);
            match pieces.next() {
                Some(next) => {
                    ring[head] = (next.clone(), caches.prefetch_piece(&bytes[next]));
                }
                None => queued -= 1,
            }
            f(&bytes[piece], slot, caches);
            head = (head + 1) % AHEAD;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for piece in split::pieces(text) {
        let piece = &bytes[piece];
        let slot = caches.prefetch_piece(piece);
        f(piece, slot, caches);
    }
}

/// Number of tokens of `head` followed by `tail`, counted as one joined text (never a sum of
/// parts), without the caller building the joined string.
pub fn count_joined(head: &str, tail: &str) -> usize {
    prefix::count_joined(head, tail)
}

/// The largest code-point boundary `L` with `floor <= L <= max` such that
/// `count(text[..L] + suffix(L)) <= budget`, or `None` when no such `L` exists.
/// `L`, `floor` and `max` count code points (chars), not bytes; `max` is clamped to the number of
/// code points of `text`. Counts are not monotone over prefixes, so this is the true maximum, not
/// a bisection. `suffix` is called only for candidates that are actually measured.
pub fn largest_fitting_prefix<F>(
    text: &str,
    floor: usize,
    max: usize,
    budget: usize,
    suffix: F,
) -> Option<usize>
where
    F: FnMut(usize) -> String,
{
    Tokenized::new(text)
        .largest_fitting_prefix(floor, max, budget, suffix)
        .map(|fit| fit.chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_not_monotone_over_prefixes() {
        assert_eq!(count("The quic"), 3);
        assert_eq!(count("The quick"), 2);
    }

    #[test]
    fn special_token_spellings_are_ordinary_text() {
        assert_eq!(
            encode("<|endoftext|> hi"),
            [27, 91, 8862, 728, 428, 91, 29, 15960]
        );
    }

    #[test]
    fn bom_and_next_line_follow_gpt_tokenizer() {
        // Reference ids from npm gpt-tokenizer 4.0.0.
        assert_eq!(encode("\u{FEFF}hello"), [171, 3299, 15339]);
        assert_eq!(encode("a\u{FEFF}b"), [64, 171, 3299, 65]);
        assert_eq!(encode("x\u{85}y"), [87, 126, 227, 88]);
    }

    #[test]
    fn matches_tiktoken_where_both_agree() {
        let reference = tiktoken_rs::cl100k_base().expect("tiktoken table");
        let samples = [
            "Hello, world! It's a test.\n\n  fn main() { println!(\"hi\"); }\n",
            "Numbers 1234567 and  spaces   and\ttabs\r\n",
            "中文字符和日本語のテキスト。한국어도 있습니다.",
            "emoji 👩‍👩‍👧‍👦 and 🇨🇦 flags",
            "",
            "   ",
            "I'LL SHE'S we've THEY'RE",
        ];
        for s in samples {
            assert_eq!(encode(s), reference.encode_ordinary(s), "{s:?}");
            assert_eq!(count(s), encode(s).len());
        }
        // Pieces long enough to be merged in healed chunks (bpe::merge_chunked).
        let mut rng = context_meter_test_rng::Lcg(0x2545_F491);
        for alphabet in [
            "abcdefghijklmnopqrstuvwxyz",
            "ACDEFGHIKLMNPQRSTVWY",
            "ACGT",
            "-",
        ] {
            let units = alphabet.as_bytes();
            let piece: String = (0..6000)
                .map(|_| units[rng.below(units.len())] as char)
                .collect();
            assert_eq!(
                encode(&piece),
                reference.encode_ordinary(&piece),
                "{alphabet}"
            );
        }
    }

    #[test]
    fn counts_add_up_across_every_piece_start() {
        // Letters and numbers of several scripts (incl. ones no "stable" hand list would hold),
        // combining marks, contractions, spaces, newlines and ASCII punctuation.
        let alphabet: Vec<char> =
            "ab Z9'sll.,-_\n\t 0١٢ب ت क़ें ۵ 中文ß é\u{301}ɐ Ⅻ ½ 😀\u{FEFF}\u{85}\"{}:"
                .chars()
                .collect();
        let mut rng = context_meter_test_rng::Lcg(0x9E37_79B9);
        let mut cuts = 0;
        for len in 2..80 {
            let text: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let chars: Vec<(usize, char)> = text.char_indices().collect();
            for pair in chars.windows(2) {
                let ((_, before), (at, after)) = (pair[0], pair[1]);
                if is_piece_start(before, after) {
                    cuts += 1;
                    assert_eq!(
                        count(&text[..at]) + count(&text[at..]),
                        count(&text),
                        "{text:?} cut at byte {at}"
                    );
                }
            }
        }
        assert!(
            cuts > 200,
            "the random texts must hold piece starts ({cuts})"
        );
    }

    #[test]
    fn prefix_search_finds_the_true_maximum() {
        // "The quick" (9 chars) fits 2 tokens although "The quic" does not.
        let l = largest_fitting_prefix("The quick brown", 0, 14, 2, |_| String::new());
        assert_eq!(l, Some(9));
    }
}
