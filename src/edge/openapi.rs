//! The OpenAPI 3.1 document of every route in the table: request and delivered body schemas
//! ([`route_docs`], [`schemas`]), the one flat refusal shape per status with that status's closed codes, the
//! headers (Idempotency-Key, PAYMENT-REQUIRED, PAYMENT-SIGNATURE, PAYMENT-RESPONSE, Retry-After,
//! the pack's Report-Signature) and each route's price in force as `x-access` — the same value
//! `GET /` states for the route, so the two cannot differ.

use crate::edge::describe::{access, SERVICE, VERSION};
use crate::edge::family::{PaidOp, Rail};
use crate::edge::routes::{routes, Handler, Route, Verb};
use crate::edge::{route_docs, schemas};
use crate::engine::allowance::Limits;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

fn header(description: &str) -> Value {
    json!({"description": description, "schema": {"type": "string"}})
}

fn payment_required_header() -> Value {
    header("x402 v2 PaymentRequired, base64 JSON: accepts (scheme exact), extensions payment-identifier and bazaar")
}

fn retry_after() -> Value {
    json!({"description": "Seconds to wait before retrying the identical request", "schema": {"type": "integer", "minimum": 1}})
}

fn json_content(schema: Value) -> Value {
    json!({"application/json": {"schema": schema}})
}

fn status_text(status: u16) -> &'static str {
    match status {
        400 => "Free validation refusal: nothing was read as payment, nothing charged",
        402 => "Payment required or refused: PAYMENT-REQUIRED carries the x402 challenge",
        409 => "Idempotency or payment state conflict: never pay again under this key",
        413 => "Over a published cap",
        415 => "Content-Type is not application/json, or Content-Encoding is not identity",
        422 => "Well-formed but refused by the contract",
        429 => "Too many attempts: wait Retry-After",
        500 => "Internal failure: nothing charged",
        _ => "Unavailable: nothing charged; retry later",
    }
}

fn refusal_response(handler: Handler, status: u16, codes: &[&'static str]) -> Value {
    let mut headers = Map::new();
    if status == 402 {
        headers.insert("PAYMENT-REQUIRED".into(), payment_required_header());
    }
    if matches!(status, 409 | 429 | 503) {
        headers.insert("Retry-After".into(), retry_after());
    }
    if status == 409 && matches!(handler, Handler::Paid(..)) {
        headers.insert(
            "PAYMENT-RESPONSE".into(),
            header("On payment_replayed: the original settlement, base64 JSON"),
        );
    }
    let refusal = schemas::refusal_schema(codes);
    // The could-not-measure report of context-composition is answered signed with 422.
    let schema = match (Some(status) == unmeasured_status(handler), codes.is_empty()) {
        (true, true) => route_docs::report_schema(handler),
        (true, false) => json!({"anyOf": [route_docs::report_schema(handler), refusal]}),
        _ => refusal,
    };
    json!({"description": status_text(status), "headers": headers, "content": json_content(schema)})
}

/// The status a body route's family delivers its signed could-not-measure report with, if any.
fn unmeasured_status(handler: Handler) -> Option<u16> {
    handler
        .family()
        .filter(|_| handler.reads_body())
        .and_then(|f| f.unmeasured_status)
}

fn delivered(handler: Handler) -> Value {
    let mut headers = Map::new();
    if route_docs::signs_in_header(handler) {
        headers.insert("Report-Signature".into(), header("base64 of {alg, key_id, sig} JSON: Ed25519 over the RFC 8785 (JCS) bytes of the body as sent"));
    }
    if matches!(handler, Handler::Paid(..)) {
        headers.insert(
            "PAYMENT-RESPONSE".into(),
            header("x402 SettleResponse, base64 JSON"),
        );
    }
    json!({"description": "Signed report", "headers": headers,
           "content": json_content(route_docs::report_schema(handler))})
}

/// The pack's MPP route (the contract's second rail: `Payment` HTTP auth, problem+json refusals).
fn is_mpp(route: &Route) -> bool {
    matches!(route.handler, Handler::Paid(_, Rail::Mpp))
}

fn parameters(route: &Route) -> Value {
    let key = |required: bool, what: &str| {
        json!({"name": "Idempotency-Key", "in": "header", "required": required, "description": what,
               "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{16,128}$"}})
    };
    if is_mpp(route) {
        return json!([
            key(true, "One per operation; the challenge id binds it; retry only with the identical key, body and credential"),
            {"name": "Authorization", "in": "header", "required": false, "schema": {"type": "string"},
             "description": "MPP credential: `Payment` + base64url JSON {challenge, payload: {type: hash, hash}, source}; without it the route answers 402 with WWW-Authenticate: Payment"},
        ]);
    }
    match route.handler {
        Handler::Paid(op, _) if op.family.key.is_contract() => json!([
            key(true, "One per operation; the payment-identifier id must equal it; retry only with the identical key, body and PAYMENT-SIGNATURE"),
            {"name": "PAYMENT-SIGNATURE", "in": "header", "required": false, "schema": {"type": "string"},
             "description": "x402 v2 PaymentPayload, base64 JSON; without it the route answers 402 with the challenge"},
        ]),
        Handler::Paid(..) => json!([
            key(false, "Optional: binds the payment to this key (retry only with the identical key, body and PAYMENT-SIGNATURE); without it the challenge's memo carries a server nonce"),
            {"name": "PAYMENT-SIGNATURE", "in": "header", "required": false, "schema": {"type": "string"},
             "description": "x402 v2 PaymentPayload, base64 JSON; without it the route answers 402 with the challenge"},
        ]),
        Handler::Free(_) => json!([
            key(false, "Bound into the paid route's challenge when the free allowance is spent"),
            {"name": "X-Caller", "in": "header", "required": false, "schema": {"type": "string"},
             "description": "The free tier's wallet where the body has no caller member"},
        ]),
        _ => json!([]),
    }
}

