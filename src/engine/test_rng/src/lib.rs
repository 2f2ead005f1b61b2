//! Test-only: the deterministic pseudo-random source the randomized unit tests of the worker, the
//! tokenizer and the JSON layer share (a 64-bit linear congruential generator, Knuth's MMIX
//! constants), so a failing case replays from its seed on every machine.

pub struct Lcg(pub u64);

impl Lcg {
    /// The next 31 high bits of the state.
    pub fn next_bits(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }

    /// A number in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.next_bits() % n.max(1)
    }

    /// `len` fragments picked at random, joined.
    pub fn text(&mut self, fragments: &[&str], len: usize) -> String {
        (0..len)
            .map(|_| fragments[self.below(fragments.len())])
            .collect()
    }
}
