//! The service routes: `GET /`, `/llms.txt`, `/openapi.json`, `/.well-known/x402`, `/metrics` and
//! each family's served document, all generated from the route and family tables.

use super::price_units;
use crate::edge::error::Refused;
use crate::edge::family::Family;
use crate::edge::{config, describe, ledger, metrics, openapi, respond};
use serde_json::{json, Value};
use worker::{Env, Headers, Request, Response};

/// `GET /` with the prices and free-tier limits in force.
fn index_value(env: &Env) -> Result<Value, Refused> {
    let signer = config::signer(env)?;
    Ok(describe::index(
        &signer,
        &|op| price_units(env, op),
        config::free_limits(env),
    ))
}

pub fn index(env: &Env) -> Result<Response, Refused> {
    Ok(respond::json(200, &index_value(env)?)?)
}

pub fn llms_txt(env: &Env) -> Result<Response, Refused> {
    let index = index_value(env)?;
    let headers = Headers::new();
    let _ = headers.set("content-type", "text/markdown; charset=utf-8");
    Ok(Response::ok(describe::llms_txt(&index))?.with_headers(headers))
}

pub fn openapi(env: &Env) -> Result<Response, Refused> {
    let document = openapi::openapi(&|op| price_units(env, op), config::free_limits(env));
    Ok(respond::json(200, &document)?)
}

pub fn well_known_x402(req: &Request) -> Result<Response, Refused> {
    let origin = req.url()?.origin().ascii_serialization();
    Ok(respond::json(200, &describe::well_known_x402(&origin))?)
}

pub fn metrics() -> Result<Response, Refused> {
    let headers = Headers::new();
    let _ = headers.set("content-type", "text/plain; version=0.0.4; charset=utf-8");
    let _ = headers.set("cache-control", "no-store");
    Ok(Response::ok(metrics::render())?.with_headers(headers))
}

/// The family's served criteria or contract, with the signing key, its ledger table and columns,
/// and the payment states, retry rules and payment refusals (ARCHITECTURE §4).
pub fn document(env: &Env, family: &Family) -> Result<Response, Refused> {
    let signer = config::signer(env)?;
    Ok(respond::json(200, &served_document(family, &signer))?)
}

fn served_document(family: &Family, signer: &crate::engine::sign::ReportSigner) -> Value {
    let mut document = (family.document)();
    if let Some(obj) = document.as_object_mut() {
        obj.insert(
            "signing".into(),
            json!({"alg": "Ed25519", "public_key": signer.public_key_b64(), "key_id": signer.key_id()}),
        );
        // The D1 ledger table's columns, in order (an e2e test holds this equal to PRAGMA table_info).
        obj.insert("ledger_table".into(), Value::from(family.ledger_table));
        obj.insert("ledger_columns".into(), json!(ledger::columns(family)));
        obj.insert(
            "payment".into(),
            crate::engine::payment::served::rules(family.key.is_contract()),
        );
    }
    document
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::family;

    /// Every family's served document is an object carrying the table's ledger facts.
    #[test]
    fn every_served_document_carries_the_tables_ledger_facts() {
        let signer = crate::engine::sign::ReportSigner::from_seed(&[7; 32]);
        for family in family::ALL {
            let document = served_document(family, &signer);
            assert_eq!(
                document["ledger_table"], family.ledger_table,
                "{}",
                family.id
            );
            let columns = document["ledger_columns"].as_array().unwrap();
            assert_eq!(
                columns.len(),
                ledger::PAYMENT_COLUMNS.len() + family.ledger_columns.len()
            );
            assert_eq!(document["signing"]["key_id"], signer.key_id());
        }
    }
}
