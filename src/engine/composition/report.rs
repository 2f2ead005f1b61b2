//! Report assembly: the free pre-check, the paid audit (200) and the could-not-measure shape (422),
//! the factor table F-1..F-12 with per-factor assessability, the measurement line and the ledger
//! columns.
//!
//! Invariants: factors print in order, each ASSESSABLE, PARTIAL (printed with its restriction),
//! NOT-ASSESSABLE (with its reason, never omitted, never zero-filled) or, for F-11,
//! NOT-ASSESSABLE-BY-DESIGN; the measurement line carries LIMITED whenever analysis graded factor is not
//! fully assessable; published sentences are printed verbatim from the criteria text.

use super::classify::{P_CMPT, P_RETR, P_STRUCTURAL, P_TDEF, P_TRES};
use super::envelope::{Request, ENVELOPE_VERSION};
use super::metrics::{self, est, share, Analysis};
use super::record::{Format, Level};
use super::{criteria, ENTRY_BYTES_CAP, ENTRY_CAP, LEDGER_COLUMNS};
use crate::engine::{Delivery, LedgerValue};
use serde_json::{json, Map, Value};

pub const CRITERIA_ID: &str = "context-composition/v1";
pub const CRITERIA_REVISION: &str = "1.0.0";

/// Assessability of one factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Assessable,
    Partial(&'static str),
    NotAssessable(&'static str),
    NotAssessableByDesign,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Assessable => "ASSESSABLE",
            Status::Partial(_) => "PARTIAL",
            Status::NotAssessable(_) => "NOT-ASSESSABLE",
            Status::NotAssessableByDesign => "NOT-ASSESSABLE-BY-DESIGN",
        }
    }
}

/// Factor id, metric id, name.
pub const FACTORS: [(&str, &str, &str); 13] = [
    ("F-1", "M03", "axis-P composition shares"),
    ("F-2", "M04", "axis-C composition shares"),
    ("F-2b", "M05", "P x C cross-tabulation"),
    ("F-3", "M06", "per-message size distribution"),
    ("F-4", "M08", "exact duplication"),
    ("F-5", "M07", "growth across turns"),
    ("F-6", "M09", "near duplication"),
    ("F-7", "M10", "embedded-blob census"),
    ("F-8", "M11", "tool-definition share"),
    ("F-9", "M14", "position/depth facts"),
    ("F-10", "M12", "stated-vs-measured agreement"),
    ("F-11", "", "not assessable by design in v1"),
    ("F-12", "M15", "largest single block"),
];

const REASON_ANTHROPIC_ROLES: &str =
    "anthropic-messages is L0: role-list classes only; structural zero rows print 'not identifiable at this level'";
const REASON_GENERIC_ROLES: &str =
    "generic-message-list below L2 (no kind fields and no schema section): structural zero rows print 'not identifiable at this level'";
const REASON_F8_ANTHROPIC: &str =
    "definitions submitted as prose in a system message are P-SYS, not P-TDEF; the absence note is mandatory";
const REASON_F8_GENERIC: &str =
    "generic-message-list below L2: tool definitions are identifiable only from a schema section or kind fields; the absence note is mandatory";
const REASON_F9: &str =
    "P at this level: a P-CMPT absence prints 'no P-CMPT block identified at this level'";
const REASON_NO_USER: &str = "NOT-ASSESSABLE (single turn): no P-USER message in the record";
const REASON_NO_STATED: &str = "NOT-ASSESSABLE (no stated counts): NO-STATED-COUNT";
const REASON_NEAR_DUPLICATE_BUDGET: &str =
    "NOT-ASSESSABLE (work budget): the exact near-duplicate join would exceed its published work budget of 250000000 steps for this record";
const F11_REASON: &str =
    "NOT-ASSESSABLE-BY-DESIGN in v1 for every format (no master-table flag rules exist); excluded from the LIMITED trigger";

/// The record's level as reported.
pub fn level(req: &Request) -> Level {
    req.record.level
}

