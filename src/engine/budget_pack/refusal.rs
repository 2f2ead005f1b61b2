//! The family's closed refusal set. Every way a request can be turned away is one variant here,
//! with a stable code (the contract's `errorCodes` where the contract names one), an HTTP status
//! (the contract's `errors` table), a static sentence and numeric figures only (the limit that was
//! exceeded). No variant carries or renders any part of a submission.

use crate::engine::ClosedError;

/// Which of the contract's limits a request exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `limits.inputBytes`: request body bytes.
    InputBytes,
    /// `limits.sources`: entries of `sources`.
    Sources,
    /// `limits.candidates`: entries of `candidates`.
    Candidates,
    /// `limits.budgetUnits`: the value of `budgetUnits`.
    BudgetUnits,
    /// `limits.jsonNodes`: JSON values in the body text.
    JsonNodes,
    /// `limits.depth`: nesting depth of the body (the root value is depth 1).
    JsonDepth,
    /// `limits.candidateSpanCharacters`: the sum of `end − start` over every candidate with end > start.
    CandidateSpanCharacters,
    /// `limits.outputBytes`: bytes of the compact JSON of `result`.
    OutputBytes,
    /// `limits.packedTextJsonBytes`: bytes of the selected texts written as JSON strings.
    PackedTextJsonBytes,
}

impl Limit {
    /// The contract's value for this limit.
    pub fn value(self) -> u64 {
        use super::limits;
        match self {
            Limit::InputBytes => limits::INPUT_BYTES as u64,
            Limit::Sources => limits::SOURCES as u64,
            Limit::Candidates => limits::CANDIDATES as u64,
            Limit::BudgetUnits => u64::from(limits::BUDGET_UNITS),
            Limit::JsonNodes => limits::JSON_NODES as u64,
            Limit::JsonDepth => limits::JSON_DEPTH as u64,
            Limit::CandidateSpanCharacters => limits::CANDIDATE_SPAN_CHARACTERS,
            Limit::OutputBytes => limits::OUTPUT_BYTES as u64,
            Limit::PackedTextJsonBytes => limits::PACKED_TEXT_JSON_BYTES as u64,
        }
    }

    /// The contract's `limits` member name.
    pub fn name(self) -> &'static str {
        match self {
            Limit::InputBytes => "inputBytes",
            Limit::Sources => "sources",
            Limit::Candidates => "candidates",
            Limit::BudgetUnits => "budgetUnits",
            Limit::JsonNodes => "jsonNodes",
            Limit::JsonDepth => "depth",
            Limit::CandidateSpanCharacters => "candidateSpanCharacters",
            Limit::OutputBytes => "outputBytes",
            Limit::PackedTextJsonBytes => "packedTextJsonBytes",
        }
    }
}

/// Why a context-budget-pack request was refused. Refusals are free: no payment is attempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The body exceeded the edge's read cap (`BODY_CAP`, the contract's `limit.httpRequestBytes`).
    EdgeLimit,
    /// The body is not one JSON text (JavaScript `JSON.parse` grammar).
    MalformedJson,
    /// The body is not UTF-8, or a string holds a lone surrogate escape.
    InvalidUnicode,
    /// An object key anywhere is `__proto__`, `constructor` or `prototype`.
    UnsafeKey,
    /// The JSON text has too many values or nests too deep.
    ComplexityLimit(Limit),
    /// Input bytes, sources, candidates or budgetUnits over the contract's limits.
    InputLimit(Limit),
    /// The candidates' spans add up to more characters than the contract evaluates.
    EvaluationLimit(Limit),
    /// The packed result would exceed the contract's output limits.
    OutputLimit(Limit),
    /// The body does not satisfy the contract's inputSchema.
    SchemaViolation,
    /// Two sources, or two candidates, share an id.
    DuplicateId,
    /// No `Idempotency-Key` header.
    IdempotencyKeyMissing,
    /// `Idempotency-Key` is not 16–128 characters of `[A-Za-z0-9_-]`.
    IdempotencyKeyInvalid,
}

impl Refusal {
    /// The contract `limits` member a limit refusal names.
    pub fn limit(&self) -> Option<Limit> {
        match self {
            Refusal::ComplexityLimit(limit)
            | Refusal::InputLimit(limit)
            | Refusal::EvaluationLimit(limit)
            | Refusal::OutputLimit(limit) => Some(*limit),
            _ => None,
        }
    }

