//! Free validation of a request body against the contract's inputSchema and limits, in a fixed
//! order so the same body always gets the same refusal:
//!
//! 1. body bytes > `limits.inputBytes` → INPUT_LIMIT;
//! 2. not UTF-8 → INVALID_UNICODE;
//! 3. the JSON text: syntax → MALFORMED_JSON, values / depth over the limits → COMPLEXITY_LIMIT
//!    (whichever the reader meets first);
//! 4. an unsafe key anywhere → UNSAFE_KEY; then a lone surrogate anywhere → INVALID_UNICODE;
//! 5. the inputSchema, member by member in the order root → sources → candidates → budgetUnits →
//!    reservedUnits → deduplicate. Bounds the contract's `limits` block also names (sources count,
//!    candidates count, budgetUnits) → INPUT_LIMIT; every other schema failure → SCHEMA_VIOLATION;
//! 6. duplicate source ids or duplicate candidate ids → DUPLICATE_ID;
//! 7. the sum of `end − start` over candidates with end > start above
//!    `limits.candidateSpanCharacters` → EVALUATION_LIMIT.
//!
//! JSON Schema semantics as JavaScript validators apply them: `integer` is any number with no
//! fractional part (`5.0`, `5e0`), string lengths count code points, defaults fill absent members.

use super::limits;
use super::refusal::{Limit, Refusal};
use super::{Candidate, Request, Source};
use crate::engine::jsjson::{self, Hazards, Limits, ReadError, Value as JsonValue};
use std::collections::BTreeSet;

const ID_MAX_CODE_POINTS: usize = 80;
const TEXT_MAX_CODE_POINTS: usize = 90_000;
const OFFSET_MAX: f64 = 90_000.0;
const COST_MAX: f64 = 1_000_000.0;
const PRIORITY_MAX: f64 = 100.0;
const RESERVED_MAX: f64 = 1_000_000.0;

/// The contract's limits as the reader applies them: every value (root = 1) has a depth.
const READER_LIMITS: Limits = Limits {
    max_bytes: limits::INPUT_BYTES,
    max_nodes: limits::JSON_NODES,
    max_depth: limits::JSON_DEPTH,
    scalars_have_depth: true,
};

/// Validates `body` and returns the typed request (schema defaults applied).
pub fn validate(body: &[u8]) -> Result<Request, Refusal> {
    let mut hazards = Hazards::default();
    let (root, facts) =
        jsjson::read_bytes(body, READER_LIMITS, &mut hazards).map_err(|e| match e {
            ReadError::TooLarge => Refusal::InputLimit(Limit::InputBytes),
            ReadError::NotUtf8 => Refusal::InvalidUnicode,
            ReadError::Syntax => Refusal::MalformedJson,
            ReadError::TooManyNodes => Refusal::ComplexityLimit(Limit::JsonNodes),
            ReadError::TooDeep => Refusal::ComplexityLimit(Limit::JsonDepth),
        })?;
    if hazards.unsafe_key {
        return Err(Refusal::UnsafeKey);
    }
    if hazards.lone_surrogate {
        return Err(Refusal::InvalidUnicode);
    }

    let JsonValue::Object(members) = &root else {
        return Err(Refusal::SchemaViolation);
    };
    only_known_keys(
        members,
        &[
            "sources",
            "candidates",
            "budgetUnits",
            "reservedUnits",
            "deduplicate",
        ],
    )?;
    let sources = sources(root.member("sources"))?;
    let candidates = candidates(root.member("candidates"))?;
    let budget_units = match root.member("budgetUnits") {
        Some(JsonValue::Number(x)) if is_integer(*x) && *x > limits::BUDGET_UNITS as f64 => {
            return Err(Refusal::InputLimit(Limit::BudgetUnits))
        }
        value => integer(value, 0.0, limits::BUDGET_UNITS as f64)?,
    };
    let reserved_units = match root.member("reservedUnits") {
        None => 0,
        value => integer(value, 0.0, RESERVED_MAX)?,
    };
    let deduplicate = match root.member("deduplicate") {
        None => true,
        Some(JsonValue::Bool(b)) => *b,
        Some(_) => return Err(Refusal::SchemaViolation),
    };

    let mut source_ids = BTreeSet::new();
    if !sources.iter().all(|s| source_ids.insert(s.id.as_str())) {
        return Err(Refusal::DuplicateId);
    }
    let mut candidate_ids = BTreeSet::new();
    if !candidates
        .iter()
        .all(|c| candidate_ids.insert(c.id.as_str()))
    {
        return Err(Refusal::DuplicateId);
    }
    let span_characters: u64 = candidates
        .iter()
        .map(|c| u64::from(c.end.saturating_sub(c.start)))
        .sum();
    if span_characters > limits::CANDIDATE_SPAN_CHARACTERS {
        return Err(Refusal::EvaluationLimit(Limit::CandidateSpanCharacters));
    }

    Ok(Request {
        sources,
        candidates,
        budget_units,
        reserved_units,
        deduplicate,
        input_bytes: body.len(),
        json_nodes: facts.nodes,
        json_depth: facts.depth,
        span_characters,
    })
}

