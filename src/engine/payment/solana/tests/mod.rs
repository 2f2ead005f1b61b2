//! Unit tests of the Solana payment checks with transactions compiled here, in the official
//! client's layout; each attack changes exactly one thing. (Transactions produced by the official
//! client itself are checked in tests/payment/main.rs.)

mod binding;
mod decoding;
mod layouts;
mod transfer;

use super::layout::{COMPUTE_BUDGET_PROGRAM, LIGHTHOUSE_PROGRAM, MEMO_PROGRAM};
use super::transaction::push_compact_u16;
use super::*;
use crate::engine::payment::fixtures::*;
use crate::engine::payment::{
    facilitator_request, memo_for, payment_required, requirements, MAX_PAYMENT_HEADER_BYTES,
    SOLANA_MAINNET,
};
use crate::engine::ClosedError;
use ed25519_dalek::{Signer as _, SigningKey};
use serde_json::json;

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

/// The `PAYMENT-SIGNATURE` a stock client sends for `tx_bytes`, echoing `accepted` and carrying
/// `id` as its payment-identifier.
fn header_for(tx_bytes: &[u8], accepted: Value, id: Option<&str>) -> String {
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
    STANDARD.encode(payload.to_string())
}

/// Every check of `tx_bytes` presented on `route` under `key`, echoing `accepted`, with `id`.
fn check_presented(
    cfg: &PaymentConfig,
    tx_bytes: &[u8],
    (route, key): (&str, &str),
    accepted: Value,
    id: Option<&str>,
) -> Result<CheckedPayment, PaymentError> {
    let header = header_for(tx_bytes, accepted, id);
    check_payment(cfg, route, PRICE, key, &decode_payment_header(&header)?)
}

/// Every check of `tx_bytes` presented as a stock client presents it for ROUTE and KEY.
fn check_bytes(cfg: &PaymentConfig, tx_bytes: &[u8]) -> Result<CheckedPayment, PaymentError> {
    let accepted = requirements(cfg, ROUTE, PRICE, KEY);
    check_presented(cfg, tx_bytes, (ROUTE, KEY), accepted, Some(KEY))
}

fn run(cfg: &PaymentConfig, tx: &Tx) -> Result<CheckedPayment, PaymentError> {
    check_bytes(cfg, &wire(tx).0)
}

/// Wire bytes of `message` with two signature slots: the fee payer's empty, then `signer`'s.
fn signed_by(signer: &SigningKey, message: &[u8]) -> Vec<u8> {
    let mut bytes = vec![2];
    bytes.extend([0u8; 64]);
    bytes.extend(signer.sign(message).to_bytes());
    bytes.extend(message);
    bytes
}

/// What every passing payment built from [`standard`] reports: its message's hash as the claim
/// key, key 3 as the payer, the price, the standard fee and the transaction as sent.
fn assert_checked_as_standard(checked: &CheckedPayment, tx: &Tx, name: &str) {
    let (bytes, message) = wire(tx);
    assert_eq!(checked.claim_key, sha256_hex(&message), "{name}");
    assert_eq!(checked.payer, b58(&addr(&key_of(3))), "{name}");
    assert_eq!(checked.amount_units, PRICE, "{name}");
    // 2 signatures × 5,000 + ceil(20,000 CU × 1 µlamport / 10^6) = 10,001.
    assert_eq!(checked.fee_lamports, 10_001, "{name}");
    assert_eq!(
        checked.transaction_base64,
        STANDARD.encode(&bytes),
        "{name}"
    );
}

fn refused_with(cfg: &PaymentConfig, change: impl FnOnce(&mut Tx)) -> PaymentError {
    let mut tx = standard(cfg);
    change(&mut tx);
    run(cfg, &tx).unwrap_err()
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
