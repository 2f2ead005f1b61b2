//! Unit tests of the EVM payment checks: every refusal is reached by changing one thing in an
//! otherwise passing payload shaped exactly as `@x402/evm`'s client builds it.

use super::reconcile::{self, chain_verdict};
use super::*;
use crate::engine::payment::reconcile::ChainVerdict;
use crate::engine::payment::{MAX_PAYMENT_HEADER_BYTES, PAYMENT_IDENTIFIER};
use crate::engine::ClosedError;
use base64::{engine::general_purpose::STANDARD, Engine as _};

const ASSET: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const PAY_TO: &str = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const FROM: &str = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const NONCE: &str = "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480";
const NOW: u64 = 1_800_000_000;
const PRICE: u64 = 20_000;

fn config() -> EvmConfig {
    EvmConfig {
        offers: vec![
            EvmOffer::parse(
                BASE_MAINNET,
                "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
                PAY_TO,
                "USD Coin",
                "2",
            )
            .unwrap(),
            EvmOffer::parse(BASE_SEPOLIA, ASSET, PAY_TO, "USDC", "2").unwrap(),
        ],
        max_timeout_seconds: 60,
        house_wallets: vec![],
    }
}

fn sepolia_accepted() -> Value {
    config().offers[1].requirements(PRICE, 60)
}

fn header(mutate: impl FnOnce(&mut Value)) -> String {
    let mut value = json!({
        "x402Version": 2,
        "resource": {"url": "http://x/token-efficiency/budget"},
        "accepted": sepolia_accepted(),
        "payload": {
            "authorization": {
                "from": FROM, "to": PAY_TO, "value": PRICE.to_string(),
                "validAfter": "0", "validBefore": (NOW + 60).to_string(), "nonce": NONCE,
            },
            "signature": format!("0x{}1b", "ab".repeat(64)),
        },
    });
    mutate(&mut value);
    STANDARD.encode(value.to_string())
}

fn checked(mutate: impl FnOnce(&mut Value)) -> Result<CheckedEvmPayment, PaymentError> {
    let payload = decode_payment_header(&header(mutate))?.expect("an EVM payment");
    check(&config(), PRICE, NOW, &payload)
}

fn code(result: Result<CheckedEvmPayment, PaymentError>) -> &'static str {
    result.err().map(|e| e.code()).unwrap_or("passed")
}

#[test]
fn a_stock_client_payload_passes_with_its_identity_as_claim_key() {
    let ok = checked(|_| {}).unwrap();
    assert_eq!(ok.payer, FROM.to_ascii_lowercase());
    assert_eq!(ok.offer.chain_id, 84532);
    assert_eq!(ok.valid_before_s, NOW + 60);
    let id = identity(84532, ASSET, FROM, NONCE);
    assert_eq!(id.lines().count(), 4);
    assert_eq!(ok.claim_key, sha256_hex(id.as_bytes()));
    // The identity ignores the case of hex: a re-cased replay has the same claim key.
    let recased = checked(|v| {
        v["payload"]["authorization"]["from"] =
            json!(FROM.to_ascii_uppercase().replace("0X", "0x"));
        v["payload"]["authorization"]["nonce"] =
            json!(NONCE.to_ascii_uppercase().replace("0X", "0x"));
    })
    .unwrap();
    assert_eq!(recased.claim_key, ok.claim_key);
    // Another nonce or another chain is another payment.
    let other = checked(|v| {
        v["payload"]["authorization"]["nonce"] = json!(format!("0x{}", "1".repeat(64)))
    })
    .unwrap();
    assert_ne!(other.claim_key, ok.claim_key);
    assert_ne!(
        sha256_hex(identity(8453, ASSET, FROM, NONCE).as_bytes()),
        ok.claim_key
    );
}

