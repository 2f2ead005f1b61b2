//! Every real record in ../shared/samples (each letta-af/*.af file, each `request.body` of the
//! anthropic-messages recording) audits without error, and neither its pre-check, its report nor
//! its ledger columns contain any of the record's strings of length >= 4 — except words that are
//! the service's own published vocabulary (they occur in the served criteria document: role and
//! part-type names such as "user", "text", "tool") or a member name of the report itself (such
//! as "groups"), which are not content.

use context_meter::engine::composition;
use context_meter::engine::jsjson::to_jcs;
use context_meter::engine::LedgerValue;
use context_meter_test_support::shared_samples;
use serde_json::{json, Value};

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            out.push(s.clone());
            // A double-encoded document: its inner strings are record strings too.
            if let Ok(inner @ (Value::Object(_) | Value::Array(_))) =
                serde_json::from_str::<Value>(s)
            {
                strings(&inner, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out)
        }),
        _ => {}
    }
}

fn keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            keys(x, out)
        }),
        _ => {}
    }
}

fn audit_clean(format: &str, record: &Value) -> usize {
    let body = serde_json::to_vec(&json!({
        "envelope_version": "context-composition-envelope/1",
        "declared_format_id": format,
        "record": record,
    }))
    .unwrap();
    let req = composition::parse(&body).unwrap_or_else(|_| panic!("{format} sample parses"));
    let pre = to_jcs(&Value::Object(
        composition::precheck(&req, 1_764_680_000_000).unwrap(),
    ));
    let d = composition::run(&req, 1_764_680_000_000).unwrap();
    assert_eq!(d.status, 200, "{format} sample is measured");
    let report = to_jcs(&Value::Object(d.report));
    let ledger: String = d
        .ledger
        .iter()
        .map(|(_, v)| match v {
            LedgerValue::Text(t) => t.clone(),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let vocabulary = to_jcs(&composition::criteria());
    // Member names of the engine's own reports are static vocabulary, never content.
    let mut report_keys = Vec::new();
    keys(&serde_json::from_str(&report).unwrap(), &mut report_keys);
    keys(&serde_json::from_str(&pre).unwrap(), &mut report_keys);
    let mut record_strings = Vec::new();
    strings(record, &mut record_strings);
    let mut checked = 0;
    for s in record_strings.iter().filter(|s| s.chars().count() >= 4) {
        if vocabulary.contains(s.as_str()) || report_keys.contains(s) {
            continue;
        }
        checked += 1;
        for (surface, text) in [("precheck", &pre), ("report", &report), ("ledger", &ledger)] {
            assert!(
                !text.contains(s.as_str()),
                "{format}: {surface} contains a record string"
            );
        }
    }
    checked
}

#[test]
fn letta_af_samples_audit_and_echo_nothing() {
    let Some(samples) = shared_samples::dir("letta-af", "composition") else {
        return;
    };
    let mut files = 0;
    for entry in std::fs::read_dir(samples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("af") {
            continue;
        }
        let record: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(
            audit_clean("letta-af", &record) > 50,
            "{path:?}: record strings were checked"
        );
        files += 1;
    }
    assert_eq!(files, 3);
}

#[test]
fn anthropic_recording_request_bodies_audit_and_echo_nothing() {
    let Some(dir) = shared_samples::dir("anthropic-messages", "composition") else {
        return;
    };
    let mut bodies = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let exchanges: Value =
            serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
        for exchange in exchanges.as_array().unwrap() {
            assert!(audit_clean("anthropic-messages", &exchange["request"]["body"]) > 3);
            bodies += 1;
        }
    }
    assert_eq!(bodies, 2);
}

#[test]
fn the_samples_are_found_beside_the_repository_or_not_at_all() {
    let scratch = std::env::temp_dir().join(format!("cm-samples-{}", std::process::id()));
    let repository = scratch.join("checkout/repo");
    std::fs::create_dir_all(&repository).unwrap();
    // No shared/ beside any ancestor of the scratch checkout (the temp dir has none).
    assert_eq!(shared_samples::root_beside(&repository), None);
    std::fs::create_dir_all(scratch.join("checkout/shared/samples/letta-af")).unwrap();
    let found = shared_samples::root_beside(&repository);
    std::fs::remove_dir_all(&scratch).unwrap();
    assert_eq!(found, Some(scratch.join("checkout/shared/samples")));
}