/// Per-factor assessability for this submission (F-1..F-12 in order).
pub fn statuses(
    req: &Request,
    analysis: &Analysis,
    near_duplicates_over_budget: bool,
) -> Vec<Status> {
    let rec = &req.record;
    let roles_only = match rec.format {
        Format::LettaAf => None,
        Format::AnthropicMessages => Some(REASON_ANTHROPIC_ROLES),
        Format::GenericMessageList => (rec.level < Level::L2).then_some(REASON_GENERIC_ROLES),
    };
    let f8_tool_definitions = match rec.format {
        Format::LettaAf => None,
        Format::AnthropicMessages => rec.schema.is_none().then_some(REASON_F8_ANTHROPIC),
        Format::GenericMessageList => (rec.level < Level::L2).then_some(REASON_F8_GENERIC),
    };
    let partial_or = |r: Option<&'static str>| r.map_or(Status::Assessable, Status::Partial);
    let stated = req.stated().any();
    vec![
        partial_or(roles_only),
        Status::Assessable,
        partial_or(roles_only),
        Status::Assessable,
        Status::Assessable,
        if analysis.has_user_message() {
            Status::Assessable
        } else {
            Status::NotAssessable(REASON_NO_USER)
        },
        if near_duplicates_over_budget {
            Status::NotAssessable(REASON_NEAR_DUPLICATE_BUDGET)
        } else {
            Status::Assessable
        },
        Status::Assessable,
        partial_or(f8_tool_definitions),
        partial_or(roles_only.map(|_| REASON_F9)),
        if stated {
            Status::Assessable
        } else {
            Status::NotAssessable(REASON_NO_STATED)
        },
        Status::NotAssessableByDesign,
        Status::Assessable,
    ]
}

/// Structural classes analysis record of this format and level cannot show: their zero rows print
/// 'not identifiable at this level'. L1 (roles plus tool call / tool result parts) identifies
/// P-TCALL and P-TRES.
pub fn unidentifiable_classes(req: &Request) -> &'static [usize] {
    const ALL: &[usize] = &P_STRUCTURAL;
    const AT_L1: &[usize] = &[P_TDEF, P_CMPT, P_RETR];
    match (req.record.format, req.record.level) {
        (Format::LettaAf, _) | (Format::GenericMessageList, Level::L2) => &[],
        (Format::GenericMessageList, Level::L1) => AT_L1,
        _ => ALL,
    }
}

/// could-not-measure (rule, kind) for this submission, if any.
pub fn could_not_measure(
    req: &Request,
    analysis: &Analysis,
) -> Option<(&'static str, &'static str)> {
    let n = req.record.messages.len();
    if n > ENTRY_CAP {
        Some(("R-7", "too_many_entries"))
    } else if analysis.largest_entry_bytes > ENTRY_BYTES_CAP {
        Some(("R-7", "entry_too_large"))
    } else if n == 0 {
        Some(("R-8", "zero_entries"))
    } else if !analysis.any_text {
        Some(("R-9", "nothing_assessable"))
    } else {
        None
    }
}

fn insert(map: &mut Map<String, Value>, k: &str, v: Value) {
    map.insert(k.to_owned(), v);
}

/// Copies members of the published criteria into the report: (report member, criteria member).
fn copy_published(report: &mut Map<String, Value>, members: &[(&str, &str)]) {
    let published = criteria::published();
    for (name, member) in members {
        insert(report, name, published[member].clone());
    }
}

fn header(kind: &str, req: &Request, analysis: &Analysis, now_ms: u64) -> Map<String, Value> {
    let published = criteria::published();
    let mut report = Map::new();
    insert(&mut report, "report", json!(kind));
    insert(&mut report, "criteria_id", json!(CRITERIA_ID));
    insert(&mut report, "criteria_revision", json!(CRITERIA_REVISION));
    insert(&mut report, "estimation_method", json!("EM-1"));
    insert(
        &mut report,
        "issued_at",
        json!(crate::engine::time::iso8601_millis(now_ms)),
    );
    insert(
        &mut report,
        "declared_format",
        json!({"id": req.format.id(), "accepted": true, "level": level(req).label()}),
    );
    insert(
        &mut report,
        "envelope",
        json!({"version": ENVELOPE_VERSION, "unknown_fields_ignored": req.unknown_members}),
    );
    let mut record = Map::new();
    insert(&mut record, "entries", json!(req.record.messages.len()));
    if let Some(agents) = req.record.agents {
        insert(&mut record, "agents", json!(agents));
    }
    insert(&mut record, "body_bytes", json!(req.body_bytes));
    insert(&mut record, "text_bytes", json!(analysis.text_bytes));
    insert(&mut report, "record", Value::Object(record));
    insert(
        &mut report,
        "labelling",
        published["estimation_method"]["labelling"].clone(),
    );
    report
}

