//! The pure core. Nothing here performs I/O, reads a clock or draws randomness: the edge passes
//! `now` (milliseconds since the Unix epoch) and key material in, and gets typed reports or a closed
//! refusal back. The same input always yields the same bytes.

pub mod allowance;
pub mod budget_pack;
pub mod canonical;
pub mod composition;
pub mod payment;
pub mod sign;
pub mod time;
pub mod token_efficiency;
pub mod token_opt;
pub mod tokenizer;

/// A closed refusal: every error that can reach a client implements this. The message is a static
/// string; the only variable content is numbers (caps, lengths, counts, rule ids) in `figures`.
/// No implementation may carry or render any part of a submission.
pub trait ClosedError {
    /// Stable machine code, e.g. `CAP-EXCEEDED:body_bytes` or `malformed_body`.
    fn code(&self) -> &'static str;
    /// HTTP status the edge answers with.
    fn status(&self) -> u16;
    /// Static human sentence.
    fn message(&self) -> &'static str;
    /// Numeric facts only (name, value).
    fn figures(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
