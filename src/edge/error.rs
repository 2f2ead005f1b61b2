//! The edge's closed error set: every failure the shell itself can answer with (routing, body
//! reading, configuration, upstream I/O). Static messages; numbers are the only payload.

use crate::engine::ClosedError;

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
    /// Body is not UTF-8 JSON holding an object.
    BodyNotJsonObject,
    /// The body stream failed while reading.
    BodyUnreadable,
    /// A required configuration value or secret is missing or malformed.
    Misconfigured,
    /// The free-tier allowance object could not be reached.
    AllowanceUnavailable,
    /// Any other runtime failure (never carries the underlying error text).
    Internal,
}

impl EdgeError {
    /// Every error once (figures zero), for the OpenAPI document's closed code lists.
    pub const ALL: [EdgeError; 9] = [
        EdgeError::NotCovered,
        EdgeError::BodyTooLarge { cap: 0 },
        EdgeError::UnsupportedMediaType,
        EdgeError::ContentEncodingUnsupported,
        EdgeError::BodyNotJsonObject,
        EdgeError::BodyUnreadable,
        EdgeError::Misconfigured,
        EdgeError::AllowanceUnavailable,
        EdgeError::Internal,
    ];
}

impl ClosedError for EdgeError {
    fn code(&self) -> &'static str {
        match self {
            EdgeError::NotCovered => "not_covered",
            EdgeError::BodyTooLarge { .. } => "CAP-EXCEEDED:body_bytes",
            EdgeError::UnsupportedMediaType => "unsupported_media_type",
            EdgeError::ContentEncodingUnsupported => "content_encoding_unsupported",
            EdgeError::BodyNotJsonObject => "malformed_body",
            EdgeError::BodyUnreadable => "body_unreadable",
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
            EdgeError::BodyNotJsonObject | EdgeError::BodyUnreadable => 400,
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
            EdgeError::BodyNotJsonObject => "request body must be one UTF-8 JSON object",
            EdgeError::BodyUnreadable => "request body could not be read",
            EdgeError::Misconfigured => "service configuration is incomplete",
            EdgeError::AllowanceUnavailable => "free-tier allowance is unavailable; retry later",
            EdgeError::Internal => "internal error",
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            EdgeError::BodyTooLarge { cap } => vec![("cap_bytes", *cap)],
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
