use super::chain::*;
use super::*;
use crate::engine::sign::hex;

const PATH_USD: &str = "0x20c0000000000000000000000000000000000000";
const RECIPIENT: &str = "0x70997970C51812dc3A010C7d01b50e20d4dc79C8";
const PAYER: &str = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";

fn config() -> MppConfig {
    MppConfig::new("127.0.0.1", PATH_USD, RECIPIENT, 31337, 300_000).unwrap()
}

fn binding<'a>(key: &'a str, route: &'a str) -> Binding<'a> {
    Binding {
        secret: b"test secret",
        route_id: route,
        idempotency_key: key,
        fingerprint: "f1",
        price_units: 5_000,
    }
}

fn credential_for(
    challenge: &Challenge,
    payload: serde_json::Value,
    source: Option<&str>,
) -> String {
    let mut wire = serde_json::json!({
        "challenge": {"expires": challenge.expires, "id": challenge.id, "intent": "charge",
                      "method": "tempo", "realm": challenge.realm, "request": challenge.request},
        "payload": payload,
    });
    if let Some(source) = source {
        wire["source"] = source.into();
    }
    format!("Payment {}", URL_SAFE_NO_PAD.encode(wire.to_string()))
}

const TX: &str = "0x7252200527b8d89df63f90243b34088eef4df87b12670a3a546ae9d7b8b8a5d1";

fn hash_payload() -> serde_json::Value {
    serde_json::json!({"hash": TX, "type": "hash"})
}

