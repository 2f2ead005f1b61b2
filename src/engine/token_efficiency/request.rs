//! The request: free validation of the raw body into a [`Request`] (fields, figures, and the
//! payload's canonical form with its census, [`super::payload`]). Nothing is counted or charged
//! here; no refusal carries any part of the body.

use super::body;
use super::census::Census;
use super::ops::OpSet;
use super::payload;
use super::published::{BODY_CAP, MAX_TOKENS_FIGURE};
use super::refusal::Refusal;
use crate::engine::jsjson::{char_count, has_lone_surrogate, Observer, Value as JsValue};
use serde_json::Value;

/// A validated request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The free pre-check's caller wallet (a Solana or an EVM address), when given.
    pub caller: Option<String>,
    pub budget_tokens: u64,
    pub reserve_tokens: u64,
    pub keep_fields: Vec<String>,
    /// Size of the request body in bytes.
    pub body_bytes: u64,
    /// Characters (code points) of the payload string as submitted.
    pub payload_chars: u64,
    /// The canonical form (json) or the raw payload (text-only): all counts are over this text.
    pub(super) canonical: String,
    /// Characters (code points) of `canonical`.
    pub(super) canonical_chars: u64,
    /// Whether the payload parsed as JSON (operation set "json").
    pub(super) is_json: bool,
    /// Whether S-1..S-3 provably find nothing in `canonical` ([`census`]), when the parse was
    /// asked for it ([`parse_for_budget`]) and its walk could tell.
    pub(super) untouched: Option<bool>,
}

impl Request {
    /// Effective budget = budget_tokens − reserve_tokens (always ≥ 1 after [`parse`]).
    pub fn effective_budget(&self) -> u64 {
        self.budget_tokens - self.reserve_tokens
    }

    /// The text every count is over: the canonical form (json) or the raw payload (text-only).
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// The operation set the payload admits.
    pub fn operation_set(&self) -> OpSet {
        if self.is_json {
            OpSet::Json
        } else {
            OpSet::TextOnly
        }
    }
}

const BODY_MEMBERS: [&str; 5] = [
    "payload",
    "budget_tokens",
    "keep_fields",
    "reserve_tokens",
    "caller",
];

/// A body member as validation reads it, whichever parser produced it.
enum Field {
    String(String),
    Number(f64),
    Array(Vec<Field>),
    Other,
}

impl Field {
    fn from_serde(value: Value) -> Field {
        match value {
            Value::String(text) => Field::String(text),
            // Integers convert with round-to-nearest, as JavaScript reads the same literal.
            Value::Number(n) => n.as_f64().map_or(Field::Other, Field::Number),
            Value::Array(items) => Field::Array(items.into_iter().map(Field::from_serde).collect()),
            _ => Field::Other,
        }
    }

    /// Only for values already checked free of lone surrogates.
    fn from_js(value: JsValue) -> Field {
        match value {
            JsValue::String(units) => {
                String::from_utf16(&units).map_or(Field::Other, Field::String)
            }
            JsValue::Number(x) => Field::Number(x),
            JsValue::Array(items) => Field::Array(items.into_iter().map(Field::from_js).collect()),
            _ => Field::Other,
        }
    }
}

/// The body's members, duplicates resolved as `JSON.parse` does (last value wins). The common body
/// takes serde_json's fast path; anything it rejects (a lone surrogate escape, a number out of
/// range, nesting past its limit, not JSON at all) is re-read by the JavaScript-exact parser, which
/// decides the refusal.
fn body_members(text: &str) -> Result<Vec<(String, Field)>, Refusal> {
    if let Ok(Value::Object(members)) = serde_json::from_str::<Value>(text) {
        return Ok(members
            .into_iter()
            .map(|(k, v)| (k, Field::from_serde(v)))
            .collect());
    }
    let members = match payload::parse(text).map_err(|_| Refusal::BodyNotJson)? {
        JsValue::Object(members) => members,
        _ => return Err(Refusal::BodyNotObject),
    };
    if members
        .iter()
        .any(|(k, v)| has_lone_surrogate(k) || v.contains_lone_surrogate())
    {
        return Err(Refusal::BodyLoneSurrogate);
    }
    Ok(members
        .into_iter()
        .map(|(k, v)| (String::from_utf16_lossy(&k), Field::from_js(v)))
        .collect())
}

/// Free validation of the raw body bytes (nothing is counted or charged here).
pub fn parse(body: &[u8]) -> Result<Request, Refusal> {
    parse_with(body, true, false)
}

/// [`parse`] for the budget op: the canonical check's walk also takes the census of S-1..S-3
/// ([`super::census::Census`]), so the op needs no walk of its own when they find nothing.
pub fn parse_for_budget(body: &[u8]) -> Result<Request, Refusal> {
    parse_with(body, true, true)
}

