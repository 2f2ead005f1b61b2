//! The family engines behind two small traits, so the pipeline runs any of them without naming it:
//! a free check's validated request ([`Checked`]) and a paid op's ([`Runnable`]). The family table
//! (`edge::family`) names each endpoint's parser here. Engine refusals cross as [`Refused`] by `?`.

use crate::edge::error::Refused;
use crate::edge::family::Family;
use crate::engine::{budget_pack, composition, token_efficiency, token_opt, Delivery};
use serde_json::{Map, Value};

/// A free check's validated request.
pub trait Checked {
    /// The caller wallet the body names, where the family's input has such a member.
    fn body_caller(&self) -> Option<&str> {
        None
    }
    /// Gives the request the wallet the free tier counts, where its pre-check needs one.
    fn name_caller(&mut self, _caller: &str) {}
    /// The free report, unsigned.
    fn precheck(&self, now_ms: u64) -> Result<Map<String, Value>, Refused>;
}

/// A paid op's validated request.
pub trait Runnable {
    fn run(&self, now_ms: u64) -> Result<Delivery, Refused>;
}

impl Checked for token_efficiency::Request {
    fn body_caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }
    fn name_caller(&mut self, caller: &str) {
        self.caller.get_or_insert_with(|| caller.to_owned());
    }
    fn precheck(&self, now_ms: u64) -> Result<Map<String, Value>, Refused> {
        Ok(token_efficiency::precheck(self, now_ms)?)
    }
}

impl Runnable for token_efficiency::Request {
    fn run(&self, now_ms: u64) -> Result<Delivery, Refused> {
        Ok(token_efficiency::run(self, now_ms)?)
    }
}

impl Checked for composition::Request {
    fn body_caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }
    fn precheck(&self, now_ms: u64) -> Result<Map<String, Value>, Refused> {
        Ok(composition::precheck(self, now_ms)?)
    }
}

impl Runnable for composition::Request {
    fn run(&self, now_ms: u64) -> Result<Delivery, Refused> {
        Ok(composition::run(self, now_ms)?)
    }
}

impl Checked for budget_pack::Request {
    fn precheck(&self, now_ms: u64) -> Result<Map<String, Value>, Refused> {
        Ok(budget_pack::precheck(self, now_ms)?)
    }
}

impl Runnable for budget_pack::Request {
    fn run(&self, now_ms: u64) -> Result<Delivery, Refused> {
        Ok(budget_pack::run(self, now_ms)?)
    }
}

impl Runnable for token_opt::LeversRequest {
    fn run(&self, now_ms: u64) -> Result<Delivery, Refused> {
        Ok(token_opt::run_levers(self, now_ms)?)
    }
}

impl Runnable for token_opt::ToonRequest {
    fn run(&self, now_ms: u64) -> Result<Delivery, Refused> {
        Ok(token_opt::run_toon(self, now_ms)?)
    }
}

pub fn token_efficiency_check(body: &[u8]) -> Result<Box<dyn Checked>, Refused> {
    Ok(Box::new(token_efficiency::parse(body)?))
}

pub fn token_efficiency_budget(body: &[u8]) -> Result<Box<dyn Runnable>, Refused> {
    Ok(Box::new(token_efficiency::parse_for_budget(body)?))
}

pub fn composition_check(body: &[u8]) -> Result<Box<dyn Checked>, Refused> {
    Ok(Box::new(composition::parse(body)?))
}

pub fn composition_audit(body: &[u8]) -> Result<Box<dyn Runnable>, Refused> {
    Ok(Box::new(composition::parse(body)?))
}

pub fn pack_check(body: &[u8]) -> Result<Box<dyn Checked>, Refused> {
    Ok(Box::new(budget_pack::parse(body)?))
}

pub fn pack_run(body: &[u8]) -> Result<Box<dyn Runnable>, Refused> {
    Ok(Box::new(budget_pack::parse(body)?))
}

pub fn levers(body: &[u8]) -> Result<Box<dyn Runnable>, Refused> {
    Ok(Box::new(token_opt::parse_levers(body)?))
}

pub fn toon(body: &[u8]) -> Result<Box<dyn Runnable>, Refused> {
    Ok(Box::new(token_opt::parse_toon(body)?))
}

