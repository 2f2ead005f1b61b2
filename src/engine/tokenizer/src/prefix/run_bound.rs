//! Run bound: the most bytes `k` tokens can cover inside a run of one byte ("-----", "aaaa"), a
//! tighter bound for the long-piece jump than `k` times the longest token.
//!
//! In a merge result every two adjacent tokens form a valid pair (merging their bytes gives
//! exactly that pair; see long_piece.rs). Inside a run of byte `b` every token is `b`
//! repeated, and a pair of them is valid exactly when the merge of `b` repeated their joint length
//! is those two tokens: so each joint length `n` admits at most one valid pair, read off one merge
//! of `b^n`. The tokens a merge lays inside the run are therefore a walk along these pairs, and the
//! most bytes `k` of them can cover is the longest such walk of at most `k` tokens (a dynamic
//! program over the pairs). A run of "-" merges into tokens of about 63 bytes on average although
//! its longest token has 96: the search that stepped by the longest token probed a third of the
//! piece one code point at a time.

/// Walks are tabulated up to this many tokens; a longer walk splits into walks of at most this
/// many (each part is itself a walk), so the tabulated figures bound it.
const SPAN: usize = 1024;

/// Longest walks inside a run of one byte, by number of tokens.
pub(super) struct RunBound {
    /// `most[k]`: the most bytes a walk of at most `k` tokens covers (`most[0] = 0`).
    most: Vec<usize>,
}

impl RunBound {
    /// The bound for a run of `byte`, where no token is longer than `max_token_bytes`.
    pub(super) fn of(byte: u8, max_token_bytes: usize) -> RunBound {
        // Lengths l for which `byte` repeated l times is a token (every byte alone is one).
        let is_token = |l: usize| crate::tables::rank_of(&vec![byte; l]).is_some();
        let longest = (1..=max_token_bytes)
            .filter(|&l| is_token(l))
            .max()
            .unwrap_or(1);
        // The valid pairs (left length, right length), one merge per joint length (through the
        // pair cache, as a count merges: the run's pairs are met again at every length).
        let mut pairs = Vec::new();
        let mut ids = Vec::new();
        let run = vec![byte; 2 * longest];
        crate::cache::with(|caches| {
            for joint in 2..=2 * longest {
                ids.clear();
                crate::bpe::encode_piece_cached(&run[..joint], &mut ids, caches);
                if let [left, right] = ids[..] {
                    let length = |id: u32| crate::tables::token_bytes(id).len();
                    pairs.push((length(left), length(right)));
                }
            }
        });
        // best[l]: the most bytes a walk of exactly k tokens ending in the token of length l
        // covers (0: no such walk), for k = 1, 2, ...
        let mut best: Vec<usize> = (0..=longest)
            .map(|l| usize::from(is_token(l)) * l)
            .collect();
        let mut most = vec![0, longest];
        let mut next = vec![0; longest + 1];
        for _ in 2..=SPAN {
            next.fill(0);
            for &(left, right) in &pairs {
                if best[left] > 0 {
                    next[right] = next[right].max(best[left] + right);
                }
            }
            std::mem::swap(&mut best, &mut next);
            let longest_walk = best.iter().copied().max().unwrap_or(0);
            most.push(most[most.len() - 1].max(longest_walk));
        }
        RunBound { most }
    }

    /// The most bytes a walk of at most `tokens` tokens covers inside the run.
    pub(super) fn most_bytes(&self, tokens: usize) -> usize {
        let (whole, part) = (tokens / SPAN, tokens % SPAN);
        whole
            .saturating_mul(self.most[SPAN])
            .saturating_add(self.most[part])
    }
}
