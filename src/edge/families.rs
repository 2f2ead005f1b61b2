//! Dispatch from the route table to the family engines: parse (free validation), the free check,
//! the paid run and the served documents. Every engine refusal crosses as `Box<dyn ClosedError>`.

use crate::edge::error::EdgeError;
use crate::edge::routes::{Family, Handler};
use crate::engine::{ClosedError, Delivery};
use serde_json::{Map, Value};

/// A validated request for one of the family engines.
pub enum Parsed {}

/// A boxed closed refusal.
pub type Refused = Box<dyn ClosedError>;

/// Byte cap of the route's body.
pub fn body_cap(handler: Handler) -> usize {
    match handler {
        _ => 262_144,
    }
}

/// The served criteria (or contract) of `family`, without the signing block.
pub fn document(_family: Family) -> Option<Value> {
    None
}

/// Free validation of `body` for the route's engine.
pub fn parse(_handler: Handler, _body: &[u8]) -> Result<Parsed, Refused> {
    Err(Box::new(EdgeError::NotCovered))
}

/// The caller wallet a free check names.
pub fn caller(parsed: &Parsed) -> Option<&str> {
    match *parsed {}
}

/// The free report, unsigned.
pub fn precheck(parsed: &Parsed, _now_ms: u64) -> Result<Map<String, Value>, Refused> {
    match *parsed {}
}

/// The paid op.
pub fn run(parsed: &Parsed, _now_ms: u64) -> Result<Delivery, Refused> {
    match *parsed {}
}
