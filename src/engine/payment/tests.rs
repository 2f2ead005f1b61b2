//! Tests of what the rails share: the memo, the Idempotency-Key syntax, the challenge and the
//! configuration. Each rail's payment checks are tested beside them (`solana/tests`,
//! `evm/tests.rs`, `mpp/tests.rs`).

use super::fixtures::*;
use super::*;
use base64::{engine::general_purpose::STANDARD, Engine as _};

#[test]
fn memo_matches_node_crypto() {
    // Computed with Node's crypto: "cm:" + sha256(route "\n" key).hex.slice(0, 32).
    assert_eq!(memo_for(ROUTE, KEY), "cm:dc9dd73b4d61bb6bc63c81305f3f4786");
    assert_eq!(
        memo_for("context-composition/audit", "key_0123456789-ABCDEF"),
        "cm:aad78dff313e7294355ee453975fbd45"
    );
}

#[test]
fn idempotency_key_syntax() {
    assert!(is_valid_idempotency_key("abcdefghijklmnop"));
    assert!(is_valid_idempotency_key(&"A_-9".repeat(32)));
    assert!(!is_valid_idempotency_key("abcdefghijklmno"));
    assert!(!is_valid_idempotency_key(&"a".repeat(129)));
    assert!(!is_valid_idempotency_key("abcdefghijklmnop!"));
    assert!(!is_valid_idempotency_key("abcdefghijklmnopé"));
}

#[test]
fn challenge_has_the_x402_v2_shape() {
    let cfg = config();
    let value = payment_required(
        &cfg,
        ROUTE,
        PRICE,
        KEY,
        "https://cm.example/token-efficiency/budget",
        &listing(),
        None,
    );
    let decoded: Value =
        serde_json::from_slice(&STANDARD.decode(encode_header(&value)).unwrap()).unwrap();
    assert_eq!(decoded, value);
    assert_eq!(decoded["x402Version"], 2);
    assert_eq!(
        decoded["resource"]["url"],
        "https://cm.example/token-efficiency/budget"
    );
    let accepts = decoded["accepts"].as_array().unwrap();
    assert_eq!(accepts.len(), 1);
    let req = &accepts[0];
    assert_eq!(req["scheme"], "exact");
    assert_eq!(req["network"], "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    assert_eq!(req["amount"], "20000");
    assert_eq!(req["asset"], cfg.asset.as_str());
    assert_eq!(req["payTo"], cfg.pay_to.as_str());
    assert_eq!(req["maxTimeoutSeconds"], 60);
    assert_eq!(req["extra"]["feePayer"], cfg.fee_payer.as_str());
    assert_eq!(req["extra"]["memo"], "cm:dc9dd73b4d61bb6bc63c81305f3f4786");
    assert_eq!(
        decoded["extensions"]["payment-identifier"]["info"]["required"],
        true
    );
    assert!(decoded.get("error").is_none());
    assert_eq!(
        decoded["extensions"]["bazaar"],
        discovery::bazaar_declaration(&listing())
    );
    assert_eq!(decoded["resource"]["description"], "a test route");
    let refused = payment_required(
        &cfg,
        ROUTE,
        PRICE,
        KEY,
        "u",
        &listing(),
        Some("payment_invalid_amount"),
    );
    assert_eq!(refused["error"], "payment_invalid_amount");
}

#[test]
fn config_validation() {
    assert_eq!(config().validate(), Ok(()));
    let mut bad = config();
    bad.network = "solana-devnet".into();
    assert_eq!(bad.validate(), Err(PaymentError::ConfigInvalid));
    let mut bad = config();
    bad.pay_to = "not-an-address".into();
    assert_eq!(bad.validate(), Err(PaymentError::ConfigInvalid));
    let mut bad = config();
    bad.fee_payer = bad.pay_to.clone();
    assert_eq!(bad.validate(), Err(PaymentError::ConfigInvalid));
    let mut at_bound = config();
    at_bound.cu_price_cap_microlamports = 5_000_000;
    assert_eq!(at_bound.validate(), Ok(()));
    let mut above_bound = config();
    above_bound.cu_price_cap_microlamports = 5_000_001;
    assert_eq!(above_bound.validate(), Err(PaymentError::ConfigInvalid));
}