fn operation(route: &Route, price_of: &dyn Fn(&PaidOp) -> u64, free_limits: Limits) -> Value {
    let mut responses = Map::new();
    match route.handler {
        Handler::Metrics => {
            responses.insert("200".into(), json!({"description": "Prometheus text", "content": {"text/plain": {"schema": {"type": "string"}}}}));
        }
        Handler::LlmsTxt => {
            responses.insert("200".into(), json!({"description": "Markdown for agents (llmstxt.org layout)", "content": {"text/markdown": {"schema": {"type": "string"}}}}));
        }
        Handler::Ready => {
            responses.insert(
                "200".into(),
                json!({"description": "Every configured payment rail can take money; D1, Durable Objects and the signing key answer", "content": json_content(json!({"type": "object", "required": ["ready", "rails"]}))}),
            );
            responses.insert(
                "503".into(),
                json!({"description": "Not ready: each check's closed code says which (not_configured, config_invalid, facilitator_unavailable, scheme_unsupported, rpc_unavailable, chain_mismatch, unavailable)", "content": json_content(json!({"type": "object", "required": ["ready", "rails"]}))}),
            );
        }
        Handler::Index | Handler::OpenApi | Handler::WellKnownX402 | Handler::Document(_) => {
            responses.insert(
                "200".into(),
                json!({"description": "JSON document", "content": json_content(json!({"type": "object"}))}),
            );
        }
        Handler::Free(_) | Handler::Paid(..) => {
            responses.insert("200".into(), delivered(route.handler));
        }
        Handler::Mcp => {
            let rpc = json_content(json!({"type": "object", "required": ["jsonrpc"]}));
            responses.insert("200".into(), json!({"description": "JSON-RPC response: a result (a tool's failure or payment required is a result with isError) or a closed error", "content": rpc}));
            responses.insert(
                "202".into(),
                json!({"description": "A notification, accepted; no body"}),
            );
            responses.insert("400".into(), json!({"description": "Not one JSON-RPC request; a stateless request's headers disagree with its body (-32020) or its revision is not served (-32022)", "content": rpc}));
            responses.insert("403".into(), json!({"description": "A browser Origin this server does not serve", "content": rpc}));
            responses.insert(
                "413".into(),
                json!({"description": "Over the endpoint's cap", "content": rpc}),
            );
        }
    }
    let mut by_status: BTreeMap<u16, Vec<&'static str>> = BTreeMap::new();
    for (code, status) in route_docs::refusals(route.handler) {
        by_status.entry(status).or_default().push(code);
    }
    // A paid op's could-not-measure report (composition's R-7..R-9) is delivered signed, unpaid.
    if let (Handler::Paid(..), Some(status)) = (route.handler, unmeasured_status(route.handler)) {
        by_status.entry(status).or_default();
    }
    for (status, codes) in by_status {
        responses.insert(
            status.to_string(),
            refusal_response(route.handler, status, &codes),
        );
    }
    responses.insert("404".into(), json!({"description": "NOT COVERED", "content": {"text/plain": {"schema": {"type": "string", "const": "NOT COVERED"}}}}));
    let mut op = json!({
        "summary": route.summary,
        "operationId": operation_id(route),
        "parameters": parameters(route),
        "responses": responses,
        "x-access": access(route, price_of, free_limits),
    });
    if matches!(route.handler, Handler::Paid(..)) {
        // The shape indexers read (x402scan's OpenAPI-first discovery): a fixed USD price and the
        // protocols the route is paid with.
        let dollars = op["x-access"]["label"]
            .as_str()
            .unwrap_or_default()
            .trim_start_matches('$')
            .to_owned();
        op["x-payment-info"] = json!({"price": {"mode": "fixed", "currency": "USD", "amount": dollars},
                                      "protocols": [{"x402": {}}]});
    }
    if is_mpp(route) {
        mpp_answers(&mut op);
    }
    if route.handler == Handler::Mcp {
        op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["jsonrpc", "method"], "properties": {"jsonrpc": {"const": "2.0"}, "method": {"type": "string"}, "params": {"type": "object"}}}, "example": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}}});
    }
    if let (Some(schema), Some(example)) = (
        route_docs::request_schema(route.handler),
        route_docs::request_example(route.handler),
    ) {
        op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": schema, "example": example}}});
    }
    op
}

