//! Every refusal of token-opt/v1: one closed enum, static messages, numbers only.

use super::levers::MissingRequired;
use super::MAX_INDENT_SIZE;
use crate::engine::ClosedError;

/// Every refusal of the family. Static messages; figures are numbers only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The body exceeds the op's cap.
    BodyTooLarge {
        cap: usize,
    },
    BodyNotUtf8,
    MalformedBody,
    BodyNotObject,
    /// A member the input contract does not define (top level or inside a lever).
    UnknownField,
    NoLeverRequested,
    C9QueryInvalid,
    C9CandidateInvalid {
        index: usize,
    },
    C9PerCategoryInvalid,
    FilterInvalid,
    FilterRequiredMissing {
        missing: usize,
        first_index: usize,
    },
    TruncateInvalid,
    SchemaToolInvalid {
        index: usize,
    },
    PayloadMissing,
    ToonOptionsInvalid,
}

impl Refusal {
    crate::engine::every_variant!(Refusal:
        BodyTooLarge { cap }, BodyNotUtf8, MalformedBody, BodyNotObject, UnknownField,
        NoLeverRequested, C9QueryInvalid, C9CandidateInvalid { index }, C9PerCategoryInvalid,
        FilterInvalid, FilterRequiredMissing { missing, first_index }, TruncateInvalid,
        SchemaToolInvalid { index }, PayloadMissing, ToonOptionsInvalid,
    );
}

impl From<MissingRequired> for Refusal {
    fn from(missing: MissingRequired) -> Self {
        Refusal::FilterRequiredMissing {
            missing: missing.missing,
            first_index: missing.first_index,
        }
    }
}

impl ClosedError for Refusal {
    fn code(&self) -> &'static str {
        match self {
            Refusal::BodyTooLarge { .. } => "CAP-EXCEEDED:body_bytes",
            Refusal::BodyNotUtf8 => "body_not_utf8",
            Refusal::MalformedBody => "malformed_body",
            Refusal::BodyNotObject => "body_not_object",
            Refusal::UnknownField => "unknown_field",
            Refusal::NoLeverRequested => "no_lever_requested",
            Refusal::C9QueryInvalid => "c9_query_invalid",
            Refusal::C9CandidateInvalid { .. } => "c9_candidate_invalid",
            Refusal::C9PerCategoryInvalid => "c9_per_category_invalid",
            Refusal::FilterInvalid => "filter_invalid",
            Refusal::FilterRequiredMissing { .. } => "filter_required_missing",
            Refusal::TruncateInvalid => "truncate_invalid",
            Refusal::SchemaToolInvalid { .. } => "schema_tool_invalid",
            Refusal::PayloadMissing => "payload_missing",
            Refusal::ToonOptionsInvalid => "toon_options_invalid",
        }
    }

    fn status(&self) -> u16 {
        match self {
            Refusal::BodyTooLarge { .. } => 413,
            Refusal::FilterRequiredMissing { .. } => 422,
            _ => 400,
        }
    }

    fn message(&self) -> &'static str {
        match self {
            Refusal::BodyTooLarge { .. } => "The request body exceeds this op's byte cap; nothing was read past the cap.",
            Refusal::BodyNotUtf8 => "The request body is not valid UTF-8.",
            Refusal::MalformedBody => "The request body is not valid JSON (numbers must fit a double; strings must be valid Unicode).",
            Refusal::BodyNotObject => "The request body must be a JSON object.",
            Refusal::UnknownField => "The request carries a member the token-opt/v1 input contract does not define.",
            Refusal::NoLeverRequested => "Name at least one lever: c9, filter, truncate or schema.",
            Refusal::C9QueryInvalid => "c9.query must be a string when present.",
            Refusal::C9CandidateInvalid { .. } => "c9.candidates must be an array of objects with string id, string category, finite number score and string text; the figure names the first bad position.",
            Refusal::C9PerCategoryInvalid => "c9.per_category must map category names to objects with an optional non-negative integer top_k and an optional number cutoff.",
            Refusal::FilterInvalid => "filter needs response (a JSON object), allowed (an array of strings) and optionally required (an array of strings).",
            Refusal::FilterRequiredMissing { .. } => "Required fields are missing from the response; nothing is filtered silently. The figures give how many and the position of the first in required.",
            Refusal::TruncateInvalid => "truncate needs blocks (an array of strings) and max_chars (a non-negative integer).",
            Refusal::SchemaToolInvalid { .. } => "schema.tools must be an array of objects with string name, optional string full and slim, and optional non-negative integer detail_fetches; the figure names the first bad position.",
            Refusal::PayloadMissing => "The body must carry payload: the JSON value to encode.",
            Refusal::ToonOptionsInvalid => "delimiter must be \",\", \"\\t\" or \"|\"; indent_size an integer from 1 to 8.",
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        match *self {
            Refusal::BodyTooLarge { cap } => vec![("cap_bytes", cap as u64)],
            Refusal::C9CandidateInvalid { index } => vec![("candidate_index", index as u64)],
            Refusal::FilterRequiredMissing {
                missing,
                first_index,
            } => {
                vec![
                    ("missing_required", missing as u64),
                    ("first_missing_index", first_index as u64),
                ]
            }
            Refusal::SchemaToolInvalid { index } => vec![("tool_index", index as u64)],
            Refusal::ToonOptionsInvalid => vec![("max_indent_size", MAX_INDENT_SIZE)],
            _ => Vec::new(),
        }
    }
}
