//! Test-only: a seeded pseudo-random source for the randomized tests (a 64-bit LCG with Knuth's
//! MMIX constants, the worker's engine tests use the same), so a failing case replays from its
//! seed on every machine.

pub struct Lcg(pub u64);

impl Lcg {
    /// A number in `0..n` (`0` when `n` is 0) from the next state's 31 high bits.
    pub fn below(&mut self, n: usize) -> usize {
        const MULTIPLIER: u64 = 6364136223846793005;
        const INCREMENT: u64 = 1442695040888963407;
        self.0 = self.0.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT);
        (self.0 >> 33) as usize % n.max(1)
    }

    /// `len` units picked at random, joined.
    pub fn text(&mut self, units: &[&str], len: usize) -> String {
        (0..len).map(|_| units[self.below(units.len())]).collect()
    }
}
