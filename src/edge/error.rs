//! The edge's closed error set: every failure the shell itself can answer with (routing, body
//! reading, the free tier's caller and allowance, configuration, upstream I/O). Static messages;
//! numbers are the only payload. Every refusal crosses the pipeline as [`Refused`], by `?`.

use crate::engine::ClosedError;

/// A boxed closed refusal: the pipeline's one error type (engine, edge and payment refusals alike).
pub type Refused = Box<dyn ClosedError>;

/// Errors raised by the shell before or around an engine call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeError {
    /// Unknown path or method.
    NotCovered,
    /// Body larger than the route's cap (cap in bytes).
    BodyTooLarge { cap: u64 },
    /// Content-Type is not application/json.
    UnsupportedMediaType,
    /// Content-Encoding is not identity (compressed bodies are not accepted).
    ContentEncodingUnsupported,
    /// The body stream failed while reading.
    BodyUnreadable,
    /// The free tier's caller wallet is not a Solana or EVM address.
    CallerInvalid,
    /// A free check named no caller wallet (neither `caller` in the body nor `X-Caller`).
    CallerMissing,
    /// A paid call with a malformed `Idempotency-Key`, or the pack without one.
    IdempotencyKeyInvalid,
    /// The free allowance of the day is spent.
    FreeTierExhausted,
    /// The free call came before the allowance's minimum interval.
    FreeTierTooEarly { retry_after_ms: u64 },
    /// A required configuration value or secret is missing or malformed.
    Misconfigured,
    /// The free-tier allowance object could not be reached.
    AllowanceUnavailable,
    /// Any other runtime failure (never carries the underlying error text).
    Internal,
}

impl EdgeError {
    /// What a body route's intake and its runtime can answer (OpenAPI's closed code lists).
    pub const BODY_ROUTE: [EdgeError; 7] = [
        EdgeError::BodyTooLarge { cap: 0 },
        EdgeError::UnsupportedMediaType,
        EdgeError::ContentEncodingUnsupported,
        EdgeError::BodyUnreadable,
        EdgeError::Misconfigured,
        EdgeError::AllowanceUnavailable,
        EdgeError::Internal,
    ];

    /// What a free check adds: its caller and its allowance.
    pub const FREE_CHECK: [EdgeError; 4] = [
        EdgeError::CallerInvalid,
        EdgeError::CallerMissing,
        EdgeError::FreeTierExhausted,
        EdgeError::FreeTierTooEarly { retry_after_ms: 0 },
    ];

    /// What a document route can answer: it reads no body.
    pub const DOCUMENT_ROUTE: [EdgeError; 2] = [EdgeError::Misconfigured, EdgeError::Internal];
}

impl ClosedError for EdgeError {
    fn code(&self) -> &'static str {
        match self {
            EdgeError::NotCovered => "not_covered",
            EdgeError::BodyTooLarge { .. } => "CAP-EXCEEDED:body_bytes",
            EdgeError::UnsupportedMediaType => "unsupported_media_type",
            EdgeError::ContentEncodingUnsupported => "content_encoding_unsupported",
            EdgeError::BodyUnreadable => "body_unreadable",
            EdgeError::CallerInvalid => "caller_invalid",
            EdgeError::CallerMissing => "caller_missing",
            EdgeError::IdempotencyKeyInvalid => "idempotency_key_invalid",
            EdgeError::FreeTierExhausted => "free_tier_exhausted",
            EdgeError::FreeTierTooEarly { .. } => "free_tier_too_early",
            EdgeError::Misconfigured => "misconfigured",
            EdgeError::AllowanceUnavailable => "allowance_unavailable",
            EdgeError::Internal => "internal",
        }
    }

    fn status(&self) -> u16 {
        match self {
            EdgeError::NotCovered => 404,
            EdgeError::BodyTooLarge { .. } => 413,
            EdgeError::UnsupportedMediaType | EdgeError::ContentEncodingUnsupported => 415,
            EdgeError::BodyUnreadable
            | EdgeError::CallerInvalid
            | EdgeError::CallerMissing
            | EdgeError::IdempotencyKeyInvalid => 400,
            EdgeError::FreeTierExhausted | EdgeError::FreeTierTooEarly { .. } => 402,
            EdgeError::Internal => 500,
            EdgeError::Misconfigured | EdgeError::AllowanceUnavailable => 503,
        }
    }

    fn message(&self) -> &'static str {
        match self {
            EdgeError::NotCovered => "NOT COVERED",
            EdgeError::BodyTooLarge { .. } => "request body exceeds the route's byte cap",
            EdgeError::UnsupportedMediaType => "Content-Type must be application/json",
            EdgeError::ContentEncodingUnsupported => {
                "Content-Encoding must be identity: send the JSON body uncompressed"
            }
            EdgeError::BodyUnreadable => "request body could not be read",
            EdgeError::CallerInvalid => {
                "caller must be a Solana address (base58 of 32 bytes) or an EVM address (0x and 40 hex digits) for the free tier"
            }
            EdgeError::CallerMissing => {
                "the free tier needs a caller wallet: `caller` in the body or the X-Caller header"
            }
            EdgeError::IdempotencyKeyInvalid => {
                "an Idempotency-Key header must be 16-128 characters [A-Za-z0-9_-]; the pack route requires one"
            }
            EdgeError::FreeTierExhausted | EdgeError::FreeTierTooEarly { .. } => {
                "free allowance spent or call too early; use the paid route"
            }
            EdgeError::Misconfigured => "service configuration is incomplete",
            EdgeError::AllowanceUnavailable => "free-tier allowance is unavailable; retry later",
            EdgeError::Internal => "internal error",
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            EdgeError::BodyTooLarge { cap } => vec![("cap_bytes", *cap)],
            EdgeError::FreeTierTooEarly { retry_after_ms } => {
                vec![("retry_after_ms", *retry_after_ms)]
            }
            _ => Vec::new(),
        }
    }
}

impl From<worker::Error> for EdgeError {
    fn from(_: worker::Error) -> Self {
        // The runtime's error text may quote request data; it is dropped on purpose.
        EdgeError::Internal
    }
}

impl From<worker::Error> for Refused {
    fn from(err: worker::Error) -> Self {
        EdgeError::from(err).into()
    }
}