#[test]
fn solana_headers_are_not_taken_and_headers_are_capped() {
    let solana = STANDARD.encode(
        json!({"x402Version": 2, "accepted": {"network": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"}, "payload": {"transaction": "AA=="}}).to_string(),
    );
    assert_eq!(decode_payment_header(&solana), Ok(None));
    assert_eq!(
        decode_payment_header(&"A".repeat(MAX_PAYMENT_HEADER_BYTES + 1)),
        Err(PaymentError::HeaderOversized)
    );
    assert_eq!(
        decode_payment_header("not base64!"),
        Err(PaymentError::HeaderMalformed)
    );
    assert_eq!(
        decode_payment_header(&header(|v| v["x402Version"] = json!(1))),
        Err(PaymentError::VersionUnsupported)
    );
}

#[test]
fn each_mismatch_with_the_offer_is_refused_free_with_its_code() {
    type Mutation = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Mutation)> = vec![
        (
            "payment_requirements_mismatch",
            Box::new(|v| v["accepted"]["network"] = json!("eip155:1")),
        ),
        (
            "payment_requirements_mismatch",
            Box::new(|v| v["accepted"]["asset"] = json!(PAY_TO)),
        ),
        (
            "payment_requirements_mismatch",
            Box::new(|v| v["accepted"]["amount"] = json!("1")),
        ),
        (
            "payment_requirements_mismatch",
            Box::new(|v| v["accepted"]["extra"]["name"] = json!("USD Coin")),
        ),
        (
            "payment_requirements_mismatch",
            Box::new(|v| v["accepted"]["scheme"] = json!("upto")),
        ),
        (
            "payment_invalid_payee",
            Box::new(|v| v["payload"]["authorization"]["to"] = json!(FROM)),
        ),
        (
            "payment_invalid_amount",
            Box::new(|v| v["payload"]["authorization"]["value"] = json!("20001")),
        ),
        (
            "payment_invalid_amount",
            Box::new(|v| v["payload"]["authorization"]["value"] = json!("1".repeat(40))),
        ),
        (
            "payment_authorization_not_yet_valid",
            Box::new(|v| {
                v["payload"]["authorization"]["validAfter"] = json!((NOW + 1).to_string())
            }),
        ),
        (
            "payment_authorization_expired",
            Box::new(|v| v["payload"]["authorization"]["validBefore"] = json!(NOW.to_string())),
        ),
        (
            "payment_authorization_window_too_long",
            Box::new(|v| {
                v["payload"]["authorization"]["validBefore"] =
                    json!((NOW + 60 + CLOCK_SKEW_S + 1).to_string())
            }),
        ),
        (
            "payment_authorization_malformed",
            Box::new(|v| v["payload"]["authorization"]["nonce"] = json!("0x1234")),
        ),
        (
            "payment_authorization_malformed",
            Box::new(|v| {
                v["payload"]["authorization"]["from"] =
                    json!("0xzz44CdDdB6a900fa2b585dd299e03d12FA4293BC")
            }),
        ),
        (
            "payment_authorization_malformed",
            Box::new(|v| v["payload"]["authorization"]["value"] = json!("-5")),
        ),
        (
            "payment_authorization_malformed",
            Box::new(|v| v["payload"]["authorization"]["validBefore"] = json!(12)),
        ),
        (
            "payment_authorization_malformed",
            Box::new(|v| {
                v["payload"]["authorization"]
                    .as_object_mut()
                    .unwrap()
                    .remove("to");
            }),
        ),
        (
            "payment_authorization_malformed",
            Box::new(|v| v["payload"] = json!({"transaction": "AA==", "signature": "0x00"})),
        ),
        (
            "payment_authorization_malformed",
            Box::new(|v| v["payload"] = json!("x")),
        ),
        (
            "payment_signature_malformed",
            Box::new(|v| v["payload"]["signature"] = json!("0xabc")),
        ),
        (
            "payment_signature_malformed",
            Box::new(|v| {
                v["payload"]["signature"] =
                    json!(format!("0x{}", "ab".repeat(MAX_SIGNATURE_BYTES + 1)))
            }),
        ),
        (
            "payment_signature_malformed",
            Box::new(|v| {
                v["payload"].as_object_mut().unwrap().remove("signature");
            }),
        ),
    ];
    for (expected, mutate) in cases {
        let got = code(checked(mutate));
        assert_eq!(got, expected);
        let status = PaymentError::Evm(EvmRefusal::Expired).status();
        assert_eq!(status, 402);
    }
    // Hex integers are read as the scheme's encoding rules say.
    assert_eq!(
        code(checked(
            |v| v["payload"]["authorization"]["value"] = json!("0x4e20")
        )),
        "passed"
    );
    assert_eq!(
        code(checked(
            |v| v["payload"]["authorization"]["to"] = json!(PAY_TO.to_ascii_lowercase())
        )),
        "passed"
    );
}

#[test]
fn the_facilitator_gets_a_rebuilt_payload_and_settle_answers_are_read_strictly() {
    let ok = checked(|v| v["unexpected"] = json!("dropped")).unwrap();
    let body = facilitator_request(&ok, None, &Value::Null);
    assert_eq!(body["paymentRequirements"], sepolia_accepted());
    assert_eq!(body["paymentPayload"]["accepted"], sepolia_accepted());
    assert_eq!(
        body["paymentPayload"]["payload"]["authorization"]["validBefore"],
        json!((NOW + 60).to_string())
    );
    assert!(body["paymentPayload"].get("extensions").is_none());
    assert!(!body.to_string().contains("dropped"));
    let keyed = facilitator_request(&ok, Some("k-0123456789abcdef"), &Value::Null);
    assert_eq!(
        keyed["paymentPayload"]["extensions"][PAYMENT_IDENTIFIER]["info"]["id"],
        json!("k-0123456789abcdef")
    );
    // Our own challenge's resource and declared extensions go along (the client's copy never
    // does); its payment-identifier declaration is replaced by the call's id, or dropped.
    let challenge = json!({
        "resource": {"url": "https://cm.example/token-efficiency/budget"},
        "extensions": {"bazaar": {"info": {"input": {"method": "POST"}}},
                       PAYMENT_IDENTIFIER: {"info": {"required": false}}},
    });
    let listed = facilitator_request(&ok, None, &challenge);
    assert_eq!(listed["paymentPayload"]["resource"], challenge["resource"]);
    assert_eq!(
        listed["paymentPayload"]["extensions"]["bazaar"],
        challenge["extensions"]["bazaar"]
    );
    assert!(listed["paymentPayload"]["extensions"]
        .get(PAYMENT_IDENTIFIER)
        .is_none());
    let keyed = facilitator_request(&ok, Some("k-0123456789abcdef"), &challenge);
    assert_eq!(
        keyed["paymentPayload"]["extensions"][PAYMENT_IDENTIFIER]["info"]["id"],
        json!("k-0123456789abcdef")
    );

    let hash = format!("0x{}", "Ab".repeat(32));
    let landed = json!({"success": true, "transaction": hash, "network": BASE_SEPOLIA}).to_string();
    assert_eq!(
        settle_verdict(landed.as_bytes()),
        SettleVerdict::Landed {
            tx_sig: hash.to_ascii_lowercase()
        }
    );
    let short = json!({"success": true, "transaction": "0xabcd"}).to_string();
    assert_eq!(settle_verdict(short.as_bytes()), SettleVerdict::Unknown);
    let refused =
        json!({"success": false, "errorReason": "invalid_exact_evm_signature", "transaction": ""})
            .to_string();
    assert_eq!(settle_verdict(refused.as_bytes()), SettleVerdict::NotSent);
    for maybe in MAYBE_SUBMITTED {
        let body = json!({"success": false, "errorReason": maybe, "transaction": ""}).to_string();
        assert_eq!(
            settle_verdict(body.as_bytes()),
            SettleVerdict::Unknown,
            "{maybe}"
        );
    }
    assert_eq!(settle_verdict(b"<html>"), SettleVerdict::Unknown);
}

#[test]
fn offers_and_addresses_are_validated() {
    assert!(is_evm_address(PAY_TO) && is_evm_address(&PAY_TO.to_ascii_lowercase()));
    assert!(
        !is_evm_address(&PAY_TO[..41])
            && !is_evm_address("GyGKxMyg1p9SsHfm15MkNUu1u9TN2JtTspcdmrtGUdse")
    );
    assert_eq!(chain_id_of("eip155:8453"), Some(8453));
    for bad in [
        "eip155:",
        "eip155:0",
        "eip155:01",
        "eip155:x",
        "solana:1",
        "eip155:99999999999999999999",
    ] {
        assert_eq!(chain_id_of(bad), None, "{bad}");
    }
    assert_eq!(
        EvmOffer::parse("eip155:8453", "0x12", PAY_TO, "USDC", "2"),
        Err(PaymentError::ConfigInvalid)
    );
    assert_eq!(
        EvmOffer::parse("eip155:8453", ASSET, PAY_TO, "", "2"),
        Err(PaymentError::ConfigInvalid)
    );
    let reqs = config().requirements(5_000);
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0]["extra"],
        json!({"name": "USD Coin", "version": "2"})
    );
    assert_eq!(reqs[1]["amount"], json!("5000"));
}

