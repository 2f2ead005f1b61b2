//! What each route publishes, read from the route and family tables: its request schema and
//! example, its delivered body's schema, where its signature goes, its closed refusal codes, and its
//! x402 `bazaar` listing. The OpenAPI document and the discovery declaration both read it.

use crate::edge::error::EdgeError;
use crate::edge::family::{Body, SignatureAt};
use crate::edge::routes::{Handler, Route};
use crate::edge::schemas::{fixed, signature_schema};
use crate::engine::payment::discovery::RouteListing;
use crate::engine::payment::PaymentError;
use crate::engine::ClosedError;
use serde_json::{json, Value};

/// What the table says of a body route's body: its schemas and its parser's published shape.
struct BodyFacts {
    request_schema: fn() -> Value,
    request_example: fn() -> Value,
    report_schema: Option<fn() -> Value>,
}

impl<P> From<&Body<P>> for BodyFacts {
    fn from(body: &Body<P>) -> Self {
        BodyFacts {
            request_schema: body.request_schema,
            request_example: body.request_example,
            report_schema: body.report_schema,
        }
    }
}

fn body_of(handler: Handler) -> Option<BodyFacts> {
    match handler {
        Handler::Free(family) => family.free.as_ref().map(|free| (&free.body).into()),
        Handler::Paid(op, _) => Some((&op.body).into()),
        _ => None,
    }
}

/// JSON Schema of the route's request body (None for the GET routes).
pub fn request_schema(handler: Handler) -> Option<Value> {
    body_of(handler).map(|body| (body.request_schema)())
}

/// A request body that satisfies [`request_schema`] (None for the GET routes).
pub fn request_example(handler: Handler) -> Option<Value> {
    body_of(handler).map(|body| (body.request_example)())
}

/// JSON Schema of the route's delivered body (2xx; also the signed could-not-measure 422).
pub fn report_schema(handler: Handler) -> Value {
    match body_of(handler).and_then(|body| body.report_schema) {
        Some(schema) => schema(),
        None => json!({
            "type": "object",
            "required": ["signature"],
            "properties": {"signature": signature_schema()},
            "description": fixed(&["signed_report_description"]),
        }),
    }
}

/// Whether the route's report is signed in the `Report-Signature` header (the family's published
/// output schema is closed) rather than in a `signature` member.
pub fn signs_in_header(handler: Handler) -> bool {
    handler.reads_body()
        && handler
            .family()
            .is_some_and(|f| f.signature == SignatureAt::Header)
}

fn closed<E: ClosedError>(errors: &[E]) -> Vec<(&'static str, u16)> {
    errors.iter().map(|e| (e.code(), e.status())).collect()
}

/// Every closed refusal `(code, HTTP status)` the route can answer with, sorted, once each.
pub fn refusals(handler: Handler) -> Vec<(&'static str, u16)> {
    let mut codes = if handler.reads_body() {
        closed(&EdgeError::BODY_ROUTE)
    } else {
        closed(&EdgeError::DOCUMENT_ROUTE)
    };
    match handler {
        Handler::Free(family) => {
            codes.extend((family.refusals)());
            codes.extend(closed(&EdgeError::FREE_CHECK));
        }
        Handler::Paid(op, _) => {
            codes.extend((op.family.refusals)());
            codes.extend(closed(&PaymentError::ALL));
            codes.push(("payment_required", 402));
        }
        _ => {}
    }
    codes.sort_unstable();
    codes.dedup();
    codes
}