#[test]
fn keccak_matches_known_digests_and_the_event_topics() {
    assert_eq!(
        hex(&keccak256(b"")),
        "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    );
    assert_eq!(
        format!(
            "0x{}",
            hex(&keccak256(
                b"TransferWithMemo(address,address,uint256,bytes32)"
            ))
        ),
        TRANSFER_WITH_MEMO_TOPIC
    );
    // The EVM rail's reconciliation constants are the same function of their ABI signatures.
    use crate::engine::payment::evm::reconcile::*;
    let topic = |signature: &str| format!("0x{}", hex(&keccak256(signature.as_bytes())));
    assert_eq!(topic("Transfer(address,address,uint256)"), TRANSFER_TOPIC);
    assert_eq!(
        topic("AuthorizationUsed(address,bytes32)"),
        AUTHORIZATION_USED_TOPIC
    );
    assert_eq!(
        topic("authorizationState(address,bytes32)")[..10],
        *AUTHORIZATION_STATE_SELECTOR
    );
}

#[test]
fn the_request_param_is_what_mppx_serializes_for_the_same_request() {
    // mppx 0.11 `Challenge.serialize` of {amount "5000", pathUSD, methodDetails {chainId 31337,
    // supportedModes [push]}, recipient (lowercase)} gives this request auth-param.
    let mppx = "eyJhbW91bnQiOiI1MDAwIiwiY3VycmVuY3kiOiIweDIwYzAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAiLCJtZXRob2REZXRhaWxzIjp7ImNoYWluSWQiOjMxMzM3LCJzdXBwb3J0ZWRNb2RlcyI6WyJwdXNoIl19LCJyZWNpcGllbnQiOiIweDcwOTk3OTcwYzUxODEyZGMzYTAxMGM3ZDAxYjUwZTIwZDRkYzc5YzgifQ";
    assert_eq!(config().request_param(5_000), mppx);
    assert_ne!(config().request_param(5_001), mppx);
}

#[test]
fn a_challenge_answers_only_its_own_route_key_body_and_price() {
    let cfg = config();
    let key = "k".repeat(16);
    let issued = challenge(&cfg, &binding(&key, PATH), 1_000);
    assert_eq!(issued.expires, "1970-01-01T00:05:01.000Z");
    let header = www_authenticate(&issued);
    assert!(header.starts_with("Payment id=\""));
    assert!(header.contains("method=\"tempo\", intent=\"charge\""));
    let credential = parse_authorization(&credential_for(&issued, hash_payload(), None)).unwrap();
    let bound = check_credential(&cfg, &binding(&key, PATH), &credential).unwrap();
    assert_eq!(bound.tx_hash, TX);
    assert_eq!(bound.expires_ms, 301_000);

    let other_key = "j".repeat(16);
    let refusals = [
        check_credential(&cfg, &binding(&other_key, PATH), &credential),
        check_credential(
            &cfg,
            &binding(&key, "/v1/x402/context-budget-pack"),
            &credential,
        ),
        check_credential(
            &cfg,
            &Binding {
                price_units: 5_001,
                ..binding(&key, PATH)
            },
            &credential,
        ),
        check_credential(
            &cfg,
            &Binding {
                fingerprint: "f2",
                ..binding(&key, PATH)
            },
            &credential,
        ),
        check_credential(
            &cfg,
            &Binding {
                secret: b"another secret",
                ..binding(&key, PATH)
            },
            &credential,
        ),
    ];
    for refusal in refusals {
        assert_eq!(refusal.unwrap_err(), MppError::ChallengeInvalid);
    }
    // An echo with a moved expiry no longer matches its id.
    let mut stretched = issued.clone();
    stretched.expires = "2099-01-01T00:00:00.000Z".into();
    let tampered = parse_authorization(&credential_for(&stretched, hash_payload(), None)).unwrap();
    assert_eq!(
        check_credential(&cfg, &binding(&key, PATH), &tampered).unwrap_err(),
        MppError::ChallengeInvalid
    );
}

#[test]
fn credentials_are_read_under_a_cap_and_push_only() {
    let cfg = config();
    let key = "k".repeat(16);
    let issued = challenge(&cfg, &binding(&key, PATH), 0);
    let check = |payload: serde_json::Value, source: Option<&str>| {
        let credential = parse_authorization(&credential_for(&issued, payload, source))?;
        check_credential(&cfg, &binding(&key, PATH), &credential)
    };
    assert_eq!(
        check(
            serde_json::json!({"type": "transaction", "signature": "0x76"}),
            None
        )
        .unwrap_err(),
        MppError::ModeUnsupported
    );
    assert_eq!(
        check(serde_json::json!({"type": "hash", "hash": "0x12"}), None).unwrap_err(),
        MppError::CredentialMalformed
    );
    let on_our_chain = format!(
        "did:pkh:eip155:31337:{}",
        PAYER.to_uppercase().replace("0X", "0x")
    );
    assert_eq!(
        check(hash_payload(), Some(&on_our_chain))
            .unwrap()
            .source
            .as_deref(),
        Some(PAYER)
    );
    let elsewhere = format!("did:pkh:eip155:4217:{PAYER}");
    assert_eq!(
        check(hash_payload(), Some(&elsewhere)).unwrap_err(),
        MppError::SourceInvalid
    );
    assert_eq!(
        parse_authorization(&"x".repeat(MAX_AUTHORIZATION_BYTES + 1)).unwrap_err(),
        MppError::CredentialOversized
    );
    for bad in ["Bearer abc", "Payment !!!", "Payment eyJhIjoxfQ", ""] {
        assert_eq!(
            parse_authorization(bad).unwrap_err(),
            MppError::CredentialMalformed
        );
    }
    // Another scheme first, then ours; padding tolerated.
    let ours = credential_for(&issued, hash_payload(), None);
    assert!(parse_authorization(&format!("Basic Zm9v, {ours}==")).is_ok());
}

#[test]
fn expiry_times_round_trip_exactly() {
    for ms in [0, 1_000, 1_765_000_123_456, 4_102_444_799_999] {
        let text = crate::engine::time::iso8601_millis(ms);
        assert_eq!(parse_expires(&text), Some(ms));
    }
    for bad in [
        "2026-02-31T00:00:00.000Z",
        "2026-12-06T11:04:22Z",
        "2026-12-06T11:04:22.798+00:00",
        "2026-12-06T24:00:00.000Z",
        "2026-1a-06T11:04:22.798Z",
    ] {
        assert_eq!(parse_expires(bad), None, "{bad}");
    }
}

#[test]
fn a_challenge_is_used_by_one_transaction_only() {
    let (first, record) = use_challenge(None, TX);
    assert!(first);
    let record = record.unwrap();
    assert_eq!(use_challenge(Some(&record), TX), (true, None));
    assert_eq!(use_challenge(Some(&record), "0xother"), (false, None));
}

/// The receipt anvil 1.7.1 (`--network tempo`) gave for the stock mppx client's push payment of
/// challenge `abc123xyz` (realm 127.0.0.1): fee log, Transfer, TransferWithMemo, fee transfer.
fn real_receipt() -> Vec<u8> {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {
    "type": "0x76", "status": "0x1", "from": PAYER, "blockNumber": "0x1",
    "transactionHash": TX,
    "logs": [
        {"address": "0x4e4f4e4345000000000000000000000000000000",
         "topics": ["0x42d98041765078b1557c6a9fe7e4a27230ca413fc141df57d89acd6cc68ffb45",
                    "0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266",
                    "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"],
         "data": "0x0000000000000000000000000000000000000000000000000000000000000001",
         "blockTimestamp": "0x6b1540bf"},
        {"address": PATH_USD,
         "topics": ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
                    "0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266",
                    "0x00000000000000000000000070997970c51812dc3a010c7d01b50e20d4dc79c8"],
         "data": "0x0000000000000000000000000000000000000000000000000000000000001388",
         "blockTimestamp": "0x6b1540bf"},
        {"address": PATH_USD,
         "topics": [TRANSFER_WITH_MEMO_TOPIC,
                    "0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266",
                    "0x00000000000000000000000070997970c51812dc3a010c7d01b50e20d4dc79c8",
                    "0xef1ed7120134b0aeb03b48916345410000000000000000000074829055c0eb35"],
         "data": "0x0000000000000000000000000000000000000000000000000000000000001388",
         "blockTimestamp": "0x6b1540bf"}
    ]}})
    .to_string()
    .into_bytes()
}

