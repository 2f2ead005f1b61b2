//! Transactions produced by the official x402 client (@x402/fetch + @x402/svm 2.27.0) on the local
//! VM, captured by tests/x402/gen-fixtures.mjs with their expected outcome derived there
//! independently (message hash by Node's crypto over @solana/kit's decoded message bytes, payer =
//! the signer's address). Every case runs through the engine's header decoding and local checks.

use context_meter::engine::payment::{check_payment, decode_payment_header, PaymentConfig};
use context_meter::engine::ClosedError;
use serde_json::Value;

fn fixtures() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/x402/fixtures/payments.json"
    ))
    .expect("fixtures file");
    serde_json::from_str(&text).expect("fixtures JSON")
}

fn text(value: &Value, field: &str) -> String {
    value[field].as_str().expect(field).to_owned()
}

#[test]
fn official_client_payments_check_as_expected() {
    let all = fixtures();
    let c = &all["config"];
    let config = PaymentConfig {
        network: text(c, "network"),
        asset: text(c, "asset"),
        pay_to: text(c, "pay_to"),
        max_timeout_seconds: c["max_timeout_seconds"].as_u64().unwrap(),
        fee_payer: text(c, "fee_payer"),
        cu_price_cap_microlamports: c["cu_price_cap_microlamports"].as_u64().unwrap(),
        house_wallets: c["house_wallets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_owned())
            .collect(),
    };
    config.validate().expect("fixture config valid");
    let cases = all["cases"].as_array().unwrap();
    assert!(cases.len() >= 9);
    let (mut passed, mut refused) = (0, 0);
    for case in cases {
        let name = text(case, "name");
        let route = text(case, "route");
        let key = text(case, "idempotency_key");
        let price = case["price_units"].as_u64().unwrap();
        let outcome = decode_payment_header(&text(case, "header"))
            .and_then(|payload| check_payment(&config, &route, price, &key, &payload));
        let expect = &case["expect"];
        if expect["ok"] == Value::Bool(true) {
            let checked = outcome.unwrap_or_else(|e| panic!("{name}: refused with {}", e.code()));
            assert_eq!(checked.claim_key, text(expect, "claim_key"), "{name}");
            assert_eq!(checked.payer, text(expect, "payer"), "{name}");
            assert_eq!(
                checked.amount_units,
                expect["amount_units"].as_u64().unwrap(),
                "{name}"
            );
            assert_eq!(
                checked.fee_lamports,
                expect["fee_lamports"].as_u64().unwrap(),
                "{name}"
            );
            assert_eq!(checked.house, expect["house"].as_bool().unwrap(), "{name}");
            passed += 1;
        } else {
            let error = outcome.err().unwrap_or_else(|| panic!("{name}: accepted"));
            assert_eq!(error.code(), text(expect, "error"), "{name}");
            refused += 1;
        }
    }
    assert!(passed >= 3 && refused >= 6);
}