    /// Every variant once (each limit variant with each limit it can name), for the served
    /// contract's refusal table.
    pub fn catalogue() -> Vec<Refusal> {
        vec![
            Refusal::MalformedJson,
            Refusal::IdempotencyKeyMissing,
            Refusal::IdempotencyKeyInvalid,
            Refusal::EdgeLimit,
            Refusal::InputLimit(Limit::InputBytes),
            Refusal::InputLimit(Limit::Sources),
            Refusal::InputLimit(Limit::Candidates),
            Refusal::InputLimit(Limit::BudgetUnits),
            Refusal::ComplexityLimit(Limit::JsonNodes),
            Refusal::ComplexityLimit(Limit::JsonDepth),
            Refusal::EvaluationLimit(Limit::CandidateSpanCharacters),
            Refusal::OutputLimit(Limit::PackedTextJsonBytes),
            Refusal::OutputLimit(Limit::OutputBytes),
            Refusal::InvalidUnicode,
            Refusal::UnsafeKey,
            Refusal::SchemaViolation,
            Refusal::DuplicateId,
        ]
    }
}

impl ClosedError for Refusal {
    fn code(&self) -> &'static str {
        match self {
            Refusal::EdgeLimit => "EDGE_LIMIT",
            Refusal::MalformedJson => "MALFORMED_JSON",
            Refusal::InvalidUnicode => "INVALID_UNICODE",
            Refusal::UnsafeKey => "UNSAFE_KEY",
            Refusal::ComplexityLimit(_) => "COMPLEXITY_LIMIT",
            Refusal::InputLimit(_) => "INPUT_LIMIT",
            Refusal::EvaluationLimit(_) => "EVALUATION_LIMIT",
            Refusal::OutputLimit(_) => "OUTPUT_LIMIT",
            Refusal::SchemaViolation => "SCHEMA_VIOLATION",
            Refusal::DuplicateId => "DUPLICATE_ID",
            Refusal::IdempotencyKeyMissing => "IDEMPOTENCY_KEY_REQUIRED",
            Refusal::IdempotencyKeyInvalid => "INVALID_IDEMPOTENCY_KEY",
        }
    }

    fn status(&self) -> u16 {
        match self {
            Refusal::MalformedJson
            | Refusal::IdempotencyKeyMissing
            | Refusal::IdempotencyKeyInvalid => 400,
            Refusal::EdgeLimit
            | Refusal::ComplexityLimit(_)
            | Refusal::InputLimit(_)
            | Refusal::EvaluationLimit(_)
            | Refusal::OutputLimit(_) => 413,
            Refusal::InvalidUnicode
            | Refusal::UnsafeKey
            | Refusal::SchemaViolation
            | Refusal::DuplicateId => 422,
        }
    }

    fn message(&self) -> &'static str {
        match self {
            Refusal::EdgeLimit => "request body exceeds the HTTP request byte limit",
            Refusal::MalformedJson => "request body must be one JSON text",
            Refusal::InvalidUnicode => {
                "request body must be UTF-8 and its strings must not hold lone surrogates"
            }
            Refusal::UnsafeKey => {
                "object keys __proto__, constructor and prototype are refused anywhere in the body"
            }
            Refusal::ComplexityLimit(Limit::JsonDepth) => "JSON nesting depth exceeds the limit",
            Refusal::ComplexityLimit(_) => "JSON value count exceeds the limit",
            Refusal::InputLimit(Limit::InputBytes) => "request body exceeds the input byte limit",
            Refusal::InputLimit(Limit::Sources) => "sources exceed the limit",
            Refusal::InputLimit(Limit::Candidates) => "candidates exceed the limit",
            Refusal::InputLimit(_) => "budgetUnits exceeds the limit",
            Refusal::EvaluationLimit(_) => {
                "candidate spans add up to more characters than the limit"
            }
            Refusal::OutputLimit(Limit::PackedTextJsonBytes) => {
                "packed text would exceed the packed-text byte limit"
            }
            Refusal::OutputLimit(_) => "result would exceed the output byte limit",
            Refusal::SchemaViolation => "request body does not satisfy the contract's inputSchema",
            Refusal::DuplicateId => "source ids and candidate ids must each be unique",
            Refusal::IdempotencyKeyMissing => "Idempotency-Key header is required",
            Refusal::IdempotencyKeyInvalid => {
                "Idempotency-Key must be 16 to 128 characters of A-Z a-z 0-9 _ -"
            }
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            Refusal::EdgeLimit => vec![("limit", super::BODY_CAP as u64)],
            Refusal::ComplexityLimit(limit)
            | Refusal::InputLimit(limit)
            | Refusal::EvaluationLimit(limit)
            | Refusal::OutputLimit(limit) => vec![("limit", limit.value())],
            Refusal::IdempotencyKeyMissing | Refusal::IdempotencyKeyInvalid => {
                vec![("min_length", 16), ("max_length", 128)]
            }
            _ => Vec::new(),
        }
    }
}