fn expected<'a>() -> Expected<'a> {
    Expected {
        currency: PATH_USD,
        recipient: "0x70997970c51812dc3a010c7d01b50e20d4dc79c8",
        amount: 5_000,
        realm: "127.0.0.1",
        challenge_id: "abc123xyz",
        source: None,
    }
}

#[test]
fn the_stock_clients_receipt_verifies_and_each_mismatch_is_refused() {
    let Some(ReceiptAnswer::Found(receipt)) = read_receipt(&real_receipt()) else {
        panic!("receipt unread");
    };
    let paid = verify_receipt(&receipt, &expected()).unwrap();
    assert_eq!(paid.payer, PAYER);
    assert_eq!(paid.block_timestamp, Some(0x6b15_40bf));
    assert!(verify_receipt(
        &receipt,
        &Expected {
            source: Some(PAYER),
            ..expected()
        }
    )
    .is_ok());

    let refusals = [
        (
            Expected {
                amount: 5_001,
                ..expected()
            },
            MppError::TransferMismatch,
        ),
        (
            Expected {
                recipient: PAYER,
                ..expected()
            },
            MppError::TransferMismatch,
        ),
        (
            Expected {
                currency: "0x20c0000000000000000000000000000000000001",
                ..expected()
            },
            MppError::TransferMismatch,
        ),
        (
            Expected {
                source: Some("0x70997970c51812dc3a010c7d01b50e20d4dc79c8"),
                ..expected()
            },
            MppError::TransferMismatch,
        ),
        (
            Expected {
                challenge_id: "abc123xyz2",
                ..expected()
            },
            MppError::MemoUnbound,
        ),
        (
            Expected {
                realm: "api.example.com",
                ..expected()
            },
            MppError::MemoUnbound,
        ),
    ];
    for (wanted, error) in refusals {
        assert_eq!(verify_receipt(&receipt, &wanted).unwrap_err(), error);
    }
    let failed = Receipt {
        succeeded: false,
        ..receipt.clone()
    };
    assert_eq!(
        verify_receipt(&failed, &expected()).unwrap_err(),
        MppError::TransactionFailed
    );
    // A plain Transfer without the memo log does not bind a challenge.
    let plain = Receipt {
        logs: receipt.logs[..2].to_vec(),
        ..receipt
    };
    assert_eq!(
        verify_receipt(&plain, &expected()).unwrap_err(),
        MppError::TransferMismatch
    );
}

#[test]
fn json_rpc_answers_are_read_closed() {
    assert_eq!(
        read_chain_id(br#"{"jsonrpc":"2.0","id":1,"result":"0x7a69"}"#),
        Some(31337)
    );
    assert_eq!(
        read_chain_id(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-1}}"#),
        None
    );
    assert_eq!(
        read_receipt(br#"{"jsonrpc":"2.0","id":1,"result":null}"#),
        Some(ReceiptAnswer::Missing)
    );
    assert_eq!(read_receipt(b"<html>"), None);
    assert_eq!(
        read_block_timestamp(br#"{"jsonrpc":"2.0","id":1,"result":{"timestamp":"0x10"}}"#),
        Some(16)
    );
    assert_eq!(receipt_request(TX)["params"][0], TX);
}

#[test]
fn receipts_and_problems_have_the_draft_shape() {
    let header = receipt_header(TX, 1_000);
    let json: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"method": "tempo", "reference": TX, "status": "success",
                           "timestamp": "1970-01-01T00:00:01.000Z"})
    );
    let problem = problem_body(
        &MppError::ChallengeExpired,
        MppError::ChallengeExpired.problem_type(),
    );
    assert_eq!(
        problem["type"],
        "https://paymentauth.org/problems/payment-expired"
    );
    assert_eq!(problem["status"], 402);
    assert_eq!(problem["code"], "mpp_challenge_expired");
    let pending = problem_body(
        &MppError::TransactionNotFound,
        MppError::TransactionNotFound.problem_type(),
    );
    assert_eq!(pending["type"], "about:blank");
    assert_eq!(pending["title"], "Conflict");
    assert_eq!(pending["retry_after_s"], 2);
    assert!(MppError::TransferMismatch.rechallenges());
    assert!(!MppError::ChallengeUsed.rechallenges());
    assert!(MppConfig::new("h", "0x12", RECIPIENT, 1, 300_000).is_err());
    assert!(MppConfig::new("a\"b", PATH_USD, RECIPIENT, 1, 300_000).is_err());
}
