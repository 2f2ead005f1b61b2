//! Unit tests of the payment engine with transactions compiled here, in the official client's
//! layout; each attack changes exactly one thing. (Transactions produced by the official client
//! itself are checked in tests/payment_fixtures.rs.)

use super::layout::{COMPUTE_BUDGET_PROGRAM, LIGHTHOUSE_PROGRAM, MEMO_PROGRAM};
use super::transaction::push_compact_u16;
use super::*;
use ed25519_dalek::{Signer as _, SigningKey};

const ROUTE: &str = "token-efficiency/budget";
const KEY: &str = "abcdefghijklmnop";
const PRICE: u64 = 20_000;

fn key_of(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn addr(key: &SigningKey) -> [u8; 32] {
    key.verifying_key().to_bytes()
}

fn b58(bytes: &[u8; 32]) -> String {
    base58::encode(bytes)
}

fn program(id: &str) -> [u8; 32] {
    PaymentConfig::address(id).unwrap()
}

fn config() -> PaymentConfig {
    PaymentConfig {
        network: SOLANA_DEVNET.into(),
        asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU".into(),
        pay_to: b58(&addr(&key_of(1))),
        max_timeout_seconds: 60,
        fee_payer: b58(&addr(&key_of(2))),
        cu_price_cap_microlamports: 1_000,
        house_wallets: vec![b58(&addr(&key_of(9)))],
        evm: Default::default(),
    }
}

struct Ix {
    program: [u8; 32],
    accounts: Vec<[u8; 32]>,
    data: Vec<u8>,
}

/// Compiles a v0 message: fee payer, then the authority (signer), then every other account in order
/// of first appearance; programs last as read-only.
fn compile(fee_payer: [u8; 32], authority: [u8; 32], instructions: &[Ix], signers: u8) -> Vec<u8> {
    let mut keys = vec![fee_payer];
    if authority != fee_payer {
        keys.push(authority);
    }
    for ix in instructions {
        for account in &ix.accounts {
            if !keys.contains(account) {
                keys.push(*account);
            }
        }
    }
    let mut programs = 0u8;
    for ix in instructions {
        if !keys.contains(&ix.program) {
            keys.push(ix.program);
            programs += 1;
        }
    }
    let index = |k: &[u8; 32]| keys.iter().position(|x| x == k).unwrap() as u8;
    let mut m = vec![0x80, signers, 1, programs];
    push_compact_u16(&mut m, keys.len() as u16);
    for k in &keys {
        m.extend(k);
    }
    m.extend([42u8; 32]);
    push_compact_u16(&mut m, instructions.len() as u16);
    for ix in instructions {
        m.push(index(&ix.program));
        push_compact_u16(&mut m, ix.accounts.len() as u16);
        m.extend(ix.accounts.iter().map(index));
        push_compact_u16(&mut m, ix.data.len() as u16);
        m.extend(&ix.data);
    }
    m.push(0);
    m
}

struct Tx {
    fee_payer: [u8; 32],
    authority: SigningKey,
    instructions: Vec<Ix>,
    signers: u8,
}

fn standard(cfg: &PaymentConfig) -> Tx {
    let authority = key_of(3);
    let mint = program(&cfg.asset);
    let dest = pda::associated_token_address(&program(&cfg.pay_to), &mint).unwrap();
    let source = pda::associated_token_address(&addr(&authority), &mint).unwrap();
    let mut limit = vec![2];
    limit.extend(20_000u32.to_le_bytes());
    let mut price = vec![3];
    price.extend(1u64.to_le_bytes());
    let mut transfer = vec![12];
    transfer.extend(PRICE.to_le_bytes());
    transfer.push(6);
    Tx {
        fee_payer: program(&cfg.fee_payer),
        instructions: vec![
            Ix {
                program: program(COMPUTE_BUDGET_PROGRAM),
                accounts: vec![],
                data: limit,
            },
            Ix {
                program: program(COMPUTE_BUDGET_PROGRAM),
                accounts: vec![],
                data: price,
            },
            Ix {
                program: program(pda::TOKEN_PROGRAM),
                accounts: vec![source, mint, dest, addr(&authority)],
                data: transfer,
            },
            Ix {
                program: program(MEMO_PROGRAM),
                accounts: vec![],
                data: memo_for(ROUTE, KEY).into_bytes(),
            },
        ],
        authority,
        signers: 2,
    }
}

fn wire(tx: &Tx) -> (Vec<u8>, Vec<u8>) {
    let message = compile(
        tx.fee_payer,
        addr(&tx.authority),
        &tx.instructions,
        tx.signers,
    );
    let mut bytes = Vec::new();
    push_compact_u16(&mut bytes, u16::from(tx.signers));
    bytes.extend([0u8; 64]);
    for _ in 1..tx.signers {
        bytes.extend(tx.authority.sign(&message).to_bytes());
    }
    bytes.extend(&message);
    (bytes, message)
}

fn header_for(cfg: &PaymentConfig, tx_bytes: &[u8], accepted: Value, id: Option<&str>) -> String {
    let mut payload = json!({
        "x402Version": 2,
        "resource": { "url": "http://127.0.0.1/token-efficiency/budget" },
        "accepted": accepted,
        "payload": { "transaction": STANDARD.encode(tx_bytes) },
    });
    if let Some(id) = id {
        payload["extensions"] =
            json!({ "payment-identifier": { "info": { "required": true, "id": id } } });
    }
    let _ = cfg;
    STANDARD.encode(payload.to_string())
}

fn run(cfg: &PaymentConfig, tx: &Tx) -> Result<CheckedPayment, PaymentError> {
    let (bytes, _) = wire(tx);
    let header = header_for(cfg, &bytes, requirements(cfg, ROUTE, PRICE, KEY), Some(KEY));
    check_payment(cfg, ROUTE, PRICE, KEY, &decode_payment_header(&header)?)
}

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

fn listing() -> discovery::RouteListing {
    discovery::RouteListing {
        description: "a test route".into(),
        method: "POST",
        body_schema: json!({"type": "object"}),
        body_example: json!({"a": 1}),
        output_schema: json!({"type": "object"}),
        headers: vec![("Idempotency-Key", "k")],
    }
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

#[test]
fn a_standard_payment_passes() {
    let cfg = config();
    let tx = standard(&cfg);
    let (bytes, message) = wire(&tx);
    let checked = run(&cfg, &tx).unwrap();
    assert_eq!(checked.claim_key, sha256_hex(&message));
    assert_eq!(checked.payer, b58(&addr(&key_of(3))));
    assert_eq!(checked.amount_units, PRICE);
    // 2 signatures × 5,000 + ceil(20,000 CU × 1 µlamport / 10^6) = 10,001.
    assert_eq!(checked.fee_lamports, 10_001);
    assert!(!checked.house);
    assert_eq!(checked.transaction_base64, STANDARD.encode(&bytes));
    let required = payment_required(
        &cfg,
        ROUTE,
        PRICE,
        KEY,
        "https://cm.example/r",
        &listing(),
        None,
    );
    let body = facilitator_request(&checked, KEY, &required);
    // The payload carries our challenge's resource and declared extensions, as a stock client
    // echoes them, with the payment-identifier id of this call.
    assert_eq!(body["paymentPayload"]["resource"], required["resource"]);
    assert_eq!(
        body["paymentPayload"]["extensions"]["bazaar"],
        required["extensions"]["bazaar"]
    );
    assert_eq!(
        body["paymentPayload"]["extensions"]["payment-identifier"]["info"]["id"],
        KEY
    );
    assert_eq!(
        body["paymentRequirements"],
        requirements(&cfg, ROUTE, PRICE, KEY)
    );
    assert_eq!(
        body["paymentPayload"]["accepted"],
        body["paymentRequirements"]
    );
    assert_eq!(
        body["paymentPayload"]["payload"]["transaction"],
        checked.transaction_base64.as_str()
    );
}

#[test]
fn house_wallets_are_flagged() {
    let cfg = config();
    let mut tx = standard(&cfg);
    let house = key_of(9);
    let mint = program(&cfg.asset);
    tx.instructions[2].accounts[0] = pda::associated_token_address(&addr(&house), &mint).unwrap();
    tx.instructions[2].accounts[3] = addr(&house);
    tx.authority = house;
    assert!(run(&cfg, &tx).unwrap().house);
}

fn refused_with(cfg: &PaymentConfig, change: impl FnOnce(&mut Tx)) -> PaymentError {
    let mut tx = standard(cfg);
    change(&mut tx);
    run(cfg, &tx).unwrap_err()
}

#[test]
fn attacks_on_the_transfer_are_refused() {
    let cfg = config();
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].data[1..9]
            .copy_from_slice(&(PRICE - 1).to_le_bytes())),
        PaymentError::InvalidAmount { expected: PRICE }
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].data[1..9]
            .copy_from_slice(&(PRICE * 10).to_le_bytes())),
        PaymentError::InvalidAmount { expected: PRICE }
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[1] =
            program("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")),
        PaymentError::InvalidMint
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[2] = addr(&key_of(7))),
        PaymentError::InvalidPayee
    );
    // The payee's wallet itself instead of its associated token account.
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[2] =
            program(&config().pay_to)),
        PaymentError::InvalidPayee
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].data[9] = 9),
        PaymentError::InvalidDecimals
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].data[0] = 3),
        PaymentError::InstructionLayout
    );
}

