//! Self-description generated from the route table: the `GET /` index, `/llms.txt` (rendered from
//! the index value itself, so its routes, prices and limits cannot differ from it); the OpenAPI 3.1
//! document is in [`crate::edge::openapi`], from the same route table and [`access`].

use crate::edge::family::{self, PaidOp, Rail};
use crate::edge::routes::{routes, Handler, Route};
use crate::engine::allowance::Limits;
use crate::engine::sign::ReportSigner;
use serde_json::{json, Value};

/// Service name and version as published.
pub const SERVICE: &str = "context-meter";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

fn price_label(units: u64) -> String {
    format!("${}.{:06}", units / 1_000_000, units % 1_000_000)
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_owned()
}

/// How a paid route is paid, in the words `GET /` prints.
fn protocol(rail: Rail) -> &'static str {
    match rail {
        Rail::X402 => "x402 v2 exact (Solana USDC)",
        Rail::Mpp => {
            "MPP: Payment HTTP auth, method tempo, intent charge, push mode (TIP-20, 6 decimals)"
        }
    }
}

/// A route's access in force: paid (price), free tier (limits) or free. `GET /`, `/llms.txt` and
/// the OpenAPI `x-access` all state this one value.
pub fn access(route: &Route, price_of: &dyn Fn(&PaidOp) -> u64, free_limits: Limits) -> Value {
    match route.handler {
        Handler::Paid(op, rail) => {
            let units = price_of(op);
            json!({"kind": "paid", "usdc_units": units, "label": price_label(units), "protocol": protocol(rail)})
        }
        Handler::Free(_) => json!({"kind": "free-tier", "per_day": free_limits.per_day,
                                   "min_interval_ms": free_limits.min_interval_ms}),
        _ => json!({"kind": "free"}),
    }
}

/// The `GET /` index, with the prices and free-tier limits in force.
pub fn index(
    signer: &ReportSigner,
    price_of: &dyn Fn(&PaidOp) -> u64,
    free_limits: Limits,
) -> Value {
    let families: Vec<Value> = family::ALL
        .iter()
        .map(|f| {
            let routes: Vec<Value> = routes()
                .iter()
                .filter(|r| r.handler.family() == Some(*f))
                .map(|r| {
                    json!({"method": r.verb.as_str(), "path": r.path, "summary": r.summary, "access": access(r, price_of, free_limits)})
                })
                .collect();
            json!({"family": f.id, "criteria_id": f.criteria_id, "routes": routes})
        })
        .collect();
    json!({
        "service": SERVICE,
        "version": VERSION,
        "what": "Mechanical, model-free context operations for AI agents, per call over x402. Nothing submitted is retained.",
        "families": families,
        "signing": {"alg": "Ed25519", "public_key": signer.public_key_b64(), "key_id": signer.key_id(),
                    "signed_bytes": "RFC 8785 JCS of the response body without its signature member"},
        "links": {"llms_txt": "/llms.txt", "openapi": "/openapi.json", "x402_discovery": "/.well-known/x402", "metrics": "/metrics", "readiness": "/ready", "mcp": "/mcp"}
    })
}

