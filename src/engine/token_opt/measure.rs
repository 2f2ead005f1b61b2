//! Measurement of a lever in exact cl100k tokens beside the reference's chars/4 estimate: a
//! text's JavaScript length and exact count ([`Measured`]), the reference's overhead breakdown, and
//! the before / after / overhead of one lever ([`Measurement`]) from which gross, net and the gate
//! verdict derive.

use super::json_js::js_length;
use crate::engine::tokenizer;

/// The reference's fixed chars-per-token ratio of its estimate.
pub const CHARS_PER_TOKEN: f64 = 4.0;

/// The reference's `charsToTokens` over a length: `Math.ceil(chars / 4)`, 0 for 0 (or less).
pub fn estimate(chars: f64) -> f64 {
    if chars <= 0.0 {
        0.0
    } else {
        (chars / CHARS_PER_TOKEN).ceil()
    }
}

// ─── Measurement ─────────────────────────────────────────────────────────────────────────────────

/// A size: JavaScript length and exact token count, as doubles (the reference's numbers). A text's
/// own size is an integer far below 2^53; only a product with a caller's count can pass it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measured {
    pub chars: f64,
    pub tokens: f64,
}

impl Measured {
    /// The text's size (the text tokenized once).
    pub fn of(text: &str) -> Self {
        Measured {
            chars: js_length(text) as f64,
            tokens: tokenizer::count(text) as f64,
        }
    }

    /// `n` times the size, each product rounded as JavaScript's `n * size` is.
    pub(super) fn times(self, n: u64) -> Self {
        Measured {
            chars: self.chars * n as f64,
            tokens: self.tokens * n as f64,
        }
    }

    pub(super) fn plus(self, other: Self) -> Self {
        Measured {
            chars: self.chars + other.chars,
            tokens: self.tokens + other.tokens,
        }
    }
}

/// The reference's `OverheadBreakdown`, each component measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Overhead {
    pub retrieval: Measured,
    pub discovery: Measured,
    pub detail: Measured,
    pub marker: Measured,
}

impl Overhead {
    /// The reference's `totalOverheadChars` order: retrieval + discovery + detail + marker.
    pub fn total(&self) -> Measured {
        self.retrieval
            .plus(self.discovery)
            .plus(self.detail)
            .plus(self.marker)
    }
}

/// One lever's before / after / overhead; gross, net and the gate verdict derive from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The reference's lever name (`c9`, `filter-truncate`, `schema`).
    pub lever: &'static str,
    /// Which part of the lever was measured (`c9`, `filter`, `truncate`, `schema`).
    pub part: &'static str,
    pub before: Measured,
    pub after: Measured,
    pub overhead: Overhead,
}

impl Measurement {
    /// Exact gross saving in tokens: before − after.
    pub fn gross(&self) -> f64 {
        self.before.tokens - self.after.tokens
    }
    /// Exact net saving in tokens: gross − every overhead component.
    pub fn net(&self) -> f64 {
        self.gross() - self.overhead.total().tokens
    }
    /// The gate: a lever stays enabled only when its exact net saving is positive.
    pub fn enabled(&self) -> bool {
        self.net() > 0.0
    }
    /// The reference's own figures (`measureLeverFull` over the char counts): before, after,
    /// overhead (one ceiling over the summed overhead chars), gross, net.
    pub fn estimates(&self) -> [f64; 5] {
        let before = estimate(self.before.chars);
        let after = estimate(self.after.chars);
        let overhead = estimate(self.overhead.total().chars);
        [
            before,
            after,
            overhead,
            before - after,
            before - after - overhead,
        ]
    }
}