fn only_known_keys(members: &[(Vec<u16>, JsonValue)], known: &[&str]) -> Result<(), Refusal> {
    let all_known = members.iter().all(|(key, _)| {
        known
            .iter()
            .any(|name| key.iter().copied().eq(name.encode_utf16()))
    });
    if all_known {
        Ok(())
    } else {
        Err(Refusal::SchemaViolation)
    }
}

fn is_integer(x: f64) -> bool {
    x.is_finite() && x.fract() == 0.0
}

/// A required integer member within [min, max].
fn integer(value: Option<&JsonValue>, min: f64, max: f64) -> Result<u32, Refusal> {
    match value {
        Some(JsonValue::Number(x)) if is_integer(*x) && *x >= min && *x <= max => Ok(*x as u32),
        _ => Err(Refusal::SchemaViolation),
    }
}

/// A required string member whose code-point length is within [min, max].
fn string(value: Option<&JsonValue>, min: usize, max: usize) -> Result<String, Refusal> {
    let Some(JsonValue::String(units)) = value else {
        return Err(Refusal::SchemaViolation);
    };
    // Lone surrogates were refused before the schema runs, so the units decode.
    let text = String::from_utf16(units).map_err(|_| Refusal::InvalidUnicode)?;
    let code_points = text.chars().count();
    if code_points < min || code_points > max {
        return Err(Refusal::SchemaViolation);
    }
    Ok(text)
}

fn array(
    value: Option<&JsonValue>,
    limit: Limit,
    max_items: usize,
) -> Result<&[JsonValue], Refusal> {
    match value {
        Some(JsonValue::Array(items)) if items.len() > max_items => Err(Refusal::InputLimit(limit)),
        Some(JsonValue::Array(items)) => Ok(items),
        _ => Err(Refusal::SchemaViolation),
    }
}

fn sources(value: Option<&JsonValue>) -> Result<Vec<Source>, Refusal> {
    array(value, Limit::Sources, limits::SOURCES)?
        .iter()
        .map(|item| {
            let JsonValue::Object(members) = item else {
                return Err(Refusal::SchemaViolation);
            };
            only_known_keys(members, &["id", "text"])?;
            let id = string(item.member("id"), 1, ID_MAX_CODE_POINTS)?;
            let text = string(item.member("text"), 0, TEXT_MAX_CODE_POINTS)?;
            Ok(Source {
                id,
                text: text.encode_utf16().collect(),
            })
        })
        .collect()
}

fn candidates(value: Option<&JsonValue>) -> Result<Vec<Candidate>, Refusal> {
    array(value, Limit::Candidates, limits::CANDIDATES)?
        .iter()
        .map(|item| {
            let JsonValue::Object(members) = item else {
                return Err(Refusal::SchemaViolation);
            };
            only_known_keys(
                members,
                &[
                    "id",
                    "sourceId",
                    "start",
                    "end",
                    "costUnits",
                    "priority",
                    "required",
                ],
            )?;
            Ok(Candidate {
                id: string(item.member("id"), 1, ID_MAX_CODE_POINTS)?,
                source_id: string(item.member("sourceId"), 1, ID_MAX_CODE_POINTS)?,
                start: integer(item.member("start"), 0.0, OFFSET_MAX)?,
                end: integer(item.member("end"), 0.0, OFFSET_MAX)?,
                cost_units: integer(item.member("costUnits"), 1.0, COST_MAX)?,
                priority: match item.member("priority") {
                    None => 0,
                    value => integer(value, 0.0, PRIORITY_MAX)?,
                },
                required: match item.member("required") {
                    None => false,
                    Some(JsonValue::Bool(b)) => *b,
                    Some(_) => return Err(Refusal::SchemaViolation),
                },
            })
        })
        .collect()
}