fn could_not_measure_block(req: &Request, rule: &str, kind: &str) -> Value {
    let mut block = Map::new();
    insert(&mut block, "rule", json!(rule));
    insert(&mut block, "kind", json!(kind));
    match kind {
        "too_many_entries" => {
            insert(&mut block, "entries", json!(req.record.messages.len()));
            insert(&mut block, "cap_entries", json!(ENTRY_CAP));
        }
        "entry_too_large" => insert(&mut block, "cap_entry_bytes", json!(ENTRY_BYTES_CAP)),
        _ => {}
    }
    Value::Object(block)
}

fn factor_head(i: usize, s: Status) -> Map<String, Value> {
    let (id, metric, name) = FACTORS[i];
    let mut head = Map::new();
    insert(&mut head, "factor", json!(id));
    insert(
        &mut head,
        "metric",
        if metric.is_empty() {
            Value::Null
        } else {
            json!(metric)
        },
    );
    insert(&mut head, "name", json!(name));
    insert(&mut head, "status", json!(s.label()));
    match s {
        Status::Partial(r) | Status::NotAssessable(r) => insert(&mut head, "reason", json!(r)),
        Status::NotAssessableByDesign => insert(&mut head, "reason", json!(F11_REASON)),
        Status::Assessable => {}
    }
    head
}

/// Graded factors whose status is not ASSESSABLE (F-11 excluded), for the measurement line.
fn limited_list(factor_statuses: &[Status]) -> Vec<String> {
    factor_statuses
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Status::Partial(_) | Status::NotAssessable(_)))
        .map(|(i, s)| format!("{} {}", FACTORS[i].0, s.label()))
        .collect()
}

fn measurement_line(factor_statuses: &[Status]) -> (String, &'static str) {
    let limited = limited_list(factor_statuses);
    if limited.is_empty() {
        (
            "MEASURED context-composition/v1 EM-1".to_owned(),
            "measured_full",
        )
    } else {
        (
            format!(
                "MEASURED LIMITED context-composition/v1 EM-1 ({})",
                limited.join(", ")
            ),
            "measured_limited",
        )
    }
}

pub fn precheck(req: &Request, now_ms: u64) -> Map<String, Value> {
    let analysis = metrics::analyse(&req.record);
    let mut report = header("context-composition/v1 precheck", req, &analysis, now_ms);
    let factor_statuses = statuses(
        req,
        &analysis,
        metrics::m09_near_duplicates(&analysis).is_none(),
    );
    insert(
        &mut report,
        "total_size",
        json!({"body_bytes": req.body_bytes, "text_bytes": analysis.text_bytes, "tokens": est(analysis.total_estimate)}),
    );
    let tres: u64 = analysis
        .facts
        .iter()
        .filter(|f| f.p_class == P_TRES)
        .map(|f| f.estimate)
        .sum();
    insert(
        &mut report,
        "headline_share",
        json!({"name": "tool-output share (P-TRES estimate / T)", "share": share(tres, analysis.total_estimate)}),
    );
    let could_not = could_not_measure(req, &analysis);
    let outcome = match could_not {
        Some(_) => "could_not_measure",
        None => measurement_line(&factor_statuses).1,
    };
    insert(
        &mut report,
        "could_not_measure",
        could_not.map_or(Value::Null, |(r, k)| could_not_measure_block(req, r, k)),
    );
    insert(&mut report, "audit_outcome", json!(outcome));
    let factors = factor_statuses
        .iter()
        .enumerate()
        .map(|(i, s)| Value::Object(factor_head(i, *s)))
        .collect();
    insert(&mut report, "assessability", Value::Array(factors));
    copy_published(
        &mut report,
        &[
            ("never_assessable", "never_assessable"),
            ("price", "price"),
            ("scope", "scope_block"),
        ],
    );
    report
}

fn ledger(
    req: &Request,
    line: &str,
    outcome: &str,
    kind: Option<&str>,
) -> Vec<(&'static str, LedgerValue)> {
    let values: [LedgerValue; LEDGER_COLUMNS.len()] = [
        LedgerValue::Text(format!("{CRITERIA_ID}@{CRITERIA_REVISION}")),
        LedgerValue::Text(line.to_owned()),
        LedgerValue::Text("audit".to_owned()),
        LedgerValue::Text(req.format.id().to_owned()),
        LedgerValue::Int(req.record.messages.len() as i64),
        LedgerValue::Int(req.body_bytes as i64),
        LedgerValue::Text(outcome.to_owned()),
        kind.map_or(LedgerValue::Null, |k| LedgerValue::Text(k.to_owned())),
    ];
    LEDGER_COLUMNS.iter().copied().zip(values).collect()
}

