//! `POST /mcp`: every op as an MCP tool over Streamable HTTP, stateless (ARCHITECTURE §4b). One
//! handler answers both the `2025-11-25` session flow (`initialize`, then requests; no session id
//! is ever issued, so nothing is kept between requests) and the stateless `2026-07-28` revision
//! (`server/discover`, per-request `_meta`, its headers checked against the body). Answers are
//! `application/json`; a notification is 202 with no body; any other method on `/mcp` is 405.
//!
//! Invariants: a tool runs through its HTTP route (`call`), so MCP adds no second pipeline and no
//! retention; every error is closed (`engine::mcp::RpcError`); nothing of a message is logged.

pub mod call;
pub mod tools;

use crate::edge::body::{self, Unread};
use crate::edge::error::{EdgeError, Refused};
use crate::edge::pipeline::{apart, price_units};
use crate::edge::{config, describe, family};
use crate::engine::mcp::{self as rpc, Message, Method, RpcError};
use serde_json::{json, Map, Value};
use worker::{Context, Env, Headers, Request, Response};

/// The endpoint's path.
pub const PATH: &str = "/mcp";

/// What `initialize` and `server/discover` tell a host about this server.
const INSTRUCTIONS: &str = "Exact cl100k_base context operations, no model. Free tools: criteria and \
free checks (wallet: `caller` or X-Caller). Paid tools: pay the payment-required result with an x402 \
or mppx MCP client; an identical retry is delivered again, never charged twice. Nothing is retained.";

/// The largest message: the largest op's body cap and room for the envelope and a payment.
fn cap() -> usize {
    let largest = family::ALL
        .iter()
        .flat_map(|f| {
            let free = f.free.as_ref().map(|free| free.body.cap);
            free.into_iter().chain(f.ops.iter().map(|op| op.body.cap))
        })
        .max()
        .unwrap_or(0);
    largest + 64 * 1024
}

fn server_info() -> Value {
    json!({"name": describe::SERVICE, "version": describe::VERSION, "title": "context-meter"})
}

/// `POST /mcp`.
pub async fn serve(mut req: Request, env: &Env, ctx: &Context) -> Result<Response, Refused> {
    let origin = req.url()?.origin().ascii_serialization();
    if !origin_allowed(&req, env, &origin) {
        return answer(rpc::error(None, RpcError::OriginForbidden), 403);
    }
    if !body::is_json_content_type(&req) {
        return Err(EdgeError::UnsupportedMediaType.into());
    }
    let cap = cap();
    let body = match body::read_capped(&mut req, cap).await {
        Ok(body) => body,
        Err(Unread::TooLarge { .. }) => {
            let error = RpcError::TooLarge { cap: cap as u64 };
            return answer(rpc::error(None, error), error.status(false));
        }
        Err(Unread::Failed(e)) => return Err(e.into()),
    };
    let message = match rpc::parse(&body) {
        Ok(message) => message,
        Err(refusal) => {
            let status = refusal.error.status(refusal.stateless);
            return answer(rpc::error(refusal.id.as_ref(), refusal.error), status);
        }
    };
    let around = call::Around {
        outer: &req,
        origin,
    };
    apart(respond(&message, &around, env, ctx)).await
}

/// The answer to one parsed message.
async fn respond(
    message: &Message<'_>,
    around: &call::Around<'_>,
    env: &Env,
    ctx: &Context,
) -> Result<Response, Refused> {
    let stateless = message.version.is_some();
    let Some(id) = message.id.as_ref() else {
        return accepted();
    };
    let refuse = |error: RpcError| answer(rpc::error(Some(id), error), error.status(stateless));
    let tool_call = match message.method {
        Method::ToolsCall => match rpc::tool_call(message.params.as_ref()) {
            Ok(call) => Some(call),
            Err(error) => return refuse(error),
        },
        _ => None,
    };
    let sent = around.outer.headers();
    let (version, method, name) = (
        sent.get("mcp-protocol-version").ok().flatten(),
        sent.get("mcp-method").ok().flatten(),
        sent.get("mcp-name").ok().flatten(),
    );
    let headers = rpc::Headers {
        protocol_version: version.as_deref(),
        method: method.as_deref(),
        name: name.as_deref(),
    };
    let tool_name = tool_call.as_ref().map(|c| c.name.as_str());
    if let Err(error) = rpc::check_headers(message, tool_name, headers) {
        return refuse(error);
    }
    let result: Map<String, Value> = match message.method {
        Method::Initialize => rpc::initialize_result(
            rpc::negotiate(message.params.as_ref()),
            server_info(),
            INSTRUCTIONS,
        ),
        Method::Discover => rpc::discover_result(server_info(), INSTRUCTIONS),
        Method::Ping => Map::new(),
        Method::ToolsList => {
            let mut list = tools::list(&|op| price_units(env, op), config::free_limits(env));
            if stateless {
                rpc::cacheable(&mut list);
            }
            list
        }
        Method::ToolsCall => {
            let call = tool_call.as_ref().ok_or(EdgeError::Internal)?;
            let Some(tool) = tools::find(&call.name) else {
                return refuse(RpcError::UnknownTool);
            };
            match apart(call::run(tool, call, around, env, ctx)).await {
                Ok(result) => result,
                Err(_) => return refuse(RpcError::Internal),
            }
        }
        Method::Notification => return accepted(),
    };
    answer(rpc::result(id, result, stateless), 200)
}

/// A browser's request names its page's origin: served only from this worker's own origin or one
/// listed in `MCP_ALLOWED_ORIGINS` (comma-separated). A request with no `Origin` is not a browser's.
fn origin_allowed(req: &Request, env: &Env, own: &str) -> bool {
    let Some(sent) = req.headers().get("origin").ok().flatten() else {
        return true;
    };
    sent == own
        || config::var(env, "MCP_ALLOWED_ORIGINS")
            .is_some_and(|list| list.split(',').any(|o| o.trim() == sent))
}

fn accepted() -> Result<Response, Refused> {
    Ok(Response::empty()?.with_status(202))
}

fn answer(message: Value, status: u16) -> Result<Response, Refused> {
    let headers = Headers::new();
    let _ = headers.set("content-type", "application/json");
    let _ = headers.set("cache-control", "no-store");
    let body = serde_json::to_vec(&message).map_err(|_| EdgeError::Internal)?;
    Ok(Response::from_bytes(body)?
        .with_status(status)
        .with_headers(headers))
}