/// What the paid route publishes for x402 discovery (`bazaar`).
pub fn listing(route: &Route) -> RouteListing {
    RouteListing {
        description: format!("context-meter {}: {}", route.path, route.summary),
        method: route.verb.as_str(),
        body_schema: request_schema(route.handler).unwrap_or_else(|| json!({"type": "object"})),
        body_example: request_example(route.handler).unwrap_or_else(|| json!({})),
        output_schema: report_schema(route.handler),
        headers: vec![("Idempotency-Key", "0123456789abcdef0123456789abcdef")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::family;
    use crate::edge::routes::routes;

    /// Each example passes the route's own free validation (the engine's parse), so the body the
    /// discovery declaration offers an agent is one the route accepts.
    #[test]
    fn every_example_passes_the_routes_free_validation() {
        let mut checked = 0;
        for route in routes() {
            let Some(example) = request_example(route.handler) else {
                continue;
            };
            let bytes = serde_json::to_vec(&example).unwrap();
            let parsed = match route.handler {
                Handler::Free(family) => family.free.as_ref().map(|f| (f.body.parse)(&bytes).err()),
                Handler::Paid(op, _) => Some((op.body.parse)(&bytes).err()),
                _ => None,
            };
            if let Some(Some(refusal)) = parsed {
                panic!("{}: {}", route.path, refusal.code());
            }
            assert!(request_schema(route.handler).is_some(), "{}", route.path);
            checked += 1;
        }
        let posts = routes().iter().filter(|r| r.handler.reads_body()).count();
        assert_eq!(checked, posts);
        assert!(posts > 0);
    }

    /// Every fixed schema the code reads is in `schemas.json`, and the composition envelope's
    /// version there is the engine's.
    #[test]
    fn the_fixed_schemas_are_present_and_current() {
        for name in [
            "wallet",
            "token_efficiency_request",
            "composition_request",
            "levers_request",
            "toon_request",
            "signature",
            "preflight_report",
        ] {
            assert!(fixed(&[name]).is_object(), "{name}");
        }
        for name in ["token_efficiency", "composition", "levers", "toon"] {
            assert!(fixed(&["examples", name]).is_object(), "{name}");
        }
        assert!(fixed(&["signed_report_description"]).is_string());
        let version = Value::from(crate::engine::composition::envelope::ENVELOPE_VERSION);
        let audit = Handler::Paid(&family::COMPOSITION_AUDIT, family::Rail::X402);
        assert_eq!(
            request_schema(audit).unwrap()["properties"]["envelope_version"]["const"],
            version
        );
        assert_eq!(request_example(audit).unwrap()["envelope_version"], version);
    }

    #[test]
    fn codes_are_closed_and_route_specific() {
        let codes = |h| -> Vec<&str> { refusals(h).into_iter().map(|(c, _)| c).collect() };
        let levers_route = Handler::Paid(&family::TOKEN_OPT_LEVERS, family::Rail::X402);
        let levers = codes(levers_route);
        assert!(levers.contains(&"no_lever_requested"));
        assert!(levers.contains(&"PAYMENT_UNCERTAIN"));
        assert!(!levers.contains(&crate::engine::composition::Refusal::RecordRequired.code()));
        let precheck = codes(Handler::Free(&family::TOKEN_EFFICIENCY));
        assert!(precheck.contains(&"free_tier_exhausted"));
        assert!(!precheck.contains(&"no_lever_requested"));
        assert!(!precheck.contains(&"not_covered"));
        assert!(refusals(levers_route).contains(&("PAYMENT_UNCERTAIN", 409)));
    }

    /// Only codes some layer answers with are published: the edge reads no JSON (each family's
    /// parser refuses a malformed body with its own code), so no edge `malformed_body` is listed
    /// where the family has no such code.
    #[test]
    fn no_route_publishes_a_code_nothing_answers_with() {
        let codes = |h| -> Vec<&str> { refusals(h).into_iter().map(|(c, _)| c).collect() };
        for handler in [
            Handler::Paid(&family::BUDGET_PACK_RUN, family::Rail::X402),
            Handler::Free(&family::TOKEN_EFFICIENCY),
            Handler::Paid(&family::TOKEN_EFFICIENCY_BUDGET, family::Rail::X402),
        ] {
            assert!(!codes(handler).contains(&"malformed_body"), "{handler:?}");
        }
    }
}

#[cfg(test)]
mod header_size {
    use super::*;
    use crate::edge::routes::routes;
    use crate::engine::payment::{
        encode_header, payment_required, PaymentConfig, MAX_PAYMENT_HEADER_BYTES,
        MAX_TRANSACTION_BASE64, SOLANA_DEVNET,
    };

    /// A stock client echoes the challenge's `resource` and `extensions` (the bazaar declaration
    /// included) into `PAYMENT-SIGNATURE`: the echo of every paid route's challenge, with the
    /// longest key, a long origin and the largest transaction, fits the header cap.
    #[test]
    fn a_stock_clients_echo_of_every_challenge_fits_the_payment_header_cap() {
        let config = PaymentConfig {
            network: SOLANA_DEVNET.into(),
            asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU".into(),
            pay_to: "GyGKxMyg1p9SsHfm15MkNUu1u9TN2JtTspcdmrtGUdse".into(),
            max_timeout_seconds: 60,
            fee_payer: "AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9".into(),
            cu_price_cap_microlamports: 5_000_000,
            house_wallets: Vec::new(),
            evm: Default::default(),
        };
        let key = "k".repeat(128);
        let mut largest = 0;
        for route in routes()
            .iter()
            .filter(|r| matches!(r.handler, Handler::Paid(..)))
        {
            let url = format!("https://{}.example{}", "x".repeat(200), route.path);
            let required = payment_required(
                &config,
                route.path,
                u64::MAX,
                &key,
                &url,
                &listing(route),
                None,
            );
            let mut extensions = required["extensions"].clone();
            extensions["payment-identifier"]["info"]["id"] = Value::from(key.clone());
            let echo = json!({"x402Version": 2, "resource": required["resource"],
                "accepted": required["accepts"][0],
                "payload": {"transaction": "A".repeat(MAX_TRANSACTION_BASE64)},
                "extensions": extensions});
            let size = encode_header(&echo).len();
            largest = largest.max(size);
            assert!(size <= MAX_PAYMENT_HEADER_BYTES, "{}: {size}", route.path);
        }
        eprintln!("largest echoed PAYMENT-SIGNATURE: {largest} bytes");
    }
}
