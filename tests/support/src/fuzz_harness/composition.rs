//! context-composition/v1: envelope `parse` (every adapter) → `precheck` → `run` (the audit).
//!
//! Mode byte: `mode % 4 == 0` reads the rest as the raw request body; 1, 2, 3 wrap the rest as the
//! record of a letta-af, anthropic-messages or generic-message-list envelope (with
//! `harness_stated_counts` and a caller when the mode's high bits say so), so mutations reach the
//! adapters and the metrics instead of the envelope.
//!
//! Checks: refusals are members of `Refusal::ALL` and closed; the audit is a 200 chargeable
//! delivery or a 422 could-not-measure that is not chargeable; the pre-check announces the outcome
//! the audit delivers; neither the pre-check, the report nor the ledger contains the canary (no
//! submitted string is ever echoed); same body → same bytes.

use super::{
    assert_ledger_clean, bytes_of, mode_and_rest, parsed_or_closed_refusal, strings_of, CANARY,
    NOW_MS,
};
use context_meter::engine::composition;
use context_meter::engine::ClosedError;
use serde_json::Value;

const FORMATS: [&str; 3] = ["letta-af", "anthropic-messages", "generic-message-list"];
const CALLER: &str = "11111111111111111111111111111111";

pub fn check(data: &[u8]) {
    let (mode, rest) = mode_and_rest(data);
    let body = match mode % 4 {
        0 => rest.to_vec(),
        n => {
            let mut body = format!(
                r#"{{"envelope_version":"context-composition-envelope/1","declared_format_id":"{}","#,
                FORMATS[usize::from(n) - 1]
            )
            .into_bytes();
            if mode & 0x10 != 0 {
                body.extend_from_slice(
                    br#""harness_stated_counts":{"per_message":[1,null,3],"total":7},"#,
                );
            }
            if mode & 0x20 != 0 {
                body.extend_from_slice(format!(r#""caller":"{CALLER}","#).as_bytes());
            }
            body.extend_from_slice(br#""record":"#);
            body.extend_from_slice(rest);
            body.push(b'}');
            body
        }
    };
    check_body(&body);
}

pub fn check_body(body: &[u8]) {
    let Some(req) = parsed_or_closed_refusal(|| composition::parse(body)) else {
        if let Err(refusal) = composition::parse(body) {
            let code = refusal.code();
            assert!(composition::Refusal::ALL.iter().any(|r| r.code() == code));
        }
        return;
    };
    let pre =
        composition::precheck(&req, NOW_MS).expect("the pre-check never refuses a parsed body");
    let delivery = composition::run(&req, NOW_MS).expect("the audit never refuses a parsed body");
    let again = composition::run(&req, NOW_MS).expect("second audit");
    assert_eq!(bytes_of(&delivery.report), bytes_of(&again.report));
    assert_eq!(
        bytes_of(&pre),
        bytes_of(&composition::precheck(&req, NOW_MS).expect("second pre-check"))
    );
    assert_ledger_clean(&delivery.ledger, composition::LEDGER_COLUMNS);

    match delivery.status {
        200 => assert!(delivery.chargeable),
        422 => {
            assert!(!delivery.chargeable);
            assert_eq!(delivery.report["outcome"], "could_not_measure");
        }
        other => panic!("audit status {other}"),
    }
    assert_eq!(
        pre["audit_outcome"], delivery.report["outcome"],
        "the pre-check announces another outcome than the audit delivers"
    );

    for (name, doc) in [("pre-check", &pre), ("report", &delivery.report)] {
        let mut texts = Vec::new();
        strings_of(&Value::Object(doc.clone()), &mut texts);
        assert!(
            texts.iter().all(|t| !t.contains(CANARY)),
            "the {name} echoes a submitted string"
        );
    }
}
