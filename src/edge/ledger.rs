//! The D1 payments ledger: one row per delivered paid call, in the family's table, holding exactly
//! the closed field list of its criteria — payment facts from the edge plus the counts, sizes, op and
//! verdict line the engine hands over. Never any submitted content, fragment or hash.

use crate::edge::family::Family;
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::outbox::{transaction_reference, PendingRow};
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

fn js(value: &LedgerValue) -> JsValue {
    match value {
        LedgerValue::Int(n) => JsValue::from_f64(*n as f64),
        LedgerValue::Text(s) => JsValue::from_str(s),
        LedgerValue::Null => JsValue::NULL,
    }
}

/// The payment columns' values: the CAD fair-market-value block is pending until a review fills
/// it; the transaction reference names the chain, and says so when the payment was not delivered.
pub fn payment_values(row: &PendingRow, facts: &SettledFacts, delivered: bool) -> Vec<LedgerValue> {
    vec![
        LedgerValue::Text(facts.payer.clone()),
        LedgerValue::Int(row.ts_ms as i64),
        LedgerValue::Text(crate::engine::time::utc_day(row.ts_ms)),
        LedgerValue::Int(row.price_units as i64),
        LedgerValue::Null,
        LedgerValue::Null,
        LedgerValue::Null,
        LedgerValue::Int(1),
        LedgerValue::Int(0),
        LedgerValue::Text(transaction_reference(
            &row.network,
            &facts.tx_sig,
            delivered,
        )),
        LedgerValue::Int(facts.fee_lamports as i64),
        LedgerValue::Int(i64::from(facts.house)),
    ]
}

/// The row a paid call will owe once its payment settles: the family's table and closed columns.
pub fn pending_row(
    family: &Family,
    network: &str,
    price_units: u64,
    ts_ms: u64,
    engine_columns: &[(&'static str, LedgerValue)],
) -> PendingRow {
    PendingRow {
        table: family.ledger_table.to_owned(),
        network: network.to_owned(),
        price_units,
        ts_ms,
        columns: engine_columns
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect(),
    }
}

/// The columns of the family's ledger table, in order: the payment columns, then the family's.
pub fn columns(family: &Family) -> Vec<&'static str> {
    PAYMENT_COLUMNS
        .iter()
        .chain(family.ledger_columns)
        .copied()
        .collect()
}

/// True when `table` is one of the families' ledger tables (the outbox's row names its table;
/// only a table from the family table is ever written).
fn known_table(table: &str) -> bool {
    crate::edge::family::ALL
        .iter()
        .any(|family| family.ledger_table == table)
}

/// True when every column name is a closed column of the ledger (letters, digits, underscore).
fn closed_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Writes one payment's ledger row, idempotently (the reference is UNIQUE). A delivered row
/// replaces the payment's settled-undelivered row in the same batch; an undelivered row is written
/// only while the payment has no delivered row. So one payment has one row, whoever writes it
/// (the worker on delivery, or its record's alarm) and in whatever order.
pub async fn write(
    env: &Env,
    row: &PendingRow,
    facts: &SettledFacts,
    delivered: bool,
) -> worker::Result<()> {
    if !known_table(&row.table) || !row.columns.iter().all(|(name, _)| closed_name(name)) {
        return Err(worker::Error::RustError("ledger row not closed".into()));
    }
    let mut names: Vec<&str> = PAYMENT_COLUMNS.to_vec();
    let mut values = payment_values(row, facts, delivered);
    for (name, value) in &row.columns {
        names.push(name);
        values.push(value.clone());
    }
    let placeholders: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    let bound: Vec<JsValue> = values.iter().map(js).collect();
    let table = &row.table;
    let columns = names.join(", ");
    let db = env.d1("DB")?;
    let delivered_ref = transaction_reference(&row.network, &facts.tx_sig, true);
    let undelivered_ref = transaction_reference(&row.network, &facts.tx_sig, false);
    if delivered {
        let delete = db
            .prepare(format!("DELETE FROM {table} WHERE tx_sig = ?1"))
            .bind(&[JsValue::from_str(&undelivered_ref)])?;
        let insert = db
            .prepare(format!(
                "INSERT OR IGNORE INTO {table} ({columns}) VALUES ({})",
                placeholders.join(", ")
            ))
            .bind(&bound)?;
        db.batch(vec![delete, insert]).await?;
    } else {
        let mut bound = bound;
        bound.push(JsValue::from_str(&delivered_ref));
        let guard = names.len() + 1;
        let sql = format!(
            "INSERT OR IGNORE INTO {table} ({columns}) SELECT {} \
             WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE tx_sig = ?{guard})",
            placeholders.join(", ")
        );
        db.prepare(sql).bind(&bound)?.run().await?;
    }
    Ok(())
}
