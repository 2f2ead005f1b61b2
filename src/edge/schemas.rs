//! The fixed published schemas the family table names (request bodies: the criteria's input
//! contracts, the pack contract's `inputSchema`; delivered bodies: the pack contract's
//! `outputSchema`), the `signature` member and the one flat refusal shape `{code, message,
//! <figures>}`. A leaf: it reads no route or family; `route_docs` puts them together per route.
//!
//! The criteria state their input contracts in prose; the request schemas here are those texts
//! as JSON Schema (draft 2020-12), no stricter than the free validation that enforces them.

use serde_json::{json, Value};

/// The fixed schemas and examples, kept as JSON text (`schemas.json`): data rather than `json!`
/// code, so they cost the bundle their compressed text only (ARCHITECTURE §8).
const FIXED: &str = include_str!("schemas.json");

thread_local! {
    static FIXED_VALUE: Value = serde_json::from_str(FIXED).unwrap_or(Value::Null);
}

/// One member of `schemas.json` (a unit test holds every name used here present).
pub(crate) fn fixed(path: &[&str]) -> Value {
    FIXED_VALUE.with(|all| path.iter().fold(all, |value, key| &value[*key]).clone())
}

/// The token-efficiency request; the free pre-check's takes the free tier's `caller` too.
pub(crate) fn token_efficiency_request(with_caller: bool) -> Value {
    let mut schema = fixed(&["token_efficiency_request"]);
    if with_caller {
        schema["properties"]["caller"] = fixed(&["wallet"]);
    }
    schema
}

/// The `signature` member of a signed report.
pub fn signature_schema() -> Value {
    fixed(&["signature"])
}

/// The flat refusal body every route answers with: `{code, message, <figures>}`; `payment` says
/// what happened to the money, `paid_route` and `idempotency_key` come with a spent free allowance.
pub fn refusal_schema(codes: &[&'static str]) -> Value {
    json!({
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": {"enum": codes},
            "message": {"type": "string", "description": "Static text: never any part of the request"},
            "payment": {"type": "string"},
            "paid_route": {"type": "string"},
            "idempotency_key": {"type": "string"},
        },
        "additionalProperties": {"type": "integer", "minimum": 0, "description": "Figures: numbers only"},
    })
}
