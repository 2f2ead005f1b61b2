//! The figures and names token-efficiency/v1 publishes in its criteria: the body cap, the nesting
//! cap, the token-figure cap and the ledger columns. A leaf: every other piece may read it.

/// Request body byte cap (the edge enforces it while reading; [`super::parse`] checks it again).
pub const BODY_CAP: usize = 262_144;

/// Deepest array/object nesting accepted.
pub const MAX_DEPTH: usize = 1000;

/// Largest budget_tokens / reserve_tokens accepted (2^53).
pub const MAX_TOKENS_FIGURE: u64 = 1 << 53;

/// The family-specific ledger columns [`super::run`] fills, in order.
pub const LEDGER_COLUMNS: &[&str] = &[
    "criteria_version",
    "op",
    "verdict",
    "body_bytes",
    "payload_chars",
    "applications_s1",
    "applications_s2",
    "applications_s3",
    "applications_s4",
    "applications_total",
    "tokens_before",
    "tokens_after",
    "chars_before",
    "chars_after",
];