#[test]
fn attacks_on_the_layout_are_refused() {
    let cfg = config();
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions.push(memo_instruction(b"x"))),
        PaymentError::MemoCount
    );
    assert_eq!(
        refused_with(&cfg, |tx| {
            tx.instructions.pop();
        }),
        PaymentError::MemoCount
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions.swap(0, 1)),
        PaymentError::ComputeBudgetInvalid
    );
    // A System Program instruction in place of the memo.
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[3].program = [0u8; 32]),
        PaymentError::InstructionLayout
    );
}

/// Any program the layout does not name (the System Program's id is 32 zero bytes).
const SYSTEM_PROGRAM: [u8; 32] = [0u8; 32];
/// The first SPL Memo program: a memo program, but not the one the scheme names.
const MEMO_V1_PROGRAM: &str = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo";

fn memo_instruction(text: &[u8]) -> Ix {
    Ix {
        program: program(MEMO_PROGRAM),
        accounts: vec![],
        data: text.to_vec(),
    }
}

fn our_memo() -> Ix {
    memo_instruction(memo_for(ROUTE, KEY).as_bytes())
}

/// A Lighthouse assertion the way wallets inject them: about an account of the payment (here the
/// payer's token account), with opaque assertion data.
fn lighthouse(account: [u8; 32], tag: u8) -> Ix {
    Ix {
        program: program(LIGHTHOUSE_PROGRAM),
        accounts: vec![account],
        data: vec![tag, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    }
}

/// The standard payment with everything after the transfer replaced by `tail`.
fn with_tail(cfg: &PaymentConfig, tail: impl FnOnce(&Tx) -> Vec<Ix>) -> Tx {
    let mut tx = standard(cfg);
    let rest = tail(&tx);
    tx.instructions.truncate(3);
    tx.instructions.extend(rest);
    tx
}

fn source_of(tx: &Tx) -> [u8; 32] {
    tx.instructions[2].accounts[0]
}

fn lighthouse_count(tx: &Tx) -> usize {
    let (bytes, _) = wire(tx);
    let decoded = transaction::decode(&bytes).unwrap();
    layout::payment_instructions(&decoded, memo_for(ROUTE, KEY).as_bytes())
        .unwrap()
        .lighthouse_instructions
}

#[test]
fn wallet_layouts_the_scheme_allows_pass() {
    let cfg = config();
    let cases: Vec<(&str, Tx, usize)> = vec![
        ("official client: memo", standard(&cfg), 0),
        (
            "Phantom: one Lighthouse assertion, then the memo",
            with_tail(&cfg, |tx| vec![lighthouse(source_of(tx), 1), our_memo()]),
            1,
        ),
        (
            "the memo, then one Lighthouse assertion",
            with_tail(&cfg, |tx| vec![our_memo(), lighthouse(source_of(tx), 1)]),
            1,
        ),
        (
            "Solflare: two Lighthouse assertions, then the memo",
            with_tail(&cfg, |tx| {
                vec![
                    lighthouse(source_of(tx), 1),
                    lighthouse(addr(&tx.authority), 2),
                    our_memo(),
                ]
            }),
            2,
        ),
    ];
    for (name, tx, lighthouses) in cases {
        let (bytes, message) = wire(&tx);
        let checked = run(&cfg, &tx).unwrap_or_else(|e| panic!("{name}: refused {}", e.code()));
        assert_eq!(checked.claim_key, sha256_hex(&message), "{name}");
        assert_eq!(checked.payer, b58(&addr(&key_of(3))), "{name}");
        assert_eq!(checked.amount_units, PRICE, "{name}");
        assert_eq!(checked.fee_lamports, 10_001, "{name}");
        assert_eq!(
            checked.transaction_base64,
            STANDARD.encode(&bytes),
            "{name}"
        );
        assert_eq!(lighthouse_count(&tx), lighthouses, "{name}");
    }
}

#[test]
fn layouts_outside_the_scheme_are_refused() {
    let cfg = config();
    let other_memo = || memo_instruction(memo_for("context-composition/audit", KEY).as_bytes());
    let cases: Vec<(&str, Tx, PaymentError)> = vec![
        (
            "Lighthouse before the transfer",
            {
                let mut tx = standard(&cfg);
                let assertion = lighthouse(source_of(&tx), 1);
                tx.instructions.insert(2, assertion);
                tx
            },
            PaymentError::InstructionLayout,
        ),
        (
            "Lighthouse before the compute budget",
            {
                let mut tx = standard(&cfg);
                let assertion = lighthouse(source_of(&tx), 1);
                tx.instructions.insert(0, assertion);
                tx
            },
            PaymentError::InstructionLayout,
        ),
        (
            "Lighthouse sixth (the sixth may only be the memo)",
            with_tail(&cfg, |tx| {
                vec![
                    lighthouse(source_of(tx), 1),
                    our_memo(),
                    lighthouse(source_of(tx), 2),
                ]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "memo first of three",
            with_tail(&cfg, |tx| {
                vec![
                    our_memo(),
                    lighthouse(source_of(tx), 1),
                    lighthouse(source_of(tx), 2),
                ]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "7 instructions",
            with_tail(&cfg, |tx| {
                vec![
                    lighthouse(source_of(tx), 1),
                    lighthouse(source_of(tx), 2),
                    lighthouse(source_of(tx), 3),
                    our_memo(),
                ]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "an unknown program between Lighthouse and the memo",
            with_tail(&cfg, |tx| {
                vec![
                    lighthouse(source_of(tx), 1),
                    Ix {
                        program: SYSTEM_PROGRAM,
                        accounts: vec![],
                        data: vec![2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
                    },
                    our_memo(),
                ]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "our memo under the first memo program",
            with_tail(&cfg, |_| {
                vec![Ix {
                    program: program(MEMO_V1_PROGRAM),
                    ..our_memo()
                }]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "the transfer under the Lighthouse program",
            {
                let mut tx = standard(&cfg);
                tx.instructions[2].program = program(LIGHTHOUSE_PROGRAM);
                tx
            },
            PaymentError::InstructionLayout,
        ),
        (
            "two memos, both ours",
            with_tail(&cfg, |_| vec![our_memo(), our_memo()]),
            PaymentError::MemoCount,
        ),
        (
            "two memos after a Lighthouse assertion",
            with_tail(&cfg, |tx| {
                vec![lighthouse(source_of(tx), 1), our_memo(), other_memo()]
            }),
            PaymentError::MemoCount,
        ),
        (
            "no memo: three instructions",
            with_tail(&cfg, |_| vec![]),
            PaymentError::MemoCount,
        ),
        (
            "no memo: two Lighthouse assertions",
            with_tail(&cfg, |tx| {
                vec![lighthouse(source_of(tx), 1), lighthouse(source_of(tx), 2)]
            }),
            PaymentError::MemoCount,
        ),
        (
            "a memo not ours, after a Lighthouse assertion",
            with_tail(&cfg, |tx| vec![lighthouse(source_of(tx), 1), other_memo()]),
            PaymentError::InvalidMemo,
        ),
        (
            "our memo with an account",
            with_tail(&cfg, |tx| {
                vec![Ix {
                    accounts: vec![addr(&tx.authority)],
                    ..our_memo()
                }]
            }),
            PaymentError::InvalidMemo,
        ),
        (
            "a Lighthouse assertion naming the fee payer",
            with_tail(&cfg, |tx| vec![lighthouse(tx.fee_payer, 1), our_memo()]),
            PaymentError::FeePayerInInstruction,
        ),
    ];
    for (name, tx, error) in cases {
        assert_eq!(run(&cfg, &tx).err(), Some(error), "{name}");
    }
}

/// The standard payment with its TransferChecked under Token-2022: both token accounts are the
/// Token-2022 associated accounts.
fn token_2022(cfg: &PaymentConfig) -> Tx {
    let mut tx = standard(cfg);
    let program_2022 = program(pda::TOKEN_2022_PROGRAM);
    let mint = program(&cfg.asset);
    let transfer = &mut tx.instructions[2];
    transfer.program = program_2022;
    transfer.accounts[0] =
        pda::associated_token_address_under(&addr(&tx.authority), &mint, &program_2022).unwrap();
    transfer.accounts[2] =
        pda::associated_token_address_under(&program(&cfg.pay_to), &mint, &program_2022).unwrap();
    tx
}

/// A payment in doubt is looked up in its source token account's history: under Token-2022 too,
/// or a landed Token-2022 payment could never be reconciled.
#[test]
fn reconciliation_scans_the_source_account_under_either_token_program() {
    let cfg = config();
    for tx in [standard(&cfg), token_2022(&cfg)] {
        let (bytes, _) = wire(&tx);
        let query = super::reconcile::chain_query(
            &base64::engine::general_purpose::STANDARD.encode(&bytes),
        )
        .expect("a checked payment always has a transfer to look up");
        assert_eq!(
            query.source_account,
            base58::encode(&tx.instructions[2].accounts[0])
        );
    }
}

#[test]
fn token_2022_transfers_pay_the_token_2022_account() {
    let cfg = config();
    let tx = token_2022(&cfg);
    let (_, message) = wire(&tx);
    let checked = run(&cfg, &tx).unwrap();
    assert_eq!(checked.claim_key, sha256_hex(&message));
    assert_eq!(checked.amount_units, PRICE);
    let classic_ata =
        pda::associated_token_address(&program(&cfg.pay_to), &program(&cfg.asset)).unwrap();
    assert_ne!(tx.instructions[2].accounts[2], classic_ata);
    // Token-2022 transfer into the classic account, and the reverse.
    let mut into_classic = token_2022(&cfg);
    into_classic.instructions[2].accounts[2] = classic_ata;
    assert_eq!(
        run(&cfg, &into_classic).err(),
        Some(PaymentError::InvalidPayee)
    );
    let token_2022_ata = tx.instructions[2].accounts[2];
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[2] = token_2022_ata),
        PaymentError::InvalidPayee
    );
    // Phantom's layout under Token-2022 passes too.
    let mut phantom = token_2022(&cfg);
    let assertion = lighthouse(source_of(&phantom), 1);
    phantom.instructions.insert(3, assertion);
    assert!(run(&cfg, &phantom).is_ok());
}

#[test]
fn the_fee_payer_token_account_is_not_a_source() {
    let cfg = config();
    let mint = program(&cfg.asset);
    let fee_payer = program(&cfg.fee_payer);
    let fee_payer_ata = pda::associated_token_address(&fee_payer, &mint).unwrap();
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[0] = fee_payer_ata),
        PaymentError::FeePayerInInstruction
    );
    let mut tx = token_2022(&cfg);
    tx.instructions[2].accounts[0] =
        pda::associated_token_address_under(&fee_payer, &mint, &program(pda::TOKEN_2022_PROGRAM))
            .unwrap();
    assert_eq!(
        run(&cfg, &tx).err(),
        Some(PaymentError::FeePayerInInstruction)
    );
}

#[test]
fn fee_payer_abuse_is_refused() {
    let cfg = config();
    let fee_payer = program(&cfg.fee_payer);
    // Fee payer as the transfer authority (its own token account as source).
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[3] = fee_payer),
        PaymentError::FeePayerInInstruction
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[0] = fee_payer),
        PaymentError::FeePayerInInstruction
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[3].accounts.push(fee_payer)),
        PaymentError::FeePayerInInstruction
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.fee_payer = addr(&key_of(8))),
        PaymentError::FeePayerMismatch
    );
}

#[test]
fn compute_budget_is_capped() {
    let cfg = config();
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[1].data[1..]
            .copy_from_slice(&1_001u64.to_le_bytes())),
        PaymentError::ComputePriceTooHigh { cap: 1_000 }
    );
    let mut at_cap = standard(&cfg);
    at_cap.instructions[1].data[1..].copy_from_slice(&1_000u64.to_le_bytes());
    // 10,000 + ceil(20,000 × 1,000 / 10^6) = 10,020.
    assert_eq!(run(&cfg, &at_cap).unwrap().fee_lamports, 10_020);
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[0].data[1..]
            .copy_from_slice(&1_400_000u32.to_le_bytes())),
        PaymentError::ComputeLimitTooHigh
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[1].data.push(0)),
        PaymentError::ComputeBudgetInvalid
    );
    // The scheme's bound, 5 lamports per compute unit, holds whatever cap is configured.
    for cap in [5_000_000, 9_000_000] {
        let mut generous = config();
        generous.cu_price_cap_microlamports = cap;
        let mut at_bound = standard(&generous);
        at_bound.instructions[1].data[1..].copy_from_slice(&5_000_000u64.to_le_bytes());
        // 10,000 + ceil(20,000 × 5,000,000 / 10^6) = 110,000.
        assert_eq!(run(&generous, &at_bound).unwrap().fee_lamports, 110_000);
        assert_eq!(
            refused_with(&generous, |tx| tx.instructions[1].data[1..]
                .copy_from_slice(&5_000_001u64.to_le_bytes())),
            PaymentError::ComputePriceTooHigh { cap: 5_000_000 }
        );
    }
}

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
    let tx = standard(&cfg);
    let (bytes, _) = wire(&tx);
    let other_route = "token-opt/levers";
    let header = header_for(
        &cfg,
        &bytes,
        requirements(&cfg, other_route, PRICE, KEY),
        Some(KEY),
    );
    assert_eq!(
        check_payment(
            &cfg,
            other_route,
            PRICE,
            KEY,
            &decode_payment_header(&header).unwrap()
        ),
        Err(PaymentError::InvalidMemo)
    );
    let other_key = "ponmlkjihgfedcba";
    let header = header_for(
        &cfg,
        &bytes,
        requirements(&cfg, ROUTE, PRICE, other_key),
        Some(other_key),
    );
    assert_eq!(
        check_payment(
            &cfg,
            ROUTE,
            PRICE,
            other_key,
            &decode_payment_header(&header).unwrap()
        ),
        Err(PaymentError::InvalidMemo)
    );
    // Same payment with this route's original requirements but another key: requirements differ.
    let header = header_for(
        &cfg,
        &bytes,
        requirements(&cfg, ROUTE, PRICE, KEY),
        Some(other_key),
    );
    assert_eq!(
        check_payment(
            &cfg,
            ROUTE,
            PRICE,
            other_key,
            &decode_payment_header(&header).unwrap()
        ),
        Err(PaymentError::RequirementsMismatch)
    );
}

