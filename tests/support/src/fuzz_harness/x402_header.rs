//! x402 `PAYMENT-SIGNATURE`: `decode_payment_header` → `check_payment`, against the configuration
//! and the (route, price, Idempotency-Key) of the official-client fixtures
//! (tests/e2e/x402/fixtures/payments.json).
//!
//! Input: the first byte's low seven bits pick the fixture call; the rest is the header text (lossy
//! UTF-8), or, when the first byte's high bit is set, the JSON the header carries (the harness
//! base64-encodes it, so mutations work on the JSON rather than on its base64).
//!
//! Checks: every refusal is a closed payment error; a decoded header respects the header and
//! transaction size caps; a payment that passes every local check is exactly what the invariants
//! of `engine::payment` promise, verified here independently ([`assert_checked`]): our
//! requirements byte for byte, the identifier equal to the key, a v0 transaction without lookups
//! whose fee payer is ours, amount = price, payer = the transfer authority whose ed25519 signature
//! over the message bytes verifies, claim key = SHA-256 of those bytes, the house flag from the
//! configuration; same header → same outcome.

use super::{assert_closed_refusal, mode_and_rest};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use context_meter::engine::base58;
use context_meter::engine::payment::transaction::{decode, MessageVersion};
use context_meter::engine::payment::{
    check_payment, decode_payment_header, requirements, CheckedPayment, PaymentConfig,
    PaymentPayload, MAX_PAYMENT_HEADER_BYTES, MAX_TRANSACTION_BASE64,
};
use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// One fixture call: route, price, Idempotency-Key, and the official client's header for it.
pub struct Call {
    pub route: String,
    pub price: u64,
    pub key: String,
    pub header: String,
}

pub struct Fixtures {
    pub config: PaymentConfig,
    pub calls: Vec<Call>,
}

/// The fixture configuration and calls, parsed once.
pub fn fixtures() -> &'static Fixtures {
    static FIXTURES: OnceLock<Fixtures> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let all: Value =
            serde_json::from_str(include_str!("../../../e2e/x402/fixtures/payments.json"))
                .expect("fixtures JSON");
        let text = |v: &Value, k: &str| v[k].as_str().expect(k).to_owned();
        let c = &all["config"];
        let config = PaymentConfig {
            network: text(c, "network"),
            asset: text(c, "asset"),
            pay_to: text(c, "pay_to"),
            max_timeout_seconds: c["max_timeout_seconds"].as_u64().expect("timeout"),
            fee_payer: text(c, "fee_payer"),
            cu_price_cap_microlamports: c["cu_price_cap_microlamports"].as_u64().expect("cap"),
            house_wallets: c["house_wallets"]
                .as_array()
                .expect("house wallets")
                .iter()
                .map(|w| w.as_str().expect("wallet").to_owned())
                .collect(),
            evm: Default::default(),
        };
        let calls = all["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|case| Call {
                route: text(case, "route"),
                price: case["price_units"].as_u64().expect("price"),
                key: text(case, "idempotency_key"),
                header: text(case, "header"),
            })
            .collect();
        Fixtures { config, calls }
    })
}

pub fn check(data: &[u8]) {
    let (pick, rest) = mode_and_rest(data);
    let fixtures = fixtures();
    let call = &fixtures.calls[usize::from(pick & 0x7f) % fixtures.calls.len()];
    let header = if pick & 0x80 != 0 {
        STANDARD.encode(rest)
    } else {
        String::from_utf8_lossy(rest).into_owned()
    };
    let decoded = decode_payment_header(&header);
    assert_eq!(
        decoded,
        decode_payment_header(&header),
        "decoding not deterministic"
    );
    let payload = match decoded {
        Err(e) => {
            assert_closed_refusal(&e);
            return;
        }
        Ok(payload) => payload,
    };
    assert!(header.len() <= MAX_PAYMENT_HEADER_BYTES);
    assert!(payload.transaction_base64.len() <= MAX_TRANSACTION_BASE64);
    check_against(&fixtures.config, call, &payload);
}

/// `check_payment` for one fixture call, with every outcome checked.
pub fn check_against(config: &PaymentConfig, call: &Call, payload: &PaymentPayload) {
    let outcome = check_payment(config, &call.route, call.price, &call.key, payload);
    assert_eq!(
        outcome,
        check_payment(config, &call.route, call.price, &call.key, payload),
        "checks not deterministic"
    );
    match outcome {
        Err(e) => assert_closed_refusal(&e),
        Ok(checked) => assert_checked(config, call, payload, &checked),
    }
}

/// What a passed payment must be, re-derived from the payload without the engine's checks.
pub fn assert_checked(
    config: &PaymentConfig,
    call: &Call,
    payload: &PaymentPayload,
    checked: &CheckedPayment,
) {
    let ours = requirements(config, &call.route, call.price, &call.key);
    assert_eq!(payload.accepted, ours, "passed with other requirements");
    assert_eq!(checked.requirements, ours);
    assert_eq!(
        payload.payment_identifier.as_deref(),
        Some(call.key.as_str())
    );
    let wire = STANDARD
        .decode(payload.transaction_base64.as_bytes())
        .expect("a passed transaction is base64");
    let tx = decode(&wire).expect("a passed transaction decodes");
    assert_eq!(tx.version, MessageVersion::V0);
    assert!(tx.address_table_lookups.is_empty());
    assert_eq!(base58::encode(&tx.account_keys[0]), config.fee_payer);
    assert_eq!(tx.num_required_signatures, 2);
    assert_eq!(checked.amount_units, call.price);
    let authority = tx.account_keys[1];
    assert_eq!(checked.payer, base58::encode(&authority));
    let key = VerifyingKey::from_bytes(&authority).expect("the payer key is a curve point");
    key.verify_strict(&tx.message, &Signature::from_bytes(&tx.signatures[1]))
        .expect("passed without a valid payer signature");
    let claim: String = Sha256::digest(&tx.message)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(checked.claim_key, claim);
    assert_eq!(checked.house, config.house_wallets.contains(&checked.payer));
    assert!(checked.fee_lamports >= 5_000 * tx.signatures.len() as u64);
    assert_eq!(checked.transaction_base64, payload.transaction_base64);
}
