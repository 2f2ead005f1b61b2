//! `tools/call`: the tool's route runs on the tool's arguments through the HTTP pipeline itself
//! (ARCHITECTURE §4b). The call becomes the request its route would have received (the arguments'
//! exact bytes as the body; the payment members of `_meta` as the payment headers; the caller's
//! `Idempotency-Key` and `X-Caller`), and the route's answer becomes the tool result. So free
//! validation, the free tier, the payment gate, the idempotency record, settlement, the ledger row,
//! re-delivery and signing are the HTTP routes' own, and a payment over MCP is the same payment
//! as over HTTP: same resource, same key record, same row.

use crate::edge::error::{EdgeError, Refused};
use crate::edge::family::Rail;
use crate::edge::mcp::tools::{self, Tool};
use crate::edge::pipeline::{self, apart};
use crate::edge::routes::{Handler, Route};
use crate::engine::mcp::pay;
use crate::engine::mcp::ToolCall;
use crate::engine::payment::discovery;
use serde_json::{json, Map, Value};
use worker::{Context, Env, Headers, Method, Request, RequestInit, Response};

/// The `_meta` key a caller may bind a paid call with, where it cannot set `Idempotency-Key` per
/// request (an MCP client's headers are usually per connection).
pub const META_IDEMPOTENCY_KEY: &str = "context-meter/idempotency-key";

/// What the request around the call carried that the route reads.
pub struct Around<'a> {
    pub outer: &'a Request,
    pub origin: String,
}

/// Runs the tool and answers its result (a tool failure is a result with `isError`, never an
/// error of the exchange).
pub async fn run(
    tool: &Tool,
    call: &ToolCall<'_>,
    around: &Around<'_>,
    env: &Env,
    ctx: &Context,
) -> Result<Map<String, Value>, Refused> {
    let credential = call
        .meta
        .get(pay::MPP_CREDENTIAL)
        .filter(|_| tool.mpp.is_some());
    let route = match (credential, tool.mpp) {
        (Some(_), Some(mpp)) => mpp,
        _ => tool.route,
    };
    let response = apart(through(route, call, around, env, ctx)).await?;
    let challenge_id = credential.and_then(pay::mpp_challenge_id);
    let paid = call.meta.contains_key(pay::X402_PAYMENT) || credential.is_some();
    let mut result = apart(tool_result(response, tool, route, challenge_id)).await?;
    let Some(mpp) = tool.mpp.filter(|_| !paid && is_error(&result)) else {
        return Ok(result);
    };
    // An unpaid call of an op sold on both rails asks the MPP route too: a key paid over MPP is
    // delivered again from there (the x402 route answers it 409, first used elsewhere), and its
    // challenge is offered beside x402's, each where its own client reads it, or alone when the
    // x402 rail cannot challenge now (its facilitator down).
    let response = apart(through(mpp, call, around, env, ctx)).await?;
    if response.status_code() == 200 {
        return apart(tool_result(response, tool, mpp, None)).await;
    }
    let required = mpp_payment_required(&response);
    match required {
        Some(required) if is_x402_challenge(&result) => {
            meta_of(&mut result).insert(pay::MPP_PAYMENT_REQUIRED.into(), required);
            Ok(result)
        }
        Some(_) => apart(tool_result(response, tool, mpp, None)).await,
        None => Ok(result),
    }
}

fn is_error(result: &Map<String, Value>) -> bool {
    result.get("isError") == Some(&Value::Bool(true))
}

/// The route's answer to the request the call stands for (its refusals rendered as on HTTP).
async fn through(
    route: &'static Route,
    call: &ToolCall<'_>,
    around: &Around<'_>,
    env: &Env,
    ctx: &Context,
) -> Result<Response, Refused> {
    let request = request_for(route, call, around)?;
    let payment_header = request.headers().has("payment-signature").unwrap_or(false);
    let result = match route.handler {
        Handler::Document(_) => pipeline::answer_now(route, &request, env)
            .unwrap_or_else(|| Err(EdgeError::Internal.into())),
        // The arguments go to the route as its body, handed over, not streamed through a second
        // request (64 KiB of them cost 1.1x the HTTP call that way; bench/mcp-workerd.mjs).
        _ => {
            let body = call
                .arguments
                .map_or("{}", |raw| raw.get())
                .as_bytes()
                .to_vec();
            apart(pipeline::handle(route, request, Some(body), env, ctx)).await
        }
    };
    crate::edge::finish(route, result, payment_header).map_err(|_| EdgeError::Internal.into())
}

/// The HTTP request `call` stands for on `route`.
fn request_for(
    route: &'static Route,
    call: &ToolCall<'_>,
    around: &Around<'_>,
) -> Result<Request, Refused> {
    let internal = |_| -> Refused { EdgeError::Internal.into() };
    let headers = Headers::new();
    headers
        .set("content-type", "application/json")
        .map_err(internal)?;
    let outer = around.outer.headers();
    let x402 = call.meta.get(pay::X402_PAYMENT);
    let key = outer
        .get("idempotency-key")
        .ok()
        .flatten()
        .or_else(|| text(call.meta.get(META_IDEMPOTENCY_KEY)))
        .or_else(|| {
            x402.and_then(pay::x402_payment_identifier)
                .map(str::to_owned)
        });
    if let Some(key) = key {
        headers.set("idempotency-key", &key).map_err(internal)?;
    }
    if let Ok(Some(caller)) = outer.get("x-caller") {
        headers.set("x-caller", &caller).map_err(internal)?;
    }
    match route.handler {
        Handler::Paid(_, Rail::X402) => {
            if let Some(payment) = x402 {
                // A payment member that is not an object is a malformed payment header: the
                // route refuses it as it refuses one over HTTP.
                let header = pay::x402_header(payment).unwrap_or_else(|| "!".to_owned());
                headers
                    .set("payment-signature", &header)
                    .map_err(internal)?;
            }
        }
        Handler::Paid(_, Rail::Mpp) => {
            if let Some(credential) = call.meta.get(pay::MPP_CREDENTIAL) {
                let header =
                    pay::mpp_authorization(credential).unwrap_or_else(|| "Payment !".to_owned());
                headers.set("authorization", &header).map_err(internal)?;
            }
        }
        _ => {}
    }
    let mut init = RequestInit::new();
    init.with_headers(headers);
    if route.handler.reads_body() {
        init.with_method(Method::Post);
    } else {
        init.with_method(Method::Get);
    }
    Request::new_with_init(&format!("{}{}", around.origin, route.path), &init)
        .map_err(|_| EdgeError::Internal.into())
}