/// The free check's wallet, decided before the allowance is touched: the body's `caller` where the
/// family's input has one, else `header` (the non-empty `X-Caller`), on every family alike. It must
/// be a Solana or an EVM address (counted under its lower-case form). The wallet is given to the
/// request (token-efficiency's pre-check requires one), so a wallet named only in the header is
/// answered like one in the body.
pub fn free_caller(
    checked: &mut dyn Checked,
    family: &Family,
    header: Option<String>,
) -> Result<String, Refused> {
    let in_body = family
        .caller
        .in_body
        .then(|| checked.body_caller().map(str::to_owned))
        .flatten();
    let caller = in_body
        .or(header)
        .ok_or_else(|| (family.caller.refusal)(false))?;
    if !crate::engine::wallet::is_wallet_address(&caller) {
        return Err((family.caller.refusal)(true));
    }
    checked.name_caller(&caller);
    Ok(crate::engine::wallet::allowance_name(&caller))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::family;

    /// 32 zero bytes in base58: a valid Solana address.
    const WALLET: &str = "11111111111111111111111111111111";
    const OTHER_WALLET: &str = "11111111111111111111111111111112";

    fn free_bodies() -> [(&'static Family, String); 3] {
        [
            (
                &family::TOKEN_EFFICIENCY,
                r#"{"payload":"a b c","budget_tokens":5}"#.to_owned(),
            ),
            (
                &family::CONTEXT_COMPOSITION,
                r#"{"envelope_version":"context-composition-envelope/1","declared_format_id":"anthropic-messages","record":[{"role":"user","content":"hi"}]}"#.to_owned(),
            ),
            (
                &family::BUDGET_PACK,
                r#"{"sources":[{"id":"s","text":"abcd"}],"candidates":[{"id":"c","sourceId":"s","start":0,"end":4,"costUnits":1}],"budgetUnits":5}"#.to_owned(),
            ),
        ]
    }

    fn parsed(family: &Family, body: &str) -> Box<dyn Checked> {
        let free = family.free.as_ref().expect("a free check");
        match (free.body.parse)(body.as_bytes()) {
            Ok(parsed) => parsed,
            Err(refused) => panic!("{}: {}", family.id, refused.code()),
        }
    }

    #[test]
    fn a_wallet_in_the_header_alone_serves_every_free_check() {
        for (family, body) in free_bodies() {
            let missing = free_caller(&mut *parsed(family, &body), family, None);
            assert_eq!(missing.err().map(|r| r.code()), Some("caller_missing"));
            let invalid = free_caller(&mut *parsed(family, &body), family, Some("0OIl".into()));
            assert_eq!(invalid.err().map(|r| r.code()), Some("caller_invalid"));
            let mut request = parsed(family, &body);
            let wallet = free_caller(&mut *request, family, Some(WALLET.into()));
            assert_eq!(wallet.ok().as_deref(), Some(WALLET), "{}", family.id);
            // The pre-check answers it: nothing is left to refuse after the allowance.
            let report = request.precheck(0);
            assert!(report.is_ok(), "{}", family.id);
            // An EVM address is a wallet too, counted under its lower-case form.
            let evm = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
            let mut request = parsed(family, &body);
            let wallet = free_caller(&mut *request, family, Some(evm.into()));
            let folded = evm.to_ascii_lowercase();
            assert_eq!(
                wallet.ok().as_deref(),
                Some(folded.as_str()),
                "{}",
                family.id
            );
            assert!(request.precheck(0).is_ok(), "{}", family.id);
            let short = free_caller(&mut *parsed(family, &body), family, Some(evm[..41].into()));
            assert_eq!(short.err().map(|r| r.code()), Some("caller_invalid"));
        }
    }

    #[test]
    fn a_body_caller_outranks_the_header() {
        let body = format!(r#"{{"payload":"a b c","budget_tokens":5,"caller":"{WALLET}"}}"#);
        let mut request = parsed(&family::TOKEN_EFFICIENCY, &body);
        let wallet = free_caller(
            &mut *request,
            &family::TOKEN_EFFICIENCY,
            Some(OTHER_WALLET.into()),
        );
        assert_eq!(wallet.ok().as_deref(), Some(WALLET));
    }
}
