//! Rendering: the verdict line in the published grammar, the free pre-check headline, the paid
//! budget report with its drop receipt, and the closed ledger columns.
//!
//! Invariants: the verdict line always grades the SUBMITTED payload against the effective budget;
//! the check-end time is `now_ms` as ISO 8601 UTC with milliseconds and `Z`; the pre-check never
//! carries a shaped payload or a receipt; ledger values are counts, the op and the verdict line only.

use super::criteria_doc;
use super::published::LEDGER_COLUMNS;
use super::receipt::{Exhaustion, ReceiptEntry, Shaping};
use super::request::Request;
use crate::engine::time::iso8601_millis;
use crate::engine::LedgerValue;
use serde_json::{json, Map, Value};

/// How the verdict line grades the submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grade {
    Fits,
    Over { excess: u64 },
    NotShapable,
}

/// The verdict line, exactly in the published grammar.
pub fn verdict_line(
    payload_tokens: u64,
    effective_budget: u64,
    grade: Grade,
    now_ms: u64,
) -> String {
    let head = format!(
        "PAYLOAD BUDGET — payload tokens: {payload_tokens} — effective budget: {effective_budget}"
    );
    let middle = match grade {
        Grade::Fits => "FITS".to_owned(),
        Grade::Over { excess } => format!("OVER by {excess}"),
        Grade::NotShapable => "OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS".to_owned(),
    };
    format!("{head} — {middle} — {}", iso8601_millis(now_ms))
}

fn header(op: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("criteria_id".into(), json!(criteria_doc::CRITERIA_ID));
    m.insert(
        "criteria_version".into(),
        json!(criteria_doc::CRITERIA_VERSION),
    );
    m.insert("engine_version".into(), json!(criteria_doc::ENGINE_VERSION));
    m.insert("op".into(), json!(op));
    m.insert("tokenizer".into(), json!(criteria_doc::TOKENIZER_ID));
    m
}

fn budget_fields(m: &mut Map<String, Value>, req: &Request) {
    m.insert("budget_tokens".into(), json!(req.budget_tokens));
    m.insert("reserve_tokens".into(), json!(req.reserve_tokens));
    m.insert("effective_budget".into(), json!(req.effective_budget()));
}

fn closing_lines(m: &mut Map<String, Value>, now_ms: u64) {
    m.insert("checked_at".into(), json!(iso8601_millis(now_ms)));
    let doc = criteria_doc::spec();
    for (name, key) in [
        ("disclosure", "disclosure_sentence"),
        ("retention", "retention"),
        ("honesty", "honesty_line"),
    ] {
        m.insert(name.into(), doc[key].clone());
    }
}

/// The free pre-check headline: `grade` is the budget op's grade of the same request
/// ([`super::grade`]), so the verdict line is the one the op returns.
pub fn precheck_report(
    req: &Request,
    tokens: u64,
    chars: u64,
    grade: Grade,
    now_ms: u64,
) -> Map<String, Value> {
    let budget = req.effective_budget();
    let excess = tokens.saturating_sub(budget);
    let mut m = header("precheck");
    m.insert(
        "verdict".into(),
        json!(verdict_line(tokens, budget, grade, now_ms)),
    );
    m.insert("fits".into(), json!(excess == 0));
    m.insert("operation_set".into(), json!(req.operation_set().label()));
    m.insert("payload_tokens".into(), json!(tokens));
    m.insert("payload_chars".into(), json!(chars));
    budget_fields(&mut m, req);
    m.insert("excess_tokens".into(), json!(excess));
    m.insert(
        "paid_substance".into(),
        json!("The shaped payload and the drop receipt are returned by the paid budget op only."),
    );
    closing_lines(&mut m, now_ms);
    m
}

/// One receipt entry as served, its path moved in; the map is sized once. Its members are put in
/// JCS order (UTF-16 order of their names), the order the signed body writes them in: the writer
/// then finds each entry already in order and sorts none of them (a budget answer can carry
/// hundreds; jsjson's JCS writer sorts only an object that is not). The order a report is built in is seen by no one:
/// every report leaves as its JCS form.
pub fn receipt_entry(entry: ReceiptEntry) -> Value {
    let delta_tokens = entry.delta_tokens();
    let delta_chars = entry.delta_chars();
    let mut m = Map::with_capacity(9);
    m.insert("chars_after".into(), json!(entry.chars_after));
    m.insert("chars_before".into(), json!(entry.chars_before));
    m.insert("delta_chars".into(), json!(delta_chars));
    m.insert("delta_tokens".into(), json!(delta_tokens));
    if let Some(index) = entry.index {
        m.insert("index".into(), json!(index));
    }
    m.insert("op".into(), json!(entry.op.id()));
    m.insert("path".into(), Value::String(entry.path));
    m.insert("tokens_after".into(), json!(entry.tokens_after));
    m.insert("tokens_before".into(), json!(entry.tokens_before));
    Value::Object(m)
}

/// The exhaustion block as served.
pub fn exhaustion_block(e: &Exhaustion, shaping: &Shaping, effective_budget: u64) -> Value {
    json!({
        "protected_fields": e.protected_fields,
        "protected_tokens": e.protected_tokens,
        "protected_chars": e.protected_chars,
        "floor_chars": e.floor_chars,
        "floor_tokens": e.floor_tokens,
        "effective_budget": effective_budget,
        "submitted_tokens": shaping.submitted_tokens,
        "submitted_chars": shaping.submitted_chars,
    })
}