#[test]
fn signatures_must_verify() {
    let cfg = config();
    let tx = standard(&cfg);
    let (mut bytes, _) = wire(&tx);
    bytes[1 + 64 + 10] ^= 1; // the authority's signature
    let header = header_for(
        &cfg,
        &bytes,
        requirements(&cfg, ROUTE, PRICE, KEY),
        Some(KEY),
    );
    assert_eq!(
        check_payment(
            &cfg,
            ROUTE,
            PRICE,
            KEY,
            &decode_payment_header(&header).unwrap()
        ),
        Err(PaymentError::SignatureInvalid)
    );
    // Signed by someone else than the authority named in the transfer.
    let mut forged = standard(&cfg);
    let impostor = key_of(5);
    let message = compile(
        forged.fee_payer,
        addr(&forged.authority),
        &forged.instructions,
        2,
    );
    let mut bytes = vec![2];
    bytes.extend([0u8; 64]);
    bytes.extend(impostor.sign(&message).to_bytes());
    bytes.extend(&message);
    let header = header_for(
        &cfg,
        &bytes,
        requirements(&cfg, ROUTE, PRICE, KEY),
        Some(KEY),
    );
    assert_eq!(
        check_payment(
            &cfg,
            ROUTE,
            PRICE,
            KEY,
            &decode_payment_header(&header).unwrap()
        ),
        Err(PaymentError::SignatureInvalid)
    );
    forged.signers = 3;
    assert_eq!(
        run(&cfg, &forged).unwrap_err(),
        PaymentError::SignersInvalid
    );
}

