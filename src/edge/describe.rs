//! Self-description generated from the route table: the `GET /` index, `/llms.txt` (rendered from
//! the index value itself, so its routes, prices and limits cannot differ from it) and the OpenAPI
//! 3.1 document.

use crate::edge::routes::{Handler, Route, Verb, ROUTES};
use crate::engine::allowance::Limits;
use crate::engine::sign::ReportSigner;
use serde_json::{json, Map, Value};

/// Service name and version as published.
pub const SERVICE: &str = "context-meter";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

fn price_label(units: u64) -> String {
    format!("${}.{:06}", units / 1_000_000, units % 1_000_000)
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_owned()
}

/// The pack's MPP route (the contract's second rail).
fn is_mpp(route: &Route) -> bool {
    route.path == crate::engine::payment::mpp::PATH
}

fn access(
    route: &Route,
    price_of: &dyn Fn(crate::edge::routes::PaidOp) -> u64,
    free_limits: Limits,
) -> Value {
    match route.handler {
        Handler::Paid(op) if is_mpp(route) => {
            let units = price_of(op);
            json!({"kind": "paid", "usdc_units": units, "label": price_label(units), "protocol": "MPP: Payment HTTP auth, method tempo, intent charge, push mode (TIP-20, 6 decimals)"})
        }
        Handler::Paid(op) => {
            let units = price_of(op);
            json!({"kind": "paid", "usdc_units": units, "label": price_label(units), "protocol": "x402 v2 exact (Solana USDC)"})
        }
        Handler::Free(_) => json!({"kind": "free-tier", "per_day": free_limits.per_day,
                                   "min_interval_ms": free_limits.min_interval_ms}),
        _ => json!({"kind": "free"}),
    }
}

/// The `GET /` index, with the prices and free-tier limits in force.
pub fn index(
    signer: &ReportSigner,
    price_of: &dyn Fn(crate::edge::routes::PaidOp) -> u64,
    free_limits: Limits,
) -> Value {
    let families: Vec<Value> = crate::edge::routes::Family::ALL
        .iter()
        .map(|f| {
            let routes: Vec<Value> = ROUTES
                .iter()
                .filter(|r| {
                    matches!(r.handler, Handler::Document(x) | Handler::Free(x) if x == *f)
                        || matches!(r.handler, Handler::Paid(op) if op.family() == *f)
                })
                .map(|r| {
                    json!({"method": r.verb.as_str(), "path": r.path, "summary": r.summary, "access": access(r, price_of, free_limits)})
                })
                .collect();
            json!({"family": f.id(), "criteria_id": f.criteria_id(), "routes": routes})
        })
        .collect();
    json!({
        "service": SERVICE,
        "version": VERSION,
        "what": "Mechanical, model-free context operations for AI agents, per call over x402. Nothing submitted is retained.",
        "families": families,
        "signing": {"alg": "Ed25519", "public_key": signer.public_key_b64(), "key_id": signer.key_id(),
                    "signed_bytes": "RFC 8785 JCS of the response body without its signature member"},
        "links": {"llms_txt": "/llms.txt", "openapi": "/openapi.json", "metrics": "/metrics"}
    })
}

