//! What the merge engines (bpe.rs, block_merge.rs) share: how a merge asks for the rank of two
//! adjacent parts, and the rank that means "not a token". A leaf: it imports nothing of the crate.

/// The rank of a pair whose joined bytes are not a token (ranks are ids, all below it).
pub(crate) const NO_RANK: u32 = u32::MAX;

/// How a merge ranks two adjacent parts with ids `a` and `b` whose joined bytes are `joined`.
pub(crate) trait PairRank {
    fn rank(&mut self, a: u32, b: u32, joined: &[u8]) -> u32;

    /// Whether merging the bytes of tokens `left` then `right` gives exactly `[left, right]`.
    fn valid_pair(&mut self, left: u32, right: u32) -> bool;
}