/// [`parse`] without the fast body path: the general path alone (tests and the fuzz harness
/// compare the two).
pub fn parse_general(body: &[u8]) -> Result<Request, Refusal> {
    parse_with(body, false, false)
}

fn parse_with(body: &[u8], fast: bool, take_census: bool) -> Result<Request, Refusal> {
    if body.len() > BODY_CAP {
        return Err(Refusal::BodyOverCap);
    }
    // The common body takes the fast path (one pass over the payload, which also tells the
    // canonical check where its quotes, backslashes and control bytes are); anything else, and
    // every refusal, takes the general one.
    // The fast path's unescape also checks the payload canonical, taking the census as it goes
    // when asked (one pass; a payload found canonical needs no walk).
    let mut census = take_census.then(|| Census::new(body.len()));
    let read = fast
        .then(|| {
            let observer = census.as_mut().map(|c| c as &mut dyn Observer);
            body::read_observed(body, Some(payload::MAX_DEPTH), observer)
        })
        .flatten();
    let (mut members, specials, payload_ascii, payload_canonical) = match read {
        Some(fast) => {
            let members = fast
                .members
                .into_iter()
                .map(|(k, v)| (k, Field::from_serde(v)))
                .collect();
            let canonical = fast.payload_canonical;
            (members, Some(fast.specials), fast.payload_ascii, canonical)
        }
        None => {
            let text = std::str::from_utf8(body).map_err(|_| Refusal::BodyNotUtf8)?;
            (body_members(text)?, None, false, false)
        }
    };
    if members
        .iter()
        .any(|(k, _)| !BODY_MEMBERS.contains(&k.as_str()))
    {
        return Err(Refusal::BodyUnknownField);
    }
    let mut take = |name: &str| {
        members
            .iter()
            .position(|(k, _)| k == name)
            .map(|at| members.swap_remove(at).1)
    };
    let payload = match take("payload") {
        None => return Err(Refusal::PayloadMissing),
        Some(Field::String(text)) => text,
        Some(_) => return Err(Refusal::PayloadNotString),
    };
    let budget_tokens = match take("budget_tokens") {
        None => return Err(Refusal::BudgetMissing),
        Some(Field::Number(x)) => token_figure(x).map_err(|e| match e {
            FigureError::NotPositive => Refusal::BudgetNotPositive,
            FigureError::Fractional => Refusal::BudgetFractional,
            FigureError::TooLarge => Refusal::BudgetTooLarge,
        })?,
        Some(_) => return Err(Refusal::BudgetNotNumber),
    };
    let reserve_tokens = match take("reserve_tokens") {
        None => 0,
        Some(Field::Number(0.0)) => 0,
        Some(Field::Number(x)) => token_figure(x).map_err(|_| Refusal::ReserveInvalid)?,
        Some(_) => return Err(Refusal::ReserveInvalid),
    };
    if reserve_tokens >= budget_tokens {
        return Err(Refusal::ReserveNotBelowBudget);
    }
    let keep_fields = match take("keep_fields") {
        None => Vec::new(),
        Some(Field::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Field::String(path) if !path.is_empty() => Ok(path),
                _ => Err(Refusal::KeepFieldsInvalid),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(Refusal::KeepFieldsInvalid),
    };
    let caller = match take("caller") {
        None => None,
        Some(Field::String(caller)) if crate::engine::wallet::is_wallet_address(&caller) => {
            Some(caller)
        }
        Some(_) => return Err(Refusal::CallerInvalid),
    };
    // An ASCII payload's characters are its bytes (the fast path noticed while unescaping).
    let payload_chars = if payload_ascii {
        payload.len() as u64
    } else {
        char_count(&payload) as u64
    };
    let canonical = if payload_canonical {
        let untouched = census.map(|c| c.untouched_within(payload.len()));
        payload::CanonicalForm {
            untouched,
            ..payload::CanonicalForm::already(payload)
        }
    } else {
        payload::canonical_form(payload, specials.as_deref(), take_census)?
    };
    let canonical_chars = if canonical.unchanged {
        payload_chars
    } else {
        char_count(&canonical.text) as u64
    };
    Ok(Request {
        caller,
        budget_tokens,
        reserve_tokens,
        keep_fields,
        body_bytes: body.len() as u64,
        payload_chars,
        canonical_chars,
        canonical: canonical.text,
        is_json: canonical.is_json,
        untouched: canonical.untouched,
    })
}

enum FigureError {
    NotPositive,
    Fractional,
    TooLarge,
}

/// A positive integer token figure no larger than 2^53, read as JavaScript reads the number.
fn token_figure(x: f64) -> Result<u64, FigureError> {
    if x <= 0.0 {
        Err(FigureError::NotPositive)
    } else if x > MAX_TOKENS_FIGURE as f64 {
        Err(FigureError::TooLarge)
    } else if x.fract() != 0.0 {
        Err(FigureError::Fractional)
    } else {
        Ok(x as u64)
    }
}
