//! Dispatch from the route table to the family engines: parse (free validation), the free check,
//! the paid run and the served documents. Every engine refusal crosses as `Box<dyn ClosedError>`.

use crate::edge::routes::{Family, Handler, PaidOp};
use crate::engine::{budget_pack, composition, token_efficiency, token_opt};
use crate::engine::{ClosedError, Delivery};
use serde_json::{Map, Value};

/// A validated request for one of the family engines.
pub enum Parsed {
    TokenEfficiency(token_efficiency::Request),
    Composition(Box<composition::Request>),
    BudgetPack(budget_pack::Request),
    Levers(Box<token_opt::LeversRequest>),
    Toon(token_opt::ToonRequest),
}

/// A boxed closed refusal.
pub type Refused = Box<dyn ClosedError>;

/// Byte cap of the route's body (the family's published cap).
pub fn body_cap(handler: Handler) -> usize {
    match handler {
        Handler::Free(Family::TokenEfficiency) | Handler::Paid(PaidOp::TokenEfficiencyBudget) => {
            token_efficiency::BODY_CAP
        }
        Handler::Free(Family::ContextComposition) | Handler::Paid(PaidOp::CompositionAudit) => {
            composition::BODY_CAP
        }
        Handler::Free(Family::BudgetPack) | Handler::Paid(PaidOp::BudgetPack) => {
            budget_pack::BODY_CAP
        }
        Handler::Paid(PaidOp::TokenOptLevers) => token_opt::LEVERS_BODY_CAP,
        Handler::Paid(PaidOp::TokenOptToon) => token_opt::TOON_BODY_CAP,
        Handler::Free(Family::TokenOpt)
        | Handler::Index
        | Handler::OpenApi
        | Handler::Metrics
        | Handler::Document(_) => 0,
    }
}

/// The family's closed ledger columns (after the edge's payment columns).
pub fn ledger_columns(family: Family) -> &'static [&'static str] {
    match family {
        Family::TokenEfficiency => token_efficiency::LEDGER_COLUMNS,
        Family::ContextComposition => composition::LEDGER_COLUMNS,
        Family::BudgetPack => budget_pack::LEDGER_COLUMNS,
        Family::TokenOpt => token_opt::LEDGER_COLUMNS,
    }
}

/// The served criteria (or contract) of `family`, without the signing block.
pub fn document(family: Family) -> Option<Value> {
    Some(match family {
        Family::TokenEfficiency => token_efficiency::criteria(),
        Family::ContextComposition => composition::criteria(),
        Family::BudgetPack => budget_pack::criteria(),
        Family::TokenOpt => token_opt::criteria(),
    })
}

fn boxed<T, E: ClosedError + 'static>(r: Result<T, E>) -> Result<T, Refused> {
    r.map_err(|e| Box::new(e) as Refused)
}

/// Free validation of `body` for the route's engine.
pub fn parse(handler: Handler, body: &[u8]) -> Result<Parsed, Refused> {
    Ok(match handler {
        Handler::Free(Family::TokenEfficiency) => {
            Parsed::TokenEfficiency(boxed(token_efficiency::parse(body))?)
        }
        Handler::Paid(PaidOp::TokenEfficiencyBudget) => {
            Parsed::TokenEfficiency(boxed(token_efficiency::parse_for_budget(body))?)
        }
        Handler::Free(Family::ContextComposition) | Handler::Paid(PaidOp::CompositionAudit) => {
            Parsed::Composition(Box::new(boxed(composition::parse(body))?))
        }
        Handler::Free(Family::BudgetPack) | Handler::Paid(PaidOp::BudgetPack) => {
            Parsed::BudgetPack(boxed(budget_pack::parse(body))?)
        }
        Handler::Paid(PaidOp::TokenOptLevers) => {
            Parsed::Levers(Box::new(boxed(token_opt::parse_levers(body))?))
        }
        Handler::Paid(PaidOp::TokenOptToon) => Parsed::Toon(boxed(token_opt::parse_toon(body))?),
        _ => return Err(Box::new(crate::edge::error::EdgeError::NotCovered)),
    })
}

/// The caller wallet a free check names in its body, if the family's input carries one.
pub fn caller(parsed: &Parsed) -> Option<&str> {
    match parsed {
        Parsed::TokenEfficiency(r) => r.caller.as_deref(),
        Parsed::Composition(r) => r.caller.as_deref(),
        Parsed::BudgetPack(r) => r.caller.as_deref(),
        Parsed::Levers(_) | Parsed::Toon(_) => None,
    }
}

/// The free report, unsigned.
pub fn precheck(parsed: &Parsed, now_ms: u64) -> Result<Map<String, Value>, Refused> {
    match parsed {
        Parsed::TokenEfficiency(r) => boxed(token_efficiency::precheck(r, now_ms)),
        Parsed::Composition(r) => boxed(composition::precheck(r, now_ms)),
        Parsed::BudgetPack(r) => boxed(budget_pack::precheck(r, now_ms)),
        Parsed::Levers(_) | Parsed::Toon(_) => {
            Err(Box::new(crate::edge::error::EdgeError::NotCovered))
        }
    }
}

/// The paid op.
pub fn run(parsed: &Parsed, now_ms: u64) -> Result<Delivery, Refused> {
    match parsed {
        Parsed::TokenEfficiency(r) => boxed(token_efficiency::run(r, now_ms)),
        Parsed::Composition(r) => boxed(composition::run(r, now_ms)),
        Parsed::BudgetPack(r) => boxed(budget_pack::run(r, now_ms)),
        Parsed::Levers(r) => boxed(token_opt::run_levers(r, now_ms)),
        Parsed::Toon(r) => boxed(token_opt::run_toon(r, now_ms)),
    }
}

/// The family's own refusal for a body over its cap (`seen` bytes declared or read).
pub fn over_cap(handler: Handler, seen: u64) -> Refused {
    let cap = body_cap(handler);
    match handler {
        Handler::Free(Family::TokenEfficiency) | Handler::Paid(PaidOp::TokenEfficiencyBudget) => {
            Box::new(token_efficiency::Refusal::BodyOverCap)
        }
        Handler::Free(Family::ContextComposition) | Handler::Paid(PaidOp::CompositionAudit) => {
            Box::new(composition::Refusal::BodyOverCap { body_bytes: seen })
        }
        Handler::Free(Family::BudgetPack) | Handler::Paid(PaidOp::BudgetPack) => {
            Box::new(budget_pack::Refusal::EdgeLimit)
        }
        Handler::Paid(PaidOp::TokenOptLevers | PaidOp::TokenOptToon) => {
            Box::new(token_opt::Refusal::BodyTooLarge { cap })
        }
        _ => Box::new(crate::edge::error::EdgeError::BodyTooLarge { cap: cap as u64 }),
    }
}

/// The family's own refusal for a free check without a usable caller wallet, where it has one.
pub fn caller_refusal(family: Family, present_but_invalid: bool) -> Refused {
    match (family, present_but_invalid) {
        (Family::TokenEfficiency, true) => Box::new(token_efficiency::Refusal::CallerInvalid),
        (Family::TokenEfficiency, false) => Box::new(token_efficiency::Refusal::CallerMissing),
        (Family::ContextComposition, true) => Box::new(composition::Refusal::CallerInvalid),
        (_, true) => Box::new(crate::edge::CallerInvalid),
        (_, false) => Box::new(crate::edge::CallerMissing),
    }
}
