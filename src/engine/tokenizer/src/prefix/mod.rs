//! S-4 prefix search and joined counts without re-tokenizing whole texts, in five ideas:
//! - [`analysis`]: a text tokenized once, its piece boundaries and which of them a cut leaves
//!   untouched (the pre-tokenizer is local), so a probe re-tokenizes only a local tail;
//! - [`long_piece`]: healing, for a cut inside one long piece (re-merge only near the cut);
//! - [`search`]: the exact largest fitting prefix, skipping candidates only on true lower bounds;
//! - [`reuse`]: an edited text's analysis from its original's, re-tokenizing only near the edits;
//! - [`chars`]: code-point offsets (S-4 counts code points; the tokenizer works on bytes).

mod analysis;
mod chars;
mod long_piece;
mod reuse;
#[cfg(test)]
mod reuse_tests;
mod run_bound;
mod search;
#[cfg(test)]
mod tests;

pub use analysis::count_joined;
pub use chars::char_boundary;
pub use reuse::Same;
pub use search::{Fit, Tokenized};