/// The MPP route answers in the draft's shapes: refusals are `application/problem+json` (with our
/// closed `code`), a 402 carries `WWW-Authenticate: Payment`, a delivery `Payment-Receipt`.
fn mpp_answers(op: &mut Value) {
    let problem = json!({"type": "object", "required": ["type", "title", "status", "code"],
        "properties": {"type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
                       "detail": {"type": "string"}, "code": {"type": "string"}}});
    if let Some(responses) = op["responses"].as_object_mut() {
        for (status, response) in responses.iter_mut() {
            if status == "200" {
                response["headers"] = json!({
                    "Report-Signature": header("base64 of {alg, key_id, sig} JSON: Ed25519 over the RFC 8785 (JCS) bytes of the body as sent"),
                    "Payment-Receipt": header("base64url JSON {method: tempo, reference: tx hash, status: success, timestamp}"),
                });
            } else if status != "404" {
                if let Some(headers) = response["headers"].as_object_mut() {
                    headers.remove("PAYMENT-REQUIRED");
                    headers.remove("PAYMENT-RESPONSE");
                    if status == "402" {
                        headers.insert("WWW-Authenticate".into(), header("Payment id, realm, method=\"tempo\", intent=\"charge\", request (base64url JSON: amount, currency, recipient, chainId), expires"));
                    }
                }
                if matches!(status.as_str(), "402" | "409" | "429" | "503") {
                    let mut schema = problem.clone();
                    schema["properties"]["code"] = response["content"]["application/json"]
                        ["schema"]["properties"]["code"]
                        .clone();
                    response["content"] = json!({"application/problem+json": {"schema": schema}});
                }
            }
        }
    }
    op["x-payment-info"]["protocols"] = json!([{"mpp": {"method": "tempo", "intent": "charge"}}]);
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

/// The OpenAPI 3.1 document of every route in the table, with the prices and free-tier limits in
/// force.
pub fn openapi(price_of: &dyn Fn(&PaidOp) -> u64, free_limits: Limits) -> Value {
    let mut paths = Map::new();
    for route in routes() {
        let entry = paths
            .entry(route.path.to_owned())
            .or_insert_with(|| json!({}));
        entry[route.verb.as_str().to_ascii_lowercase()] = operation(route, price_of, free_limits);
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": SERVICE, "version": VERSION,
                 "description": "Mechanical, model-free context operations sold per call over x402. Paid routes answer 402 with PAYMENT-REQUIRED (x402 v2, with the bazaar discovery extension); x-access states each route's price in force, as GET / does. Every refusal is {code, message, <figures>}. Unknown paths and methods answer 404 NOT COVERED."},
        "paths": paths,
        "x-discovery": {"llmsTxtUrl": "/llms.txt"},
        "components": {"schemas": {"Signature": schemas::signature_schema()}},
    })
}

/// The document's key for `verb` under a path.
pub fn verb_key(verb: Verb) -> String {
    verb.as_str().to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> Value {
        openapi(
            &|op| op.default_price_units + 3,
            Limits {
                per_day: 11,
                min_interval_ms: 7,
            },
        )
    }

    #[test]
    fn openapi_lists_exactly_the_route_table() {
        let doc = document();
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
        assert_eq!(listed, routes().len());
    }

    /// Every paid route states the price in force; every refusal code the route can give is
    /// listed under its own status; the pack's report is signed in the header, not a member.
    #[test]
    fn prices_codes_and_signatures_are_the_routes_own() {
        let doc = document();
        for route in routes() {
            let op = &doc["paths"][route.path][verb_key(route.verb)];
            if let Handler::Paid(paid, _) = route.handler {
                assert_eq!(op["x-access"]["usdc_units"], paid.default_price_units + 3);
                assert!(op["requestBody"]["content"]["application/json"]["schema"].is_object());
                let label = op["x-access"]["label"].as_str().unwrap();
                assert_eq!(op["x-payment-info"]["price"]["amount"], label[1..]);
            }
            for (code, status) in route_docs::refusals(route.handler) {
                let content = &op["responses"][status.to_string()]["content"];
                let schema = match &content["application/json"] {
                    Value::Null => &content["application/problem+json"]["schema"],
                    json => &json["schema"],
                };
                let listed = schema["properties"]["code"]["enum"]
                    .as_array()
                    .or_else(|| schema["anyOf"][1]["properties"]["code"]["enum"].as_array())
                    .unwrap_or_else(|| panic!("{} {status}", route.path));
                assert!(listed.contains(&Value::from(code)), "{} {code}", route.path);
            }
        }
        let pack = &doc["paths"]["/v1/x402/context-budget-pack"]["post"]["responses"]["200"];
        assert!(pack["headers"]["Report-Signature"].is_object());
        assert!(pack["content"]["application/json"]["schema"]["properties"]["signature"].is_null());
        let budget = &doc["paths"]["/token-efficiency/budget"]["post"]["responses"]["200"];
        assert!(budget["headers"]["Report-Signature"].is_null());
        assert!(budget["content"]["application/json"]["schema"]["required"]
            .as_array()
            .unwrap()
            .contains(&Value::from("signature")));
    }
}
