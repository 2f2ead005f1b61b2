//! The route table: the single source of truth for what the worker answers. The router dispatches
//! on it, `GET /` lists it and `/openapi.json` is generated from it, so none of them can drift.

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

/// The four operation families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    TokenEfficiency,
    ContextComposition,
    BudgetPack,
    TokenOpt,
}

impl Family {
    pub const ALL: [Family; 4] = [
        Family::TokenEfficiency,
        Family::ContextComposition,
        Family::BudgetPack,
        Family::TokenOpt,
    ];

    /// Path prefix and ledger/metrics label.
    pub fn id(self) -> &'static str {
        match self {
            Family::TokenEfficiency => "token-efficiency",
            Family::ContextComposition => "context-composition",
            Family::BudgetPack => "context-budget-pack",
            Family::TokenOpt => "token-opt",
        }
    }

    /// Identifier of the criteria (or contract) the family is built to.
    pub fn criteria_id(self) -> &'static str {
        match self {
            Family::TokenEfficiency => "token-efficiency/v1",
            Family::ContextComposition => "context-composition/v1",
            Family::BudgetPack => "context-budget-pack",
            Family::TokenOpt => "token-opt/v1",
        }
    }
}

/// A paid operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaidOp {
    TokenEfficiencyBudget,
    CompositionAudit,
    BudgetPack,
    TokenOptLevers,
    TokenOptToon,
}

impl PaidOp {
    pub fn family(self) -> Family {
        match self {
            PaidOp::TokenEfficiencyBudget => Family::TokenEfficiency,
            PaidOp::CompositionAudit => Family::ContextComposition,
            PaidOp::BudgetPack => Family::BudgetPack,
            PaidOp::TokenOptLevers | PaidOp::TokenOptToon => Family::TokenOpt,
        }
    }

    /// Operation name as printed in the index and the ledger.
    pub fn op(self) -> &'static str {
        match self {
            PaidOp::TokenEfficiencyBudget => "budget",
            PaidOp::CompositionAudit => "audit",
            PaidOp::BudgetPack => "pack",
            PaidOp::TokenOptLevers => "levers",
            PaidOp::TokenOptToon => "toon",
        }
    }

    /// The `[vars]` entry that may override the price.
    pub fn price_var(self) -> &'static str {
        match self {
            PaidOp::TokenEfficiencyBudget => "PRICE_TOKEN_EFFICIENCY_BUDGET",
            PaidOp::CompositionAudit => "PRICE_CONTEXT_COMPOSITION_AUDIT",
            PaidOp::BudgetPack => "PRICE_CONTEXT_BUDGET_PACK",
            PaidOp::TokenOptLevers => "PRICE_TOKEN_OPT_LEVERS",
            PaidOp::TokenOptToon => "PRICE_TOKEN_OPT_TOON",
        }
    }

    /// The published price in USDC base units (6 decimals), as the criteria state it.
    pub fn default_price_units(self) -> u64 {
        match self {
            PaidOp::TokenEfficiencyBudget => 20_000,
            PaidOp::CompositionAudit => 50_000,
            PaidOp::BudgetPack => 5_000,
            PaidOp::TokenOptLevers => 10_000,
            PaidOp::TokenOptToon => 5_000,
        }
    }
}

/// What a route does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    Index,
    /// `/llms.txt`: the index rendered as Markdown for an agent (llmstxt.org layout).
    LlmsTxt,
    OpenApi,
    /// `GET /.well-known/x402`: the paid routes' URLs, for indexers that fan out from it.
    WellKnownX402,
    Metrics,
    /// The family's served criteria or contract document.
    Document(Family),
    /// The family's free check (precheck or preflight), rate-limited by the free tier.
    Free(Family),
    Paid(PaidOp),
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

/// Every route the worker answers. Anything else is `404 NOT COVERED`.
pub const ROUTES: &[Route] = &[
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
        "/token-efficiency/criteria",
        Handler::Document(Family::TokenEfficiency),
        "The served token-efficiency/v1 criteria",
    ),
    post(
        "/token-efficiency/precheck",
        Handler::Free(Family::TokenEfficiency),
        "Free pre-check: signed verdict line, counts, excess, op set",
    ),
    post(
        "/token-efficiency/budget",
        Handler::Paid(PaidOp::TokenEfficiencyBudget),
        "Paid: signed verdict, shaped payload and drop receipt",
    ),
    get(
        "/context-composition/criteria",
        Handler::Document(Family::ContextComposition),
        "The served context-composition/v1 criteria",
    ),
    post(
        "/context-composition/precheck",
        Handler::Free(Family::ContextComposition),
        "Free pre-check: validation and assessability disclosure",
    ),
    post(
        "/context-composition/audit",
        Handler::Paid(PaidOp::CompositionAudit),
        "Paid: signed two-axis composition report of one session record",
    ),
    get(
        "/context-budget-pack/contract",
        Handler::Document(Family::BudgetPack),
        "The served context-budget-pack contract",
    ),
    post(
        "/context-budget-pack/preflight",
        Handler::Free(Family::BudgetPack),
        "Free preflight validation of a pack request",
    ),
    post(
        "/v1/x402/context-budget-pack",
        Handler::Paid(PaidOp::BudgetPack),
        "Paid: pack evidence spans into the caller's cost budget",
    ),
    post(
        crate::engine::payment::mpp::PATH,
        Handler::Paid(PaidOp::BudgetPack),
        "Paid over MPP (Payment auth, tempo charge, push): the same pack as the x402 route",
    ),
    get(
        "/token-opt/criteria",
        Handler::Document(Family::TokenOpt),
        "The served token-opt/v1 criteria",
    ),
    post(
        "/token-opt/levers",
        Handler::Paid(PaidOp::TokenOptLevers),
        "Paid: the token-reduction levers measured in exact cl100k tokens",
    ),
    post(
        "/token-opt/toon",
        Handler::Paid(PaidOp::TokenOptToon),
        "Paid: TOON encoding, or compact JSON when TOON is not fewer tokens",
    ),
];

/// The route for `verb` + `path`, if any. Paths match exactly (no trailing-slash folding).
pub fn find(verb: Verb, path: &str) -> Option<&'static Route> {
    ROUTES.iter().find(|r| r.verb == verb && r.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_unique() {
        for (i, a) in ROUTES.iter().enumerate() {
            for b in &ROUTES[i + 1..] {
                assert!(!(a.verb == b.verb && a.path == b.path), "{} twice", a.path);
            }
        }
    }

    #[test]
    fn every_paid_op_and_family_is_routed() {
        for f in Family::ALL {
            assert!(ROUTES.iter().any(|r| r.handler == Handler::Document(f)));
        }
        assert!(find(Verb::Post, "/token-efficiency/budget").is_some());
        assert!(find(Verb::Get, "/token-efficiency/budget").is_none());
        assert!(find(Verb::Post, "/token-efficiency/catalogue").is_none());
    }
}
