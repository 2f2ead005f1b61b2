//! context-composition/v1: two-axis composition report of one session record.
//!
//! The family API the edge calls: [`parse`] (free validation of the body bytes, refusals R-1..R-6
//! and `stated_counts_invalid`), [`precheck`] (free assessability disclosure, no factor table),
//! [`run`] (the paid audit; could-not-measure R-7..R-9 is a 422 delivery, never chargeable) and
//! [`criteria`] (the served document).
//!
//! Invariants: pure and deterministic (the edge passes `now_ms`); a report carries indices,
//! classes, counts and sizes only — never a submitted string, never a hash of one; every EM-1
//! figure is in estimate typography; every refusal is closed-form.

pub mod adapters;
pub mod classify;
pub mod criteria;
pub mod envelope;
pub mod metrics;
pub mod record;
pub mod report;
pub mod shingle_join;

use crate::engine::ClosedError;

pub use criteria::criteria;
pub use envelope::{HarnessStatedCounts, Request};

/// Request body cap (the spec's 5 MiB), enforced by the edge while reading and again by [`parse`].
pub const BODY_CAP: usize = 5_242_880;
/// Entry (message) cap; over it the audit is could-not-measure R-7.
pub const ENTRY_CAP: usize = 10_000;
/// Single-entry cap in UTF-8 bytes of adapted text; over it the audit is could-not-measure R-7.
pub const ENTRY_BYTES_CAP: u64 = 1_048_576;
/// `harness_stated_counts` cap, serialised (compact JSON) bytes.
pub const STATED_COUNTS_CAP: usize = 65_536;

/// Family-specific ledger columns, in order (the edge adds the payment columns).
pub const LEDGER_COLUMNS: &[&str] = &[
    "criteria_version",
    "measurement_line",
    "op",
    "declared_format",
    "entry_count",
    "record_bytes",
    "outcome",
    "could_not_measure_kind",
];

/// The closed refusals of this family (all free, before any payment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// over the body cap.
    BodyOverCap { body_bytes: u64 },
    /// not UTF-8 / not a JSON object / a duplicated envelope member.
    MalformedBody,
    ///
    EnvelopeVersionNotSupported,
    ///
    FormatNotAccepted,
    /// record absent, null or given twice.
    RecordRequired,
    ///
    RecordDoesNotParseAsDeclaredFormat,
    ///
    CallerInvalid,
    /// harness_stated_counts not a plain object of the published shape, or over 64 KiB.
    StatedCountsInvalid,
}

impl Refusal {
    /// The published rule id (R-1..R-6), or None for stated_counts_invalid (which has none).
    pub fn rule(&self) -> Option<&'static str> {
        Some(match self {
            Refusal::BodyOverCap { .. } | Refusal::MalformedBody => "R-1",
            Refusal::EnvelopeVersionNotSupported => "R-2",
            Refusal::FormatNotAccepted => "R-3",
            Refusal::RecordRequired => "R-4",
            Refusal::RecordDoesNotParseAsDeclaredFormat => "R-5",
            Refusal::CallerInvalid => "R-6",
            Refusal::StatedCountsInvalid => return None,
        })
    }

    crate::engine::every_variant!(Refusal:
        BodyOverCap { body_bytes }, MalformedBody, EnvelopeVersionNotSupported, FormatNotAccepted,
        RecordRequired, RecordDoesNotParseAsDeclaredFormat, CallerInvalid, StatedCountsInvalid,
    );
}

impl ClosedError for Refusal {
    fn code(&self) -> &'static str {
        match self {
            Refusal::BodyOverCap { .. } => "CAP-EXCEEDED:body_bytes",
            Refusal::MalformedBody => "malformed_body",
            Refusal::EnvelopeVersionNotSupported => "envelope_version_not_supported",
            Refusal::FormatNotAccepted => "format_not_accepted",
            Refusal::RecordRequired => "record_required",
            Refusal::RecordDoesNotParseAsDeclaredFormat => {
                "record_does_not_parse_as_declared_format"
            }
            Refusal::CallerInvalid => "caller_invalid",
            Refusal::StatedCountsInvalid => "stated_counts_invalid",
        }
    }

    fn status(&self) -> u16 {
        match self {
            Refusal::BodyOverCap { .. } => 413,
            _ => 400,
        }
    }

    fn message(&self) -> &'static str {
        match self {
            Refusal::BodyOverCap { .. } => {
                "The request body is over the 5 MiB body cap (5242880 bytes). Refused free, before any payment."
            }
            Refusal::MalformedBody => {
                "The request body is not one plain JSON object in UTF-8 with each envelope member given once. Refused free, before any payment."
            }
            Refusal::EnvelopeVersionNotSupported => {
                "envelope_version must be context-composition-envelope/1. Refused free, before any payment."
            }
            Refusal::FormatNotAccepted => {
                "declared_format_id must be one of the accepted formats: letta-af, anthropic-messages, generic-message-list. Refused free, before any payment."
            }
            Refusal::RecordRequired => {
                "The envelope must carry exactly one record (present, not null, given once). Refused free, before any payment."
            }
            Refusal::RecordDoesNotParseAsDeclaredFormat => {
                "The record does not parse as the declared format; it is never retried under another format. Refused free, before any payment."
            }
            Refusal::CallerInvalid => {
                "caller must be a Solana address (base58, 32 bytes) or an EVM address (0x and 40 hex digits). Refused free, before any payment."
            }
            Refusal::StatedCountsInvalid => {
                "harness_stated_counts must be a plain object { per_message?: [integer|null], total?: integer } of at most 65536 bytes serialised. Refused free, before any payment."
            }
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        let mut out = Vec::new();
        if let Some(r) = self.rule() {
            out.push(("rule", r[2..].parse().unwrap_or(0)));
        }
        match self {
            Refusal::BodyOverCap { body_bytes } => {
                out.push(("cap_bytes", BODY_CAP as u64));
                out.push(("body_bytes", *body_bytes));
            }
            Refusal::StatedCountsInvalid => out.push(("cap_bytes", STATED_COUNTS_CAP as u64)),
            _ => {}
        }
        out
    }
}

/// Free validation of the raw body bytes (runs before any payment is looked at).
pub fn parse(body: &[u8]) -> Result<Request, Refusal> {
    envelope::parse(body)
}

/// The free pre-check report (unsigned; the edge signs it).
pub fn precheck(
    req: &Request,
    now_ms: u64,
) -> Result<serde_json::Map<String, serde_json::Value>, Refusal> {
    Ok(report::precheck(req, now_ms))
}

/// The paid audit: 200 delivered, or 422 could-not-measure (not chargeable).
pub fn run(req: &Request, now_ms: u64) -> Result<crate::engine::Delivery, Refusal> {
    Ok(report::audit(req, now_ms))
}