#[test]
fn reconciliation_reads_the_token_and_the_receipt() {
    let ok = checked(|_| {}).unwrap();
    let call = reconcile::authorization_state_request(&ok);
    let data = call["params"][0]["data"].as_str().unwrap();
    assert_eq!(data.len(), 2 + 8 + 64 + 64);
    assert!(data.starts_with("0xe94a0102000000000000000000000000"));
    assert!(data.ends_with(&NONCE[2..]));
    let word = |b: bool| json!({"result": format!("0x{:064x}", u8::from(b))}).to_string();
    assert_eq!(
        reconcile::read_authorization_state(word(true).as_bytes()),
        Some(true)
    );
    assert_eq!(
        reconcile::read_authorization_state(word(false).as_bytes()),
        Some(false)
    );
    assert_eq!(
        reconcile::read_authorization_state(br#"{"error":{"code":-32000}}"#),
        None
    );
    assert_eq!(
        reconcile::read_block_number(br#"{"result":"0x1b4"}"#),
        Some(436)
    );

    let hash = format!("0x{}", "cd".repeat(32));
    let logs = json!({"result": [{"transactionHash": hash}]}).to_string();
    assert_eq!(
        reconcile::read_used_log(logs.as_bytes()),
        Some(hash.clone())
    );
    assert_eq!(reconcile::read_used_log(br#"{"result":[]}"#), None);
    let pad = |a: &str| format!("0x{:0>64}", a[2..].to_ascii_lowercase());
    let receipt = |to: &str, status: &str| {
        json!({"result": {"status": status, "logs": [{
            "address": ASSET, "topics": [reconcile::TRANSFER_TOPIC, pad(FROM), pad(to)],
            "data": format!("0x{:064x}", PRICE)}]}})
        .to_string()
    };
    assert_eq!(
        reconcile::receipt_pays(receipt(PAY_TO, "0x1").as_bytes(), &ok),
        Some(true)
    );
    assert_eq!(
        reconcile::receipt_pays(receipt(FROM, "0x1").as_bytes(), &ok),
        Some(false)
    );
    assert_eq!(
        reconcile::receipt_pays(receipt(PAY_TO, "0x0").as_bytes(), &ok),
        Some(false)
    );
    assert_eq!(reconcile::receipt_pays(br#"{"result":null}"#, &ok), None);

    let before = NOW + 60;
    assert_eq!(
        chain_verdict(Some(false), None, NOW, before),
        ChainVerdict::Unknown
    );
    assert_eq!(
        chain_verdict(Some(false), None, before, before),
        ChainVerdict::Failed
    );
    assert_eq!(
        chain_verdict(Some(true), Some((hash.clone(), true)), NOW, before),
        ChainVerdict::Landed {
            tx_sig: hash.clone()
        }
    );
    assert_eq!(
        chain_verdict(Some(true), Some((hash, false)), NOW, before),
        ChainVerdict::Failed
    );
    assert_eq!(
        chain_verdict(Some(true), None, before, before),
        ChainVerdict::Unknown
    );
    assert_eq!(
        chain_verdict(None, None, before + 9, before),
        ChainVerdict::Unknown
    );
}