/// `GET /llms.txt`: the index as Markdown in the llmstxt.org layout (title, summary, then sections
/// of links), short enough for an agent to read in one go. Everything route-specific is read from
/// `index`, the value `GET /` answers.
pub fn llms_txt(index: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut out = format!(
        "# {}\n\n> {} Every figure is an exact cl100k_base count under a published rule, and every \
         report is signed. Version {}.\n\n## Operations\n",
        text(&index["service"]),
        text(&index["what"]),
        text(&index["version"]),
    );
    for family in index["families"].as_array().into_iter().flatten() {
        out.push_str(&format!("\n### {}\n\n", text(&family["criteria_id"])));
        for route in family["routes"].as_array().into_iter().flatten() {
            let access = &route["access"];
            let price = match access["kind"].as_str() {
                Some("paid") => format!(
                    "paid, {} ({} USDC base units), {}",
                    text(&access["label"]),
                    access["usdc_units"],
                    text(&access["protocol"])
                ),
                Some("free-tier") => format!(
                    "free tier, {} a UTC day per wallet, {} ms apart",
                    access["per_day"], access["min_interval_ms"]
                ),
                _ => "free".to_owned(),
            };
            out.push_str(&format!(
                "- [{} {}]({}): {}. {}\n",
                text(&route["method"]),
                text(&route["path"]),
                text(&route["path"]),
                price,
                text(&route["summary"])
            ));
        }
    }
    out.push_str(&format!(
        "\n## Paying\n\n\
         - A paid route without `PAYMENT-SIGNATURE` answers 402 with `PAYMENT-REQUIRED` (base64 JSON, x402 v2, \
         scheme `exact`): pay one entry of `accepts` with a stock x402 client and send the same request again.\n\
         - The pack also answers over MPP at `/v1/mpp/context-budget-pack`: 402 with `WWW-Authenticate: Payment` \
         (method `tempo`, intent `charge`, push mode only); pay with the stock `mppx` client, which broadcasts a \
         TIP-20 `transferWithMemo` and sends `Authorization: Payment`; the answer carries `Payment-Receipt`. \
         Refusals there are `application/problem+json`.\n\
         - Send `Idempotency-Key` (16-128 of `[A-Za-z0-9_-]`) on every paid call, and retry only with the \
         identical key, body and `PAYMENT-SIGNATURE`. On 409 `PAYMENT_UNCERTAIN` never pay again under that \
         key: retry after `Retry-After`. The served documents list every payment state under `payment`.\n\
         - Free checks name the caller's wallet: `caller` in the body where the input has one, else the \
         `X-Caller` header. Malformed input is refused free, before any allowance or payment is touched.\n\
         \n## Verifying a report\n\n\
         - Ed25519 over the RFC 8785 (JCS) bytes of the body without its `signature` member; the public key \
         is `signing.public_key` at [GET /](/) (key id `{}`). The pack carries the same signature in its \
         `Report-Signature` header instead.\n\
         \n## Optional\n\n\
         - [OpenAPI 3.1](/openapi.json): every route, its headers and refusals.\n\
         - [Metrics](/metrics): counts by route and outcome only. Nothing submitted is retained anywhere.\n",
        text(&index["signing"]["key_id"])
    ));
    out
}

fn error_schema() -> Value {
    json!({"type": "object", "required": ["code", "message"],
           "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                          "payment": {"type": "string"}},
           "additionalProperties": {"type": "integer"}})
}