#[test]
fn requirements_must_be_ours_exactly() {
    let cfg = config();
    let tx = standard(&cfg);
    let (bytes, _) = wire(&tx);
    let ours = requirements(&cfg, ROUTE, PRICE, KEY);
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
        let header = header_for(&cfg, &bytes, accepted, Some(KEY));
        assert_eq!(
            check_payment(
                &cfg,
                ROUTE,
                PRICE,
                KEY,
                &decode_payment_header(&header).unwrap()
            ),
            Err(PaymentError::RequirementsMismatch),
            "{field}"
        );
    }
    let mut extra_member = ours.clone();
    extra_member["extra"]["note"] = json!("x");
    let header = header_for(&cfg, &bytes, extra_member, Some(KEY));
    assert_eq!(
        check_payment(
            &cfg,
            ROUTE,
            PRICE,
            KEY,
            &decode_payment_header(&header).unwrap()
        ),
        Err(PaymentError::RequirementsMismatch)
    );
    // Member order does not matter (JSON objects are unordered).
    let reordered: Value = serde_json::from_str(&format!(
        r#"{{"extra":{{"memo":"{}","feePayer":"{}"}},"maxTimeoutSeconds":60,"payTo":"{}","asset":"{}","amount":"20000","network":"{}","scheme":"exact"}}"#,
        memo_for(ROUTE, KEY), cfg.fee_payer, cfg.pay_to, cfg.asset, cfg.network
    ))
    .unwrap();
    let header = header_for(&cfg, &bytes, reordered, Some(KEY));
    assert!(check_payment(
        &cfg,
        ROUTE,
        PRICE,
        KEY,
        &decode_payment_header(&header).unwrap()
    )
    .is_ok());
}

