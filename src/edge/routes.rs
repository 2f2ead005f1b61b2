//! The route table, built from the family table (`edge::family`) and the service routes: the
//! router dispatches on it, `GET /` lists it and `/openapi.json` is generated from it, so none of
//! them can drift.

use crate::edge::family::{self, Family, PaidOp, Rail};
use std::sync::OnceLock;

/// HTTP methods the worker answers on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
        }
    }
}

/// What a route does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Handler {
    Index,
    /// `/llms.txt`: the index rendered as Markdown for an agent (llmstxt.org layout).
    LlmsTxt,
    OpenApi,
    /// `GET /.well-known/x402`: the paid routes' URLs, for indexers that fan out from it.
    WellKnownX402,
    Metrics,
    /// `GET /ready`: whether every configured payment rail can take money now.
    Ready,
    /// `POST /mcp`: every op as an MCP tool (Streamable HTTP, stateless).
    Mcp,
    /// The family's served criteria or contract document.
    Document(&'static Family),
    /// The family's free check (precheck or preflight), rate-limited by the free tier.
    Free(&'static Family),
    /// A paid op on one payment rail.
    Paid(&'static PaidOp, Rail),
}

impl Handler {
    /// The family a route serves (None for the service routes).
    pub fn family(self) -> Option<&'static Family> {
        match self {
            Handler::Document(f) | Handler::Free(f) => Some(f),
            Handler::Paid(op, _) => Some(op.family),
            _ => None,
        }
    }

    /// A route that reads a request body (a free check or a paid op).
    pub fn reads_body(self) -> bool {
        matches!(self, Handler::Free(_) | Handler::Paid(..))
    }
}

/// One row of the route table.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub verb: Verb,
    pub path: &'static str,
    pub handler: Handler,
    pub summary: &'static str,
}

const fn get(path: &'static str, handler: Handler, summary: &'static str) -> Route {
    Route {
        verb: Verb::Get,
        path,
        handler,
        summary,
    }
}

const fn post(path: &'static str, handler: Handler, summary: &'static str) -> Route {
    Route {
        verb: Verb::Post,
        path,
        handler,
        summary,
    }
}

/// The routes every deployment answers besides the families'.
const SERVICE: [Route; 7] = [
    get(
        "/",
        Handler::Index,
        "Index: families, ops, prices, signing key, links",
    ),
    get(
        "/llms.txt",
        Handler::LlmsTxt,
        "For agents: every op, price, the free tier, how to pay and verify (Markdown)",
    ),
    get(
        "/openapi.json",
        Handler::OpenApi,
        "OpenAPI 3.1 description of every route",
    ),
    get(
        "/.well-known/x402",
        Handler::WellKnownX402,
        "x402 discovery fan-out: the URL of every paid route (x402scan's /.well-known/x402)",
    ),
    get(
        "/metrics",
        Handler::Metrics,
        "Prometheus text: counts by route and outcome only",
    ),
    get(
        "/ready",
        Handler::Ready,
        "Readiness: per payment rail configured / facilitator supports it / chain answers; D1, Durable Objects, signing key (200 ready, else 503)",
    ),
    post(
        "/mcp",
        Handler::Mcp,
        "MCP server (Streamable HTTP, stateless; 2025-11-25 and 2026-07-28): every op as a tool, paid tools over x402 or MPP",
    ),
];

/// A family's routes: its document, its free check, then each paid op on each of its paths.
fn family_routes(family: &'static Family) -> impl Iterator<Item = Route> {
    let document = get(
        family.document_path,
        Handler::Document(family),
        family.document_summary,
    );
    let free = family
        .free
        .as_ref()
        .map(|free| post(free.path, Handler::Free(family), free.summary));
    let paid = family.ops.iter().flat_map(|op| {
        op.paths
            .iter()
            .map(move |p| post(p.path, Handler::Paid(op, p.rail), p.summary))
    });
    std::iter::once(document).chain(free).chain(paid)
}

/// Every route the worker answers. Anything else is `404 NOT COVERED`.
pub fn routes() -> &'static [Route] {
    static ROUTES: OnceLock<Vec<Route>> = OnceLock::new();
    ROUTES.get_or_init(|| {
        SERVICE
            .into_iter()
            .chain(family::ALL.into_iter().flat_map(family_routes))
            .collect()
    })
}

/// The route for `verb` + `path`, if any. Paths match exactly (no trailing-slash folding).
pub fn find(verb: Verb, path: &str) -> Option<&'static Route> {
    routes().iter().find(|r| r.verb == verb && r.path == path)
}

/// The path a paid op is sold on over `rail`.
pub fn paid_path(op: &PaidOp, rail: Rail) -> Option<&'static str> {
    let route = routes()
        .iter()
        .find(|route| matches!(route.handler, Handler::Paid(o, on) if o == op && on == rail))?;
    Some(route.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_unique() {
        let routes = routes();
        for (i, a) in routes.iter().enumerate() {
            for b in &routes[i + 1..] {
                assert!(!(a.verb == b.verb && a.path == b.path), "{} twice", a.path);
            }
        }
    }

    /// Every family's document and free check, and every paid op on every path the table sells it
    /// on, is routed to that op and rail by POST alone; anything else is not covered.
    #[test]
    fn every_paid_op_and_family_is_routed() {
        let mut paid = 0;
        for family in family::ALL {
            let document = find(Verb::Get, family.document_path).map(|r| r.handler);
            assert_eq!(document, Some(Handler::Document(family)), "{}", family.id);
            if let Some(free) = &family.free {
                let check = find(Verb::Post, free.path).map(|r| r.handler);
                assert_eq!(check, Some(Handler::Free(family)), "{}", free.path);
            }
            for op in family.ops {
                for sold in op.paths {
                    let route = find(Verb::Post, sold.path).map(|r| r.handler);
                    assert_eq!(route, Some(Handler::Paid(op, sold.rail)), "{}", sold.path);
                    assert!(find(Verb::Get, sold.path).is_none(), "{}", sold.path);
                    paid += 1;
                }
            }
        }
        let routed = routes()
            .iter()
            .filter(|r| matches!(r.handler, Handler::Paid(..)))
            .count();
        assert_eq!(routed, paid);
        assert_eq!(paid, 6);
        assert!(find(Verb::Post, "/token-efficiency/catalogue").is_none());
    }

    /// The table's order is the published one (`GET /` and the OpenAPI document list in it).
    #[test]
    fn routes_keep_their_published_order() {
        let paths: Vec<&str> = routes().iter().map(|r| r.path).collect();
        assert_eq!(
            paths,
            [
                "/",
                "/llms.txt",
                "/openapi.json",
                "/.well-known/x402",
                "/metrics",
                "/ready",
                "/mcp",
                "/token-efficiency/criteria",
                "/token-efficiency/precheck",
                "/token-efficiency/budget",
                "/context-composition/criteria",
                "/context-composition/precheck",
                "/context-composition/audit",
                "/context-budget-pack/contract",
                "/context-budget-pack/preflight",
                "/v1/x402/context-budget-pack",
                "/v1/mpp/context-budget-pack",
                "/token-opt/criteria",
                "/token-opt/levers",
                "/token-opt/toon",
            ]
        );
    }
}
