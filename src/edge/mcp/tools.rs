//! The MCP tools, read from the route table (ARCHITECTURE §4b): one tool per op, never a second
//! table. A family's document and free check are free tools; a paid op is one tool whatever rails
//! sell it (the pack: x402 and MPP). Each tool's `inputSchema` is its route's request schema, the
//! same value `/openapi.json` serves (`route_docs`).

use crate::edge::describe::access;
use crate::edge::family::{PaidOp, Rail};
use crate::edge::route_docs;
use crate::edge::routes::{routes, Handler, Route};
use crate::engine::allowance::Limits;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

/// One tool: the route that serves it, and for a paid op the route of each rail that sells it.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    /// The route a free tool runs, or a paid tool's x402 route.
    pub route: &'static Route,
    /// A paid tool's MPP route, where the op is sold over MPP too.
    pub mpp: Option<&'static Route>,
}

/// `family-id` + the op or document name, `_`-separated; a paid op named like its family (the
/// pack) is named by the family alone. Names keep to `[a-z_]`, which every MCP host accepts.
fn name_of(route: &Route) -> Option<String> {
    let family = route.handler.family()?;
    let last = route.path.rsplit('/').next().unwrap_or_default();
    let name = match route.handler {
        Handler::Paid(op, _) if family.id.ends_with(op.op) => family.id.to_owned(),
        Handler::Paid(op, _) => format!("{}_{}", family.id, op.op),
        _ => format!("{}_{}", family.id, last),
    };
    Some(name.replace('-', "_"))
}

/// Every tool, in route-table order (documents, free checks, paid ops per family).
pub fn tools() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(table)
}

/// The tool table, built once per isolate from the route table.
fn table() -> Vec<Tool> {
    let mut tools: Vec<Tool> = Vec::new();
    for route in routes() {
        let Some(name) = name_of(route) else { continue };
        match route.handler {
            Handler::Paid(op, Rail::Mpp) => {
                if let Some(tool) = tools.iter_mut().find(|t| paid_op(t) == Some(op)) {
                    tool.mpp = Some(route);
                    continue;
                }
                tools.push(Tool {
                    name,
                    route,
                    mpp: Some(route),
                });
            }
            _ => tools.push(Tool {
                name,
                route,
                mpp: None,
            }),
        }
    }
    tools
}

fn paid_op(tool: &Tool) -> Option<&'static PaidOp> {
    match tool.route.handler {
        Handler::Paid(op, _) => Some(op),
        _ => None,
    }
}

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    tools().iter().find(|t| t.name == name)
}

/// The tool that sells `op` (the name a spent free allowance points to).
pub fn paid_tool_name(op: &PaidOp) -> Option<&'static str> {
    tools()
        .iter()
        .find(|t| paid_op(t) == Some(op))
        .map(|t| t.name.as_str())
}

/// `tools/list`'s result. A paid tool declares no `outputSchema`: its payment-required answer
/// travels in `structuredContent` (x402's MCP binding), which a strict host would check against it.
pub fn list(price_of: &dyn Fn(&PaidOp) -> u64, free_limits: Limits) -> Map<String, Value> {
    let tools: Vec<Value> = tools()
        .iter()
        .map(|tool| describe(tool, price_of, free_limits))
        .collect();
    let mut result = Map::new();
    result.insert("tools".into(), Value::Array(tools));
    result
}

fn describe(tool: &Tool, price_of: &dyn Fn(&PaidOp) -> u64, free_limits: Limits) -> Value {
    let route = tool.route;
    let input = route_docs::request_schema(route.handler).unwrap_or_else(
        || json!({"type": "object", "properties": {}, "additionalProperties": false}),
    );
    let mut rails = vec![];
    if matches!(route.handler, Handler::Paid(_, Rail::X402)) {
        rails.push(Value::from("x402"));
    }
    if tool.mpp.is_some() {
        rails.push(Value::from("mpp"));
    }
    let mut meta = json!({
        "context-meter/route": route.path,
        "context-meter/access": access(route, price_of, free_limits),
    });
    if !rails.is_empty() {
        meta["context-meter/rails"] = Value::Array(rails);
    }
    let mut out = json!({
        "name": tool.name,
        "title": route.summary,
        "description": description(tool, price_of),
        "inputSchema": input,
        "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
        "_meta": meta,
    });
    if let Handler::Free(_) = route.handler {
        if !route_docs::signs_in_header(route.handler) {
            out["outputSchema"] = route_docs::report_schema(route.handler);
        }
    }
    out
}

fn description(tool: &Tool, price_of: &dyn Fn(&PaidOp) -> u64) -> String {
    let route = tool.route;
    let access = match route.handler {
        Handler::Paid(op, _) => format!(
            "Paid, {} USDC base units; unpaid, it answers payment required",
            price_of(op)
        ),
        Handler::Free(_) => "Free tier: wallet in `caller` or X-Caller".to_owned(),
        _ => "Free".to_owned(),
    };
    format!(
        "{}. {access}. As {} {}.",
        route.summary,
        route.verb.as_str(),
        route.path
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::family;

    /// Every op of the family table is exactly one tool, every document and free check one tool
    /// each, and names are unique and host-safe.
    #[test]
    fn one_tool_per_op_document_and_free_check() {
        let tools = tools();
        let ops: usize = family::ALL.iter().map(|f| f.ops.len()).sum();
        let free = family::ALL.iter().filter(|f| f.free.is_some()).count();
        assert_eq!(tools.len(), ops + free + family::ALL.len());
        for (i, a) in tools.iter().enumerate() {
            assert!(
                a.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{}",
                a.name
            );
            assert!(
                tools[i + 1..].iter().all(|b| b.name != a.name),
                "{} twice",
                a.name
            );
        }
        let pack = find("context_budget_pack").expect("the pack");
        assert!(matches!(pack.route.handler, Handler::Paid(_, Rail::X402)));
        assert!(pack
            .mpp
            .is_some_and(|r| matches!(r.handler, Handler::Paid(_, Rail::Mpp))));
        assert!(find("token_efficiency_budget").is_some_and(|t| t.mpp.is_none()));
        assert!(find("token_efficiency_precheck").is_some());
        assert!(find("context_budget_pack_contract").is_some());
    }

    /// A tool's input schema is its route's OpenAPI request schema, and no paid tool declares an
    /// output schema.
    #[test]
    fn schemas_are_the_routes_own() {
        let limits = Limits {
            per_day: 100,
            min_interval_ms: 0,
        };
        let listed = list(&|op| op.default_price_units, limits);
        for (tool, listed) in tools().iter().zip(listed["tools"].as_array().unwrap()) {
            if let Some(schema) = route_docs::request_schema(tool.route.handler) {
                assert_eq!(listed["inputSchema"], schema, "{}", tool.name);
            }
            if let Handler::Paid(op, _) = tool.route.handler {
                assert!(listed.get("outputSchema").is_none(), "{}", tool.name);
                let units = &listed["_meta"]["context-meter/access"]["usdc_units"];
                assert_eq!(units, op.default_price_units, "{}", tool.name);
            }
        }
    }
}