#[test]
fn payment_identifier_must_equal_the_key() {
    let cfg = config();
    let (bytes, _) = wire(&standard(&cfg));
    for id in [None, Some("ponmlkjihgfedcba"), Some("ABCDEFGHIJKLMNOP")] {
        let header = header_for(&cfg, &bytes, requirements(&cfg, ROUTE, PRICE, KEY), id);
        assert_eq!(
            check_payment(
                &cfg,
                ROUTE,
                PRICE,
                KEY,
                &decode_payment_header(&header).unwrap()
            ),
            Err(PaymentError::IdentifierMismatch)
        );
    }
    let header = header_for(
        &cfg,
        &bytes,
        requirements(&cfg, ROUTE, PRICE, "short"),
        Some("short"),
    );
    assert_eq!(
        check_payment(
            &cfg,
            ROUTE,
            PRICE,
            "short",
            &decode_payment_header(&header).unwrap()
        ),
        Err(PaymentError::IdempotencyKeyInvalid)
    );
}

#[test]
fn transaction_shapes_are_refused() {
    let cfg = config();
    let tx = standard(&cfg);
    let (bytes, message) = wire(&tx);
    let check = |tx_bytes: &[u8]| {
        let header = header_for(
            &cfg,
            tx_bytes,
            requirements(&cfg, ROUTE, PRICE, KEY),
            Some(KEY),
        );
        check_payment(
            &cfg,
            ROUTE,
            PRICE,
            KEY,
            &decode_payment_header(&header).unwrap(),
        )
    };
    // Legacy: drop the version prefix (and the empty lookup list) and re-sign.
    let legacy_message = message[1..message.len() - 1].to_vec();
    let mut legacy = vec![2];
    legacy.extend([0u8; 64]);
    legacy.extend(tx.authority.sign(&legacy_message).to_bytes());
    legacy.extend(&legacy_message);
    assert_eq!(check(&legacy), Err(PaymentError::TransactionVersion));
    // One address-table lookup.
    let mut with_lookup = message[..message.len() - 1].to_vec();
    with_lookup.push(1);
    with_lookup.extend([77u8; 32]);
    with_lookup.extend([1, 0, 0]);
    let mut lookup_tx = vec![2];
    lookup_tx.extend([0u8; 64]);
    lookup_tx.extend(tx.authority.sign(&with_lookup).to_bytes());
    lookup_tx.extend(&with_lookup);
    assert_eq!(check(&lookup_tx), Err(PaymentError::LookupTables));
    assert_eq!(
        check(&bytes[..bytes.len() - 3]),
        Err(PaymentError::TransactionMalformed)
    );
    assert_eq!(
        check(b"not a transaction"),
        Err(PaymentError::TransactionMalformed)
    );
}

