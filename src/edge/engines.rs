//! The family engines behind two small traits, so the pipeline runs any of them without naming it:
//! a free check's validated request ([`Checked`]) and a paid op's ([`Runnable`]). The family table
//! (`edge::family`) names each endpoint's parser here. Engine refusals cross as [`Refused`] by `?`.

use crate::edge::error::Refused;
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