pub fn audit(req: &Request, now_ms: u64) -> Delivery {
    let analysis = metrics::analyse(&req.record);
    let mut report = header("context-composition/v1 audit", req, &analysis, now_ms);
    if let Some((rule, kind)) = could_not_measure(req, &analysis) {
        let line = format!("COULD-NOT-MEASURE context-composition/v1 ({rule} {kind})");
        insert(&mut report, "measurement_line", json!(line));
        insert(&mut report, "outcome", json!("could_not_measure"));
        insert(
            &mut report,
            "could_not_measure",
            could_not_measure_block(req, rule, kind),
        );
        copy_published(
            &mut report,
            &[
                ("never_assessable", "never_assessable"),
                ("scope", "scope_block"),
            ],
        );
        let ledger = ledger(req, &line, "could_not_measure", Some(kind));
        return Delivery {
            status: 422,
            chargeable: false,
            report,
            ledger,
        };
    }
    let mut near_duplicates = metrics::m09_near_duplicates(&analysis);
    let factor_statuses = statuses(req, &analysis, near_duplicates.is_none());
    let (line, outcome) = measurement_line(&factor_statuses);
    insert(&mut report, "measurement_line", json!(line));
    insert(&mut report, "outcome", json!(outcome));
    insert(
        &mut report,
        "M01",
        metrics::m01_counts(&analysis, req.record.messages.len()),
    );
    insert(&mut report, "M02", metrics::m02_size_totals(&analysis));
    insert(&mut report, "M13", metrics::m13_unknown_census(&analysis));
    let has_schema = req.record.schema.is_some();
    let unidentifiable = unidentifiable_classes(req);
    let factors: Vec<Value> = factor_statuses
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut f = factor_head(i, *s);
            let result = match (FACTORS[i].1, s) {
                (_, Status::NotAssessable(_) | Status::NotAssessableByDesign) => None,
                ("M03", _) => Some(metrics::m03_axis_p_shares(&analysis, unidentifiable)),
                ("M04", _) => Some(metrics::m04_axis_c_shares(&analysis)),
                ("M05", _) => Some(metrics::m05_cross_tabulation(&analysis)),
                ("M06", _) => Some(metrics::m06_message_sizes(&analysis, has_schema)),
                ("M07", _) => Some(metrics::m07_turn_growth(&analysis, has_schema)),
                ("M08", _) => Some(metrics::m08_exact_duplicates(&analysis)),
                ("M09", _) => near_duplicates.take(),
                ("M10", _) => Some(metrics::m10_blob_census(&analysis)),
                ("M11", _) => Some(metrics::m11_tool_definition_share(&analysis)),
                ("M12", _) => Some(metrics::m12_stated_agreement(&analysis, &req.stated())),
                ("M14", s) => Some(metrics::m14_positions(
                    &analysis,
                    matches!(s, Status::Partial(_)),
                )),
                ("M15", _) => Some(metrics::m15_largest_block(&analysis)),
                // F-11 names no metric (always NOT-ASSESSABLE-BY-DESIGN).
                _ => None,
            };
            if let Some(r) = result {
                insert(&mut f, "result", r);
            }
            Value::Object(f)
        })
        .collect();
    insert(&mut report, "factors", Value::Array(factors));
    copy_published(
        &mut report,
        &[
            ("never_assessable", "never_assessable"),
            ("f9_line", "f9_line"),
            ("scope", "scope_block"),
        ],
    );
    let ledger = ledger(req, &line, outcome, None);
    Delivery::delivered(report, ledger)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_over_its_work_budget_is_disclosed_not_assessable_and_limited() {
        let body = (0..40)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let messages: Vec<Value> = (0..3000)
            .map(|i| json!({"role": "user", "text": format!("{body} u{i}")}))
            .collect();
        let bytes = serde_json::to_vec(&json!({
            "envelope_version": ENVELOPE_VERSION,
            "declared_format_id": "generic-message-list",
            "record": {"messages": messages, "tool_schemas": []},
        }))
        .unwrap();
        let req = super::super::parse(&bytes).unwrap();
        let pre = precheck(&req, 0);
        assert_eq!(pre["assessability"][6]["status"], "NOT-ASSESSABLE");
        let d = audit(&req, 0);
        assert_eq!(d.status, 200);
        assert_eq!(d.report["factors"][6]["status"], "NOT-ASSESSABLE");
        assert!(d.report["factors"][6].get("result").is_none());
        assert_eq!(d.report["outcome"], "measured_limited");
        assert!(d.report["measurement_line"]
            .as_str()
            .unwrap()
            .contains("F-6 NOT-ASSESSABLE"));
    }
}