#[test]
fn headers_are_capped_and_strict() {
    assert_eq!(
        decode_payment_header(&"A".repeat(MAX_PAYMENT_HEADER_BYTES + 4)),
        Err(PaymentError::HeaderOversized)
    );
    assert_eq!(
        decode_payment_header("not base64 at all!"),
        Err(PaymentError::HeaderMalformed)
    );
    assert_eq!(
        decode_payment_header(&STANDARD.encode("[1,2]")),
        Err(PaymentError::HeaderMalformed)
    );
    assert_eq!(
        decode_payment_header(&STANDARD.encode("{\"x402Version\":2")),
        Err(PaymentError::HeaderMalformed)
    );
    let v1 = json!({ "x402Version": 1, "scheme": "exact", "network": "solana-devnet", "payload": { "transaction": "AA==" } });
    assert_eq!(
        decode_payment_header(&STANDARD.encode(v1.to_string())),
        Err(PaymentError::VersionUnsupported)
    );
    let no_accepted = json!({ "x402Version": 2, "payload": { "transaction": "AA==" } });
    assert_eq!(
        decode_payment_header(&STANDARD.encode(no_accepted.to_string())),
        Err(PaymentError::HeaderMalformed)
    );
    let huge_tx = json!({ "x402Version": 2, "accepted": {}, "payload": { "transaction": "A".repeat(MAX_TRANSACTION_BASE64 + 4) } });
    assert_eq!(
        decode_payment_header(&STANDARD.encode(huge_tx.to_string())),
        Err(PaymentError::HeaderOversized)
    );
    // Unpadded base64 is not canonical base64.
    let ok = json!({ "x402Version": 2, "accepted": {}, "payload": { "transaction": "AA==" } });
    let encoded = STANDARD.encode(ok.to_string());
    assert!(decode_payment_header(&encoded).is_ok());
    if encoded.ends_with('=') {
        assert_eq!(
            decode_payment_header(encoded.trim_end_matches('=')),
            Err(PaymentError::HeaderMalformed)
        );
    }
}

