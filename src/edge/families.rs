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
        | Handler::LlmsTxt
        | Handler::OpenApi
        | Handler::WellKnownX402
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
fn body_caller(parsed: &Parsed) -> Option<&str> {
    match parsed {
        Parsed::TokenEfficiency(r) => r.caller.as_deref(),
        Parsed::Composition(r) => r.caller.as_deref(),
        Parsed::BudgetPack(r) => r.caller.as_deref(),
        Parsed::Levers(_) | Parsed::Toon(_) => None,
    }
}

/// The free check's wallet, decided before the allowance is touched: the body's `caller` where the
/// family's input has one, else `header` (the non-empty `X-Caller`), on every family alike. It must
/// be a Solana or an EVM address (counted under its lower-case form). The wallet is written into a token-efficiency request, whose pre-check
/// requires one, so a wallet named only in the header is answered like one in the body.
pub fn free_caller(
    parsed: &mut Parsed,
    family: Family,
    header: Option<String>,
) -> Result<String, Refused> {
    let caller = body_caller(parsed)
        .map(str::to_owned)
        .or(header)
        .ok_or_else(|| caller_refusal(family, false))?;
    if !crate::engine::wallet::is_wallet_address(&caller) {
        return Err(caller_refusal(family, true));
    }
    if let Parsed::TokenEfficiency(request) = parsed {
        request.caller.get_or_insert_with(|| caller.clone());
    }
    Ok(crate::engine::wallet::allowance_name(&caller))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// 32 zero bytes in base58: a valid Solana address.
    const WALLET: &str = "11111111111111111111111111111111";
    const OTHER_WALLET: &str = "11111111111111111111111111111112";

    fn free_bodies() -> [(Family, String); 3] {
        [
            (
                Family::TokenEfficiency,
                r#"{"payload":"a b c","budget_tokens":5}"#.to_owned(),
            ),
            (
                Family::ContextComposition,
                r#"{"envelope_version":"context-composition-envelope/1","declared_format_id":"anthropic-messages","record":[{"role":"user","content":"hi"}]}"#.to_owned(),
            ),
            (
                Family::BudgetPack,
                r#"{"sources":[{"id":"s","text":"abcd"}],"candidates":[{"id":"c","sourceId":"s","start":0,"end":4,"costUnits":1}],"budgetUnits":5}"#.to_owned(),
            ),
        ]
    }

    fn parsed(family: Family, body: &str) -> Parsed {
        match parse(Handler::Free(family), body.as_bytes()) {
            Ok(parsed) => parsed,
            Err(refused) => panic!("{}: {}", family.id(), refused.code()),
        }
    }

    #[test]
    fn a_wallet_in_the_header_alone_serves_every_free_check() {
        for (family, body) in free_bodies() {
            let missing = free_caller(&mut parsed(family, &body), family, None);
            assert_eq!(missing.err().map(|r| r.code()), Some("caller_missing"));
            let invalid = free_caller(&mut parsed(family, &body), family, Some("0OIl".into()));
            assert_eq!(invalid.err().map(|r| r.code()), Some("caller_invalid"));
            let mut request = parsed(family, &body);
            let wallet = free_caller(&mut request, family, Some(WALLET.into()));
            assert_eq!(wallet.ok().as_deref(), Some(WALLET), "{}", family.id());
            // The pre-check answers it: nothing is left to refuse after the allowance.
            let report = precheck(&request, 0);
            assert!(report.is_ok(), "{}", family.id());
            // An EVM address is a wallet too, counted under its lower-case form.
            let evm = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
            let mut request = parsed(family, &body);
            let wallet = free_caller(&mut request, family, Some(evm.into()));
            let folded = evm.to_ascii_lowercase();
            assert_eq!(
                wallet.ok().as_deref(),
                Some(folded.as_str()),
                "{}",
                family.id()
            );
            assert!(precheck(&request, 0).is_ok(), "{}", family.id());
            let short = free_caller(&mut parsed(family, &body), family, Some(evm[..41].into()));
            assert_eq!(short.err().map(|r| r.code()), Some("caller_invalid"));
        }
    }

    #[test]
    fn a_body_caller_outranks_the_header() {
        let body = format!(r#"{{"payload":"a b c","budget_tokens":5,"caller":"{WALLET}"}}"#);
        let mut request = parsed(Family::TokenEfficiency, &body);
        let wallet = free_caller(
            &mut request,
            Family::TokenEfficiency,
            Some(OTHER_WALLET.into()),
        );
        assert_eq!(wallet.ok().as_deref(), Some(WALLET));
    }
}