fn operation(route: &Route) -> Value {
    let mut responses = Map::new();
    match route.handler {
        Handler::Metrics => {
            responses.insert("200".into(), json!({"description": "Prometheus text", "content": {"text/plain": {"schema": {"type": "string"}}}}));
        }
        Handler::LlmsTxt => {
            responses.insert("200".into(), json!({"description": "Markdown for agents (llmstxt.org layout)", "content": {"text/markdown": {"schema": {"type": "string"}}}}));
        }
        Handler::Index | Handler::OpenApi | Handler::Document(_) => {
            responses.insert("200".into(), json!({"description": "JSON document", "content": {"application/json": {"schema": {"type": "object"}}}}));
        }
        Handler::Free(_) | Handler::Paid(_) => {
            responses.insert("200".into(), json!({"description": "Signed report", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignedReport"}}}}));
            for (code, what) in [
                (
                    "400",
                    "Free validation refusal (closed code, static message)",
                ),
                ("413", "Body over the route's byte cap"),
                (
                    "415",
                    "Content-Type is not application/json, or Content-Encoding is not identity",
                ),
            ] {
                responses.insert(code.into(), json!({"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Refusal"}}}}));
            }
            let paid_402 = if is_mpp(route) {
                "Payment required, or the credential was refused: WWW-Authenticate: Payment carries a fresh challenge (method tempo, intent charge, push); body application/problem+json"
            } else if matches!(route.handler, Handler::Paid(_)) {
                "Payment required: PAYMENT-REQUIRED header carries the x402 v2 challenge"
            } else {
                "Free allowance spent or call too early: PAYMENT-REQUIRED carries the paid route's challenge"
            };
            responses.insert("402".into(), json!({"description": paid_402}));
            if is_mpp(route) {
                for (code, what) in [
                    ("409", "application/problem+json: mpp_transaction_not_found (Retry-After; retry the same credential, never pay again), IDEMPOTENCY_CONFLICT, INVALID_RETRY_INPUT, payment_proof_conflict, payment_in_progress (Retry-After), payment_replayed (no receipt on errors)"),
                    ("429", "application/problem+json: INVALID_RETRY_AFTER or payment_rate_limited, with Retry-After"),
                    ("503", "application/problem+json: payment_config_invalid, mpp_chain_mismatch, mpp_rpc_unavailable or payment_state_unavailable: nothing delivered, the credential stays usable"),
                ] {
                    responses.insert(code.into(), json!({"description": what}));
                }
            } else if matches!(route.handler, Handler::Paid(_)) {
                // The payment states' answers (ARCHITECTURE §4; `payment` in each served document).
                for (code, what) in [
                    ("409", "PAYMENT_UNCERTAIN (Retry-After; retry identically, never pay again), IDEMPOTENCY_CONFLICT, INVALID_RETRY_INPUT (pack), payment_proof_conflict, payment_in_progress (Retry-After), payment_replayed (original PAYMENT-RESPONSE)"),
                    ("429", "INVALID_RETRY_AFTER or payment_rate_limited (per key or wallet), with Retry-After"),
                    ("503", "payment_config_invalid, payment_facilitator_unavailable or payment_state_unavailable: nothing charged"),
                ] {
                    responses.insert(code.into(), json!({"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Refusal"}}}}));
                }
            }
        }
    }
    responses.insert("404".into(), json!({"description": "NOT COVERED", "content": {"text/plain": {"schema": {"type": "string", "const": "NOT COVERED"}}}}));
    let mut op = json!({"summary": route.summary, "operationId": operation_id(route), "responses": responses});
    if route.verb == Verb::Post {
        op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {"type": "object"}}}});
    }
    if is_mpp(route) {
        op["parameters"] = json!([
            {"name": "Authorization", "in": "header", "required": false, "schema": {"type": "string"}, "description": "Payment credential: `Payment` + base64url JSON {challenge, payload: {type: hash, hash}, source}"},
            {"name": "Idempotency-Key", "in": "header", "required": true, "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{16,128}$"}}
        ]);
        op["responses"]["200"]["headers"] = json!({"Payment-Receipt": {"schema": {"type": "string"}, "description": "base64url JSON {method: tempo, reference: tx hash, status: success, timestamp}"}});
    } else if matches!(route.handler, Handler::Paid(_)) {
        op["parameters"] = json!([
            {"name": "PAYMENT-SIGNATURE", "in": "header", "required": false, "schema": {"type": "string"}, "description": "x402 v2 payment payload (base64 JSON)"},
            {"name": "Idempotency-Key", "in": "header", "required": true, "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{16,128}$"}}
        ]);
    }
    op
}

fn operation_id(route: &Route) -> String {
    let mut id = route.verb.as_str().to_ascii_lowercase();
    for part in route
        .path
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        id.push('_');
        id.push_str(part);
    }
    if route.path == "/" {
        id.push_str("_index");
    }
    id
}