#[test]
fn facilitator_answers_are_read_closed() {
    let supported = br#"{"kinds":[{"x402Version":1,"scheme":"exact","network":"solana-devnet","extra":{"feePayer":"11111111111111111111111111111111"}},{"x402Version":2,"scheme":"exact","network":"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1","extra":{"feePayer":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}}],"extensions":[],"signers":{}}"#;
    assert_eq!(
        fee_payer_from_supported(supported, SOLANA_DEVNET).as_deref(),
        Some("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
    );
    assert_eq!(fee_payer_from_supported(supported, SOLANA_MAINNET), None);
    assert_eq!(fee_payer_from_supported(b"nope", SOLANA_DEVNET), None);

    assert_eq!(
        read_verify_response(br#"{"isValid":true,"payer":"x"}"#),
        Ok(())
    );
    assert_eq!(
        read_verify_response(br#"{"isValid":false,"invalidReason":"x"}"#),
        Err(PaymentError::VerifyRejected)
    );
    assert_eq!(
        read_verify_response(b"<html>"),
        Err(PaymentError::FacilitatorUnavailable)
    );

    let sig = base58::encode(&[7u8; 64]);
    let ok = format!(
        r#"{{"success":true,"transaction":"{sig}","network":"{SOLANA_DEVNET}","payer":"p"}}"#
    );
    assert_eq!(
        read_settle_response(ok.as_bytes()),
        SettleOutcome::Settled {
            tx_sig: sig.clone()
        }
    );
    assert_eq!(
        read_settle_response(br#"{"success":false,"errorReason":"settlement_pending","transaction":"x","network":"n"}"#),
        SettleOutcome::Pending
    );
    assert_eq!(
        read_settle_response(br#"{"success":false,"errorReason":"invalid_exact_svm_transaction_failed","transaction":"","network":"n"}"#),
        SettleOutcome::Failed
    );
    assert_eq!(
        read_settle_response(br#"{"success":true,"transaction":"short"}"#),
        SettleOutcome::Failed
    );

    let header = payment_response_header(SOLANA_DEVNET, "payer1", Some(&sig));
    let decoded: Value = serde_json::from_slice(&STANDARD.decode(header).unwrap()).unwrap();
    assert_eq!(decoded["success"], true);
    assert_eq!(decoded["transaction"], sig.as_str());
    let failed = payment_response_header(SOLANA_DEVNET, "payer1", None);
    let decoded: Value = serde_json::from_slice(&STANDARD.decode(failed).unwrap()).unwrap();
    assert_eq!(decoded["success"], false);
    assert_eq!(decoded["errorReason"], "payment_settlement_failed");
}

#[test]
fn error_codes_are_distinct_and_messages_static() {
    use PaymentError::*;
    let all = [
        IdempotencyKeyInvalid,
        HeaderOversized,
        HeaderMalformed,
        VersionUnsupported,
        IdentifierMismatch,
        IdentifierInvalid,
        NonceInvalid,
        NonceExpired,
        FacilitatorAuthRejected,
        RequirementsMismatch,
        TransactionMalformed,
        TransactionVersion,
        LookupTables,
        FeePayerMismatch,
        SignersInvalid,
        InstructionLayout,
        MemoCount,
        ComputeBudgetInvalid,
        ComputeLimitTooHigh,
        ComputePriceTooHigh { cap: 1 },
        FeePayerInInstruction,
        InvalidMint,
        InvalidDecimals,
        InvalidPayee,
        InvalidAmount { expected: 1 },
        InvalidMemo,
        SignatureInvalid,
        VerifyRejected,
        FacilitatorUnavailable,
        SettlementFailed,
        SettlementPending,
        Replayed,
        InProgress,
        BoundElsewhere,
        ConfigInvalid,
        Uncertain { retry_after_s: 5 },
        SettlementReleased,
        IdempotencyConflict,
        RetryInputInvalid,
        ProofConflict,
        RetryTooEarly { retry_after_s: 1 },
        RateLimited { retry_after_s: 1 },
        StateUnavailable,
    ];
    let mut codes: Vec<&str> = all.iter().map(|e| e.code()).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), all.len());
    // `PaymentError::ALL` (the OpenAPI document's closed code lists) names every code listed
    // here, the EVM refusals included, each once.
    let mut published: Vec<&str> = PaymentError::ALL.iter().map(|e| e.code()).collect();
    published.sort_unstable();
    published.dedup();
    assert_eq!(published.len(), PaymentError::ALL.len());
    for code in &codes {
        assert!(
            published.contains(code),
            "{code} missing from PaymentError::ALL"
        );
    }
    for refusal in [
        crate::engine::payment::evm::EvmRefusal::AuthorizationMalformed,
        crate::engine::payment::evm::EvmRefusal::SignatureMalformed,
        crate::engine::payment::evm::EvmRefusal::NotYetValid,
        crate::engine::payment::evm::EvmRefusal::Expired,
        crate::engine::payment::evm::EvmRefusal::WindowTooLong { max_seconds: 1 },
    ] {
        assert!(
            published.contains(&Evm(refusal).code()),
            "{}",
            refusal.code()
        );
    }
    assert!(all
        .iter()
        .all(|e| !e.message().is_empty() && [400, 402, 409, 429, 503].contains(&e.status())));
    // The contract's statuses: a payment-identifier that is not the key is 400, uncertainty 409,
    // an unavailable configuration 503, every Retry-After refusal carries its figure.
    assert_eq!(IdentifierMismatch.status(), 400);
    assert_eq!(Uncertain { retry_after_s: 5 }.status(), 409);
    assert_eq!(ConfigInvalid.status(), 503);
    assert_eq!(FacilitatorAuthRejected.status(), 503);
    assert_eq!(NonceInvalid.status(), 402);
    assert_eq!(NonceExpired.status(), 402);
    assert_eq!(
        RetryTooEarly { retry_after_s: 3 }.figures(),
        vec![("retry_after_s", 3)]
    );
    assert_eq!(Replayed.status(), 409);
    assert_eq!(
        InvalidAmount { expected: 5 }.figures(),
        vec![("expected_units", 5)]
    );
}