/// The grade of a budget op's result (also the pre-check's, [`super::grade`]).
pub fn grade(shaping: &Shaping, effective_budget: u64) -> Grade {
    if shaping.exhaustion.is_some() {
        Grade::NotShapable
    } else if shaping.submitted_tokens <= effective_budget {
        Grade::Fits
    } else {
        Grade::Over {
            excess: shaping.submitted_tokens - effective_budget,
        }
    }
}

/// The paid report and its ledger columns. The shaped text moves into the report (up to a whole
/// 262 KB payload: it is not copied).
pub fn budget_report(
    req: &Request,
    mut shaping: Shaping,
    now_ms: u64,
) -> (Map<String, Value>, Vec<(&'static str, LedgerValue)>) {
    let shaped_text = std::mem::take(&mut shaping.shaped_text);
    let applications = shaping.applications();
    let receipt = std::mem::take(&mut shaping.receipt);
    let shaping = &shaping;
    let budget = req.effective_budget();
    let verdict = verdict_line(
        shaping.submitted_tokens,
        budget,
        grade(shaping, budget),
        now_ms,
    );
    let total: u64 = applications.iter().sum();
    let mut m = header("budget");
    m.insert("verdict".into(), json!(verdict));
    m.insert("fits".into(), json!(shaping.submitted_tokens <= budget));
    m.insert("operation_set".into(), json!(req.operation_set().label()));
    m.insert(
        "submitted".into(),
        json!({"tokens": shaping.submitted_tokens, "chars": shaping.submitted_chars}),
    );
    budget_fields(&mut m, req);
    m.insert(
        "excess_tokens".into(),
        json!(shaping.submitted_tokens.saturating_sub(budget)),
    );
    m.insert(
        "shaped".into(),
        json!({
            "tokens": shaping.shaped_tokens,
            "chars": shaping.shaped_chars,
            "within_budget": shaping.shaped_tokens <= budget,
        }),
    );
    m.insert("shaped_payload".into(), Value::String(shaped_text));
    m.insert(
        "receipt".into(),
        Value::Array(receipt.into_iter().map(receipt_entry).collect()),
    );
    m.insert(
        "applications".into(),
        json!({
            "S-1": applications[0],
            "S-2": applications[1],
            "S-3": applications[2],
            "S-4": applications[3],
            "total": total,
        }),
    );
    if let Some(e) = &shaping.exhaustion {
        m.insert("exhaustion".into(), exhaustion_block(e, shaping, budget));
    }
    m.insert(
        "semantic_loss_disclosure".into(),
        criteria_doc::spec()["semantic_loss_disclosure"].clone(),
    );
    closing_lines(&mut m, now_ms);

    let int = |v: u64| LedgerValue::Int(v as i64);
    let values = vec![
        LedgerValue::Text(format!(
            "{}@{}",
            criteria_doc::CRITERIA_ID,
            criteria_doc::CRITERIA_VERSION
        )),
        LedgerValue::Text("budget".to_owned()),
        LedgerValue::Text(verdict),
        int(req.body_bytes),
        int(req.payload_chars),
        int(applications[0]),
        int(applications[1]),
        int(applications[2]),
        int(applications[3]),
        int(total),
        int(shaping.submitted_tokens),
        int(shaping.shaped_tokens),
        int(shaping.submitted_chars),
        int(shaping.shaped_chars),
    ];
    let ledger = LEDGER_COLUMNS.iter().copied().zip(values).collect();
    (m, ledger)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_grammar_is_exact() {
        assert_eq!(
            verdict_line(120, 100, Grade::Over { excess: 20 }, 1_796_216_991_123),
            "PAYLOAD BUDGET — payload tokens: 120 — effective budget: 100 — OVER by 20 — 2026-12-02T13:09:51.123Z"
        );
        assert_eq!(
            verdict_line(100, 100, Grade::Fits, 0),
            "PAYLOAD BUDGET — payload tokens: 100 — effective budget: 100 — FITS — 1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            verdict_line(7, 3, Grade::NotShapable, 0),
            "PAYLOAD BUDGET — payload tokens: 7 — effective budget: 3 — OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS — 1970-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn receipt_entries_are_built_in_the_order_they_are_served() {
        use crate::engine::jsjson::to_jcs;
        use crate::engine::token_efficiency::ops::Op;
        for (op, index) in [
            (Op::S1, Some(3)),
            (Op::S2, None),
            (Op::S3, None),
            (Op::S4, None),
        ] {
            let entry = receipt_entry(ReceiptEntry {
                op,
                path: "$.a[0].b".to_owned(),
                index,
                chars_before: 40,
                chars_after: 12,
                tokens_before: 9,
                tokens_after: 4,
            });
            // As built (insertion order) = as served (JCS): the writer has nothing to sort.
            assert_eq!(serde_json::to_string(&entry).unwrap(), to_jcs(&entry));
            assert_eq!(
                entry.as_object().unwrap().len(),
                8 + usize::from(index.is_some())
            );
        }
    }
}
