//! A payment is bound to one route and one call: the memo, the echoed requirements and the
//! payment-identifier.

use super::*;

#[test]
fn memo_binds_route_and_key() {
    let cfg = config();
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[3].data =
            memo_for("context-composition/audit", KEY).into_bytes()),
        PaymentError::InvalidMemo
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[3].data =
            memo_for(ROUTE, "ponmlkjihgfedcba").into_bytes()),
        PaymentError::InvalidMemo
    );
    // A payment made for this route and key, presented on another route (with that route's
    // requirements echoed) or under another key: the memo (or the identifier) gives it away.
    let (bytes, _) = wire(&standard(&cfg));
    let other_route = "token-opt/levers";
    let other_key = "ponmlkjihgfedcba";
    let cases = [
        (
            other_route,
            KEY,
            (other_route, KEY),
            PaymentError::InvalidMemo,
        ),
        (
            ROUTE,
            other_key,
            (ROUTE, other_key),
            PaymentError::InvalidMemo,
        ),
        // This route's original requirements under another key: the requirements differ.
        (
            ROUTE,
            other_key,
            (ROUTE, KEY),
            PaymentError::RequirementsMismatch,
        ),
    ];
    for (route, key, (echoed_route, echoed_key), error) in cases {
        let accepted = requirements(&cfg, echoed_route, PRICE, echoed_key);
        assert_eq!(
            check_presented(&cfg, &bytes, (route, key), accepted, Some(key)),
            Err(error),
            "{route} {key}"
        );
    }
}

#[test]
fn requirements_must_be_ours_exactly() {
    let cfg = config();
    let (bytes, _) = wire(&standard(&cfg));
    let ours = requirements(&cfg, ROUTE, PRICE, KEY);
    let presented =
        |accepted: Value| check_presented(&cfg, &bytes, (ROUTE, KEY), accepted, Some(KEY));
    let mutations: Vec<(&str, Value)> = vec![
        ("network", json!(SOLANA_MAINNET)),
        ("amount", json!("19999")),
        ("amount", json!(20000)),
        (
            "asset",
            json!("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
        ),
        ("payTo", json!(b58(&addr(&key_of(7))))),
        ("maxTimeoutSeconds", json!(61)),
        ("scheme", json!("upto")),
        ("extra", json!({ "feePayer": cfg.fee_payer })),
    ];
    for (field, value) in mutations {
        let mut accepted = ours.clone();
        accepted[field] = value;
        assert_eq!(
            presented(accepted),
            Err(PaymentError::RequirementsMismatch),
            "{field}"
        );
    }
    let mut extra_member = ours.clone();
    extra_member["extra"]["note"] = json!("x");
    assert_eq!(
        presented(extra_member),
        Err(PaymentError::RequirementsMismatch)
    );
    // Member order does not matter (JSON objects are unordered).
    let reordered: Value = serde_json::from_str(&format!(
        r#"{{"extra":{{"memo":"{}","feePayer":"{}"}},"maxTimeoutSeconds":60,"payTo":"{}","asset":"{}","amount":"20000","network":"{}","scheme":"exact"}}"#,
        memo_for(ROUTE, KEY), cfg.fee_payer, cfg.pay_to, cfg.asset, cfg.network
    ))
    .unwrap();
    assert!(presented(reordered).is_ok());
}

#[test]
fn payment_identifier_must_equal_the_key() {
    let cfg = config();
    let (bytes, _) = wire(&standard(&cfg));
    for id in [None, Some("ponmlkjihgfedcba"), Some("ABCDEFGHIJKLMNOP")] {
        let accepted = requirements(&cfg, ROUTE, PRICE, KEY);
        assert_eq!(
            check_presented(&cfg, &bytes, (ROUTE, KEY), accepted, id),
            Err(PaymentError::IdentifierMismatch)
        );
    }
    let accepted = requirements(&cfg, ROUTE, PRICE, "short");
    assert_eq!(
        check_presented(&cfg, &bytes, (ROUTE, "short"), accepted, Some("short")),
        Err(PaymentError::IdempotencyKeyInvalid)
    );
}
