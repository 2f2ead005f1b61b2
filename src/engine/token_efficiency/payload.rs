//! The payload as token-efficiency/v1 reads it: its canonical form is
//! `JSON.stringify(JSON.parse(payload))` when the payload is JSON, else the payload itself
//! (operation set text-only). Written from the source by the JSON layer's canonical walk, which
//! takes the S-1..S-3 census ([`super::census`]) in the same pass; the tree path is the fallback.
//!
//! Nesting deeper than [`MAX_DEPTH`] is refused ([`Refusal::PayloadTooDeep`]): JavaScript's
//! stringify overflows its stack on very deep values; this engine refuses them instead of guessing.
//! Too-deep text that is not JSON at all is simply text-only, as `JSON.parse` would say.

use super::census::Census;
pub use super::published::MAX_DEPTH;
use super::refusal::Refusal;
use crate::engine::jsjson::{self, Canonical, KeyOrder, Limits, ReadError, Specials, Value};

/// Why a text is not (acceptable) JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    NotJson,
    TooDeep,
}

/// Parses `text` as `JSON.parse` would, containers nested at most [`MAX_DEPTH`] deep. Too-deep
/// JSON is [`ParseError::TooDeep`] only when the whole text is JSON; otherwise it is
/// [`ParseError::NotJson`], as `JSON.parse` would say.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    match jsjson::read(text, Limits::nesting(MAX_DEPTH), &mut ()) {
        Ok((value, _)) => Ok(value),
        Err(ReadError::TooDeep) if jsjson::is_json(text) => Err(ParseError::TooDeep),
        Err(_) => Err(ParseError::NotJson),
    }
}

/// The text every count is over, and what the walk learned of it.
pub struct CanonicalForm {
    /// The canonical form (JSON) or the raw payload (text-only).
    pub text: String,
    /// The payload parsed as JSON (operation set "json").
    pub is_json: bool,
    /// The text is the payload unchanged.
    pub unchanged: bool,
    /// Whether S-1..S-3 provably find nothing in `text`, when the census was asked for and the
    /// walk could tell (it speaks of the canonical text only when the payload was already it).
    pub untouched: Option<bool>,
}

impl CanonicalForm {
    /// A payload found to be canonical JSON already (by the body reader's unescape): itself.
    pub fn already(payload: String) -> CanonicalForm {
        CanonicalForm {
            text: payload,
            is_json: true,
            unchanged: true,
            untouched: None,
        }
    }
}

/// The canonical form of `payload`. `specials`: the offsets of its `"`, `\` and control bytes
/// when the body reader recorded them (string contents are then stepped over, not scanned).
pub fn canonical_form(
    payload: String,
    specials: Option<&[u32]>,
    take_census: bool,
) -> Result<CanonicalForm, Refusal> {
    let specials = match specials {
        Some(offsets) => Specials::Known { offsets, next: 0 },
        None => Specials::Scan,
    };
    // The budget op's walk takes the census (through a `dyn` observer); the pre-check's walk needs
    // none and is the walk observed by nobody, with no observer call per value (its own
    // instantiation of the walk: a few KB of code for the pre-check's one pass).
    let mut census = take_census.then(|| Census::new(payload.len()));
    let walked = match census.as_mut() {
        Some(census) => jsjson::fast_canonical_observed(&payload, specials, MAX_DEPTH, census),
        None => jsjson::fast_canonical_unobserved(&payload, specials, MAX_DEPTH),
    };
    let (text, is_json, unchanged) = match walked {
        Some(Canonical::Same) => (payload, true, true),
        Some(Canonical::Rewritten(canonical)) => (canonical, true, false),
        None => match parse(&payload) {
            Ok(value) => (jsjson::to_string(&value, KeyOrder::Insertion), true, false),
            Err(ParseError::TooDeep) => return Err(Refusal::PayloadTooDeep),
            Err(ParseError::NotJson) => (payload, false, true),
        },
    };
    Ok(CanonicalForm {
        untouched: census
            .filter(|_| is_json && unchanged)
            .map(|census| census.untouched()),
        text,
        is_json,
        unchanged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_bounded() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(parse(&deep), Err(ParseError::TooDeep));
        let deep_object = format!(
            "{}1{}",
            "{\"a\" : [".repeat(MAX_DEPTH),
            "] }".repeat(MAX_DEPTH)
        );
        assert_eq!(parse(&deep_object), Err(ParseError::TooDeep));
        for broken in [
            format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH)),
            format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 2)),
            format!("{}1,]{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH)),
            format!(
                "{}{{\"a\"}}{}",
                "[".repeat(MAX_DEPTH + 1),
                "]".repeat(MAX_DEPTH + 1)
            ),
        ] {
            assert_eq!(parse(&broken), Err(ParseError::NotJson));
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(jsjson::fast_canonical(&deep, MAX_DEPTH), None);
        assert!(matches!(
            canonical_form(deep, None, false),
            Err(Refusal::PayloadTooDeep)
        ));
    }
}