/// `GET /.well-known/x402`: the fan-out document x402scan reads when a server is added
/// (`{"version": 1, "resources": [url, …]}`; its docs/DISCOVERY.md, "legacy compatibility, still
/// fully supported", beside OpenAPI-first discovery): the absolute URL of every paid route.
pub fn well_known_x402(origin: &str) -> Value {
    let resources: Vec<String> = routes()
        .iter()
        .filter(|r| matches!(r.handler, Handler::Paid(..)))
        .map(|r| format!("{origin}{}", r.path))
        .collect();
    json!({"version": 1, "resources": resources, "mcp": format!("{origin}/mcp")})
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
        "\n## MCP\n\n\
         - [POST /mcp](/mcp): every operation above as an MCP tool (Streamable HTTP, stateless; 2025-11-25 \
         sessions and 2026-07-28 requests). Free tools for any host; a paid tool answers x402's payment-required \
         result until paid over x402 (`_meta[\"x402/payment\"]`) or, for the pack, MPP \
         (`_meta[\"org.paymentauth/credential\"]`), with the same keys, retries and receipts as over HTTP.\n\
         \n## Paying\n\n\
         - A paid route without `PAYMENT-SIGNATURE` answers 402 with `PAYMENT-REQUIRED` (base64 JSON, x402 v2, \
         scheme `exact`): pay one entry of `accepts` with a stock x402 client and send the same request again. \
         Its `extensions` declare `payment-identifier` (set its id to your Idempotency-Key) and the `bazaar` \
         discovery record (method, body schema and example, output schema), which the facilitator also receives.\n\
         - The pack also answers over MPP at `/v1/mpp/context-budget-pack`: 402 with `WWW-Authenticate: Payment` \
         (method `tempo`, intent `charge`, push mode only); pay with the stock `mppx` client, which broadcasts a \
         TIP-20 `transferWithMemo` and sends `Authorization: Payment`; the answer carries `Payment-Receipt`. \
         Refusals there are `application/problem+json`.\n\
         - Send `Idempotency-Key` (16-128 of `[A-Za-z0-9_-]`) on every paid call, and retry only with the \
         identical key, body and `PAYMENT-SIGNATURE`. On 409 `PAYMENT_UNCERTAIN` never pay again under that \
         key: retry after `Retry-After`. Lost the answer to a paid call? Send the identical request again \
         (same key, body and credential; the pack also with no credential): the result is delivered again with \
         the original receipt, never charged twice. The served documents list every payment state under `payment`.\n\
         - Before paying, [GET /ready](/ready) says whether every configured rail can take money now.\n\
         - Free checks name the caller's wallet: `caller` in the body where the input has one, else the \
         `X-Caller` header. Malformed input is refused free, before any allowance or payment is touched.\n\
         \n## Verifying a report\n\n\
         - Ed25519 over the RFC 8785 (JCS) bytes of the body without its `signature` member; the public key \
         is `signing.public_key` at [GET /](/) (key id `{}`). The pack carries the same signature in its \
         `Report-Signature` header instead.\n\
         \n## Optional\n\n\
         - [OpenAPI 3.1](/openapi.json): every route's request and response schemas, its closed refusal codes \
         per status (one flat shape `{{code, message, <figures>}}`), headers and price in force (`x-access`).\n\
         - [/.well-known/x402](/.well-known/x402): every paid route's URL, for x402 indexers.\n\
         - [Metrics](/metrics): counts by route and outcome only. Nothing submitted is retained anywhere.\n",
        text(&index["signing"]["key_id"])
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_prints_the_free_tier_limits_in_force() {
        let signer = ReportSigner::from_seed(&[7; 32]);
        let limits = Limits {
            per_day: 37,
            min_interval_ms: 250,
        };
        let index = index(&signer, &|op| op.default_price_units, limits);
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
        let routed = routes()
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
        let price = |op: &PaidOp| op.default_price_units + 1;
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
        assert_eq!(families, family::ALL.len());
        assert!(text.contains(signer.key_id()));
        // Every family route, and the MCP endpoint in its own section.
        let documented = routes()
            .iter()
            .filter(|r| r.handler.family().is_some() || r.handler == Handler::Mcp)
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
    fn the_well_known_document_lists_every_paid_route() {
        let doc = well_known_x402("https://cm.example");
        let listed = doc["resources"].as_array().unwrap();
        let paid: Vec<&Route> = routes()
            .iter()
            .filter(|r| matches!(r.handler, Handler::Paid(..)))
            .collect();
        assert_eq!(listed.len(), paid.len());
        for route in paid {
            assert!(listed.contains(&Value::from(format!("https://cm.example{}", route.path))));
        }
        assert_eq!(doc["version"], 1);
    }

    #[test]
    fn price_labels() {
        assert_eq!(price_label(20_000), "$0.02");
        assert_eq!(price_label(5_000), "$0.005");
        assert_eq!(price_label(1_000_000), "$1");
    }
}