/// The OpenAPI 3.1 document of every route in the table.
pub fn openapi() -> Value {
    let mut paths = Map::new();
    for route in ROUTES {
        let entry = paths
            .entry(route.path.to_owned())
            .or_insert_with(|| json!({}));
        entry[route.verb.as_str().to_ascii_lowercase()] = operation(route);
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": SERVICE, "version": VERSION,
                 "description": "Mechanical, model-free context operations sold per call over x402. Unknown paths and methods answer 404 NOT COVERED."},
        "paths": paths,
        "components": {"schemas": {
            "Refusal": error_schema(),
            "SignedReport": {"type": "object", "required": ["signature"], "properties": {
                "signature": {"type": "object", "required": ["alg", "key_id", "sig"], "properties": {
                    "alg": {"const": "Ed25519"}, "key_id": {"type": "string"}, "sig": {"type": "string", "contentEncoding": "base64"}}}}}
        }}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_lists_exactly_the_route_table() {
        let doc = openapi();
        let paths = doc["paths"].as_object().unwrap();
        let mut listed = 0;
        for (path, ops) in paths {
            for verb in ops.as_object().unwrap().keys() {
                let v = if verb == "get" { Verb::Get } else { Verb::Post };
                assert!(
                    crate::edge::routes::find(v, path).is_some(),
                    "{verb} {path}"
                );
                listed += 1;
            }
        }
        assert_eq!(listed, ROUTES.len());
    }

    #[test]
    fn index_prints_the_free_tier_limits_in_force() {
        let signer = ReportSigner::from_seed(&[7; 32]);
        let limits = Limits {
            per_day: 37,
            min_interval_ms: 250,
        };
        let index = index(&signer, &|op| op.default_price_units(), limits);
        let mut free_routes = 0;
        for family in index["families"].as_array().unwrap() {
            for route in family["routes"].as_array().unwrap() {
                if route["access"]["kind"] == "free-tier" {
                    assert_eq!(route["access"]["per_day"], 37, "{}", route["path"]);
                    assert_eq!(route["access"]["min_interval_ms"], 250, "{}", route["path"]);
                    free_routes += 1;
                }
            }
        }
        let routed = ROUTES
            .iter()
            .filter(|r| matches!(r.handler, Handler::Free(_)))
            .count();
        assert_eq!(free_routes, routed);
        assert!(routed > 0);
    }

    /// `/llms.txt` is rendered from the index: every route of the table appears with the price or
    /// limits `GET /` states for it, and it stays short enough to read in one go.
    #[test]
    fn llms_txt_lists_every_route_with_the_index_access() {
        let signer = ReportSigner::from_seed(&[7; 32]);
        let limits = Limits {
            per_day: 37,
            min_interval_ms: 250,
        };
        let price = |op: crate::edge::routes::PaidOp| op.default_price_units() + 1;
        let index = index(&signer, &price, limits);
        let text = llms_txt(&index);
        assert!(text.starts_with("# context-meter\n\n> "));
        let mut families = 0;
        for family in index["families"].as_array().unwrap() {
            families += 1;
            for route in family["routes"].as_array().unwrap() {
                let path = route["path"].as_str().unwrap();
                let line = text
                    .lines()
                    .find(|l| l.contains(&format!("]({path}):")))
                    .unwrap_or_else(|| panic!("{path} missing"));
                match route["access"]["kind"].as_str().unwrap() {
                    "paid" => {
                        let units = route["access"]["usdc_units"].as_u64().unwrap();
                        assert!(
                            line.contains(&format!("({units} USDC base units)")),
                            "{line}"
                        );
                        assert!(line.contains(route["access"]["label"].as_str().unwrap()));
                    }
                    "free-tier" => assert!(line.contains("37 a UTC day"), "{line}"),
                    _ => assert!(line.contains(": free."), "{line}"),
                }
            }
        }
        assert_eq!(families, crate::edge::routes::Family::ALL.len());
        assert!(text.contains(signer.key_id()));
        let documented = ROUTES
            .iter()
            .filter(|r| {
                !matches!(
                    r.handler,
                    Handler::Index | Handler::LlmsTxt | Handler::OpenApi | Handler::Metrics
                )
            })
            .count();
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("- [GET /") || l.starts_with("- [POST /"))
                .count(),
            documented
        );
        let tokens = crate::engine::tokenizer::count(&text);
        assert!(tokens < 2_000, "llms.txt is {tokens} tokens");
        eprintln!("llms.txt: {} bytes, {tokens} cl100k tokens", text.len());
        if std::env::var_os("PRINT_LLMS_TXT").is_some() {
            eprintln!("{text}");
        }
    }

    #[test]
    fn price_labels() {
        assert_eq!(price_label(20_000), "$0.02");
        assert_eq!(price_label(5_000), "$0.005");
        assert_eq!(price_label(1_000_000), "$1");
    }
}
