//! The D1 payments ledger: one row per delivered paid call, in the family's table, holding exactly
//! the closed field list of its criteria — payment facts from the edge plus the counts, sizes, op and
//! verdict line the engine hands over. Never any submitted content, fragment or hash.

use crate::edge::family::Family;
use crate::engine::LedgerValue;
use wasm_bindgen::JsValue;
use worker::{wasm_bindgen, Env};

/// Payment columns every family table starts with, in order.
pub const PAYMENT_COLUMNS: [&str; 12] = [
    "payer",
    "ts_ms",
    "day",
    "price_usdc_units",
    "cad_rate",
    "cad_rate_date",
    "cad_basis",
    "cad_pending",
    "refund_usdc_units",
    "tx_sig",
    "fee_lamports",
    "house",
];

/// The payment facts of one delivered call.
#[derive(Debug, Clone)]
pub struct PaymentFacts {
    pub payer: String,
    pub ts_ms: u64,
    pub price_usdc_units: u64,
    pub tx_sig: String,
    pub fee_lamports: u64,
    pub house: bool,
}

fn js(value: &LedgerValue) -> JsValue {
    match value {
        LedgerValue::Int(n) => JsValue::from_f64(*n as f64),
        LedgerValue::Text(s) => JsValue::from_str(s),
        LedgerValue::Null => JsValue::NULL,
    }
}

/// The payment columns' values: the CAD fair-market-value block is pending until a review fills it.
pub fn payment_values(facts: &PaymentFacts) -> Vec<LedgerValue> {
    vec![
        LedgerValue::Text(facts.payer.clone()),
        LedgerValue::Int(facts.ts_ms as i64),
        LedgerValue::Text(crate::engine::time::utc_day(facts.ts_ms)),
        LedgerValue::Int(facts.price_usdc_units as i64),
        LedgerValue::Null,
        LedgerValue::Null,
        LedgerValue::Null,
        LedgerValue::Int(1),
        LedgerValue::Int(0),
        LedgerValue::Text(facts.tx_sig.clone()),
        LedgerValue::Int(facts.fee_lamports as i64),
        LedgerValue::Int(i64::from(facts.house)),
    ]
}

/// The columns of the family's ledger table, in order: the payment columns, then the family's.
pub fn columns(family: &Family) -> Vec<&'static str> {
    PAYMENT_COLUMNS
        .iter()
        .chain(family.ledger_columns)
        .copied()
        .collect()
}

/// Writes one ledger row. Column names are static strings from code, never from a request.
pub async fn record(
    env: &Env,
    family: &Family,
    facts: &PaymentFacts,
    engine_columns: &[(&'static str, LedgerValue)],
) -> worker::Result<()> {
    let mut names: Vec<&str> = PAYMENT_COLUMNS.to_vec();
    let mut values = payment_values(facts);
    for (name, value) in engine_columns {
        names.push(name);
        values.push(value.clone());
    }
    let placeholders: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT OR IGNORE INTO {} ({}) VALUES ({})",
        family.ledger_table,
        names.join(", "),
        placeholders.join(", ")
    );
    let bound: Vec<JsValue> = values.iter().map(js).collect();
    env.d1("DB")?.prepare(&sql).bind(&bound)?.run().await?;
    Ok(())
}