fn text(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_owned)
}

fn header(response: &Response, name: &str) -> Option<String> {
    response.headers().get(name).ok().flatten()
}

fn meta_of(result: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut().expect("an object")
}

fn is_x402_challenge(result: &Map<String, Value>) -> bool {
    result
        .get("structuredContent")
        .is_some_and(|s| s.get("accepts").is_some() && s.get("x402Version").is_some())
}

/// The MPP challenges a route's 402 carries, in the MCP form.
fn mpp_payment_required(response: &Response) -> Option<Value> {
    (response.status_code() == 402)
        .then(|| header(response, "www-authenticate"))
        .flatten()
        .and_then(|h| pay::mpp_payment_required(&h))
}

/// The tool result of a route's answer: the body as text (a signed report's exact signed bytes)
/// and as `structuredContent`, `isError` for anything but a delivery, and the payment receipts,
/// detached signature and HTTP status in `_meta`.
async fn tool_result(
    mut response: Response,
    tool: &Tool,
    route: &'static Route,
    challenge_id: Option<&str>,
) -> Result<Map<String, Value>, Refused> {
    let status = response.status_code();
    let required = header(&response, "payment-required").and_then(|h| pay::x402_object(&h));
    let settled = header(&response, "payment-response").and_then(|h| pay::x402_object(&h));
    let receipt =
        header(&response, "payment-receipt").and_then(|h| pay::mpp_receipt(&h, challenge_id));
    let signature = header(&response, "report-signature").and_then(|h| pay::x402_object(&h));
    let retry_after = header(&response, "retry-after").and_then(|h| h.trim().parse::<u64>().ok());
    let mpp_required = mpp_payment_required(&response);
    let body = response
        .bytes()
        .await
        .map_err(|_| -> Refused { EdgeError::Internal.into() })?;
    let text = String::from_utf8(body).map_err(|_| -> Refused { EdgeError::Internal.into() })?;
    let parsed = serde_json::from_str::<Value>(&text)
        .ok()
        .filter(Value::is_object);
    let mut result = Map::new();
    let mut meta = Map::new();
    let paid_route = matches!(route.handler, Handler::Paid(..));
    match (status, required) {
        // x402's payment required (MCP binding): the PaymentRequired object, as structured
        // content and as the text, with the tool's MCP discovery declaration.
        (402, Some(mut required)) if paid_route => {
            required["extensions"][discovery::BAZAAR] = mcp_declaration(tool);
            result.insert("content".into(), text_content(required.to_string()));
            result.insert("structuredContent".into(), required);
            result.insert("isError".into(), Value::Bool(true));
        }
        (status, _) => {
            result.insert("content".into(), text_content(text));
            if let Some(mut parsed) = parsed {
                // A spent free allowance names the paid tool, as the HTTP answer names its route.
                if let (Handler::Free(family), 402) = (route.handler, status) {
                    if let Some(name) = family.ops.first().and_then(|op| tools::paid_tool_name(op))
                    {
                        parsed["paid_tool"] = Value::from(name);
                    }
                }
                result.insert("structuredContent".into(), parsed);
            }
            result.insert("isError".into(), Value::Bool(!(200..300).contains(&status)));
        }
    }
    if let Some(settled) = settled {
        meta.insert(pay::X402_PAYMENT_RESPONSE.into(), settled);
    }
    if let Some(receipt) = receipt {
        meta.insert(pay::MPP_RECEIPT.into(), receipt);
    }
    // MPP's challenge only where nothing was paid: a refused credential is never answered with a
    // new challenge here (its client would pay again; push payments have already moved).
    if let (Some(required), None) = (mpp_required, challenge_id) {
        meta.insert(pay::MPP_PAYMENT_REQUIRED.into(), required);
    }
    if let Some(signature) = signature {
        meta.insert("context-meter/report-signature".into(), signature);
    }
    if let Some(seconds) = retry_after {
        meta.insert("context-meter/retry-after-s".into(), Value::from(seconds));
    }
    meta.insert("context-meter/status".into(), Value::from(status));
    result.insert("_meta".into(), Value::Object(meta));
    Ok(result)
}

fn text_content(text: String) -> Value {
    json!([{"type": "text", "text": text}])
}

/// x402 discovery (`bazaar`) of a paid tool over MCP: `info.input.type: "mcp"`, its name and input
/// schema, as @x402/extensions declares and validates one.
fn mcp_declaration(tool: &Tool) -> Value {
    let input = crate::edge::route_docs::request_schema(tool.route.handler)
        .unwrap_or_else(|| json!({"type": "object"}));
    let example =
        crate::edge::route_docs::request_example(tool.route.handler).unwrap_or_else(|| json!({}));
    discovery::mcp_declaration(&tool.name, tool.route.summary, input, example)
}
