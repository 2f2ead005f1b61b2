//! Tempo JSON-RPC, the pure half: the requests the edge sends (`eth_chainId`,
//! `eth_getTransactionReceipt`, `eth_getBlockByNumber`) and the reading of their answers into a
//! verdict on a pushed payment (draft-tempo-charge, "Hash Verification"): the receipt succeeded,
//! and it holds a TIP-20 `TransferWithMemo` log emitted by the configured token, from the payer to
//! our recipient, of exactly the amount, whose memo carries mppx's attribution layout bound to this
//! realm and challenge id (keccak-256 prefixes, as the stock client writes it).

use super::MppError;
use serde_json::{json, Value};
use sha3::{Digest as _, Keccak256};

/// topic0 of TIP-20 `TransferWithMemo(address indexed from, address indexed to, uint256 amount,
/// bytes32 indexed memo)` (keccak-256 of the signature; a test recomputes it).
pub const TRANSFER_WITH_MEMO_TOPIC: &str =
    "0x57bc7354aa85aed339e000bccffabbc529466af35f0772c8f8ee1145927de7f0";
/// Version byte of the mppx attribution memo.
const MEMO_VERSION: u8 = 0x01;

/// `eth_chainId`.
pub fn chain_id_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []})
}

/// `eth_getTransactionReceipt` of a checked (lowercase hex) hash.
pub fn receipt_request(tx_hash: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "eth_getTransactionReceipt", "params": [tx_hash]})
}

/// `eth_getBlockByNumber` (header only) of a block number as the receipt gave it.
pub fn block_request(block_number: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "eth_getBlockByNumber", "params": [block_number, false]})
}

fn result(answer: &[u8]) -> Option<Value> {
    let mut parsed: Value = serde_json::from_slice(answer).ok()?;
    if parsed.get("error").is_some() {
        return None;
    }
    parsed.get_mut("result").map(Value::take)
}

fn quantity(value: &Value) -> Option<u64> {
    let hex = value.as_str()?.strip_prefix("0x")?;
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// The chain id an `eth_chainId` answer gives (None: unreadable).
pub fn read_chain_id(answer: &[u8]) -> Option<u64> {
    quantity(&result(answer)?)
}

/// The timestamp (seconds) an `eth_getBlockByNumber` answer gives.
pub fn read_block_timestamp(answer: &[u8]) -> Option<u64> {
    quantity(result(answer)?.get("timestamp")?)
}

/// What the chain said about a pushed transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptAnswer {
    /// No receipt (unknown or pending).
    Missing,
    Found(Receipt),
}

/// The parts of a receipt the verdict reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub succeeded: bool,
    /// The transaction's sender, lowercase.
    pub from: String,
    pub block_number: String,
    pub logs: Vec<Log>,
}

/// One event log, hex fields lowercased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    pub address: String,
    pub topics: Vec<String>,
    pub data: String,
    /// `blockTimestamp` where the node gives it (seconds).
    pub block_timestamp: Option<u64>,
}

/// Reads an `eth_getTransactionReceipt` answer (None: unreadable, or a JSON-RPC error).
pub fn read_receipt(answer: &[u8]) -> Option<ReceiptAnswer> {
    let receipt = result(answer)?;
    if receipt.is_null() {
        return Some(ReceiptAnswer::Missing);
    }
    let text = |v: &Value| v.as_str().map(str::to_ascii_lowercase);
    let logs = receipt
        .get("logs")?
        .as_array()?
        .iter()
        .map(|log| {
            Some(Log {
                address: text(log.get("address")?)?,
                topics: log
                    .get("topics")?
                    .as_array()?
                    .iter()
                    .map(text)
                    .collect::<Option<Vec<_>>>()?,
                data: text(log.get("data")?)?,
                block_timestamp: log.get("blockTimestamp").and_then(quantity),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(ReceiptAnswer::Found(Receipt {
        succeeded: quantity(receipt.get("status")?)? == 1,
        from: text(receipt.get("from")?)?,
        block_number: text(receipt.get("blockNumber")?)?,
        logs,
    }))
}

/// What a payment must be.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub currency: &'a str,
    pub recipient: &'a str,
    pub amount: u64,
    pub realm: &'a str,
    pub challenge_id: &'a str,
    /// The payer the credential's `source` names; else the transaction's sender.
    pub source: Option<&'a str>,
}

/// A verified payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paid {
    /// The paying address, lowercase.
    pub payer: String,
    /// The block's time in seconds, where the log carried it (else the edge asks for the block).
    pub block_timestamp: Option<u64>,
}

/// A 20-byte address as a 32-byte topic.
fn address_topic(address: &str) -> String {
    format!("0x{:0>64}", address.trim_start_matches("0x"))
}

/// The 32-byte ABI word of an amount.
fn amount_word(amount: u64) -> String {
    format!("0x{amount:064x}")
}

fn hex(bytes: &[u8]) -> String {
    crate::engine::sign::hex(bytes)
}

/// Keccak-256 of `input` (the pre-SHA-3 padding Ethereum and Tempo use), RustCrypto's `sha3`.
pub fn keccak256(input: &[u8]) -> [u8; 32] {
    Keccak256::digest(input).into()
}

/// Whether a memo topic is mppx's attribution memo for this realm and challenge: bytes 0..4 the
/// tag keccak256("mpp")[0..4], byte 4 the version, bytes 5..15 keccak256(realm)[0..10] (server),
/// bytes 15..25 the client's fingerprint (any), bytes 25..32 keccak256(challenge id)[0..7].
pub fn memo_bound(memo_topic: &str, realm: &str, challenge_id: &str) -> bool {
    let Some(memo) = memo_topic.strip_prefix("0x").filter(|m| m.len() == 64) else {
        return false;
    };
    let tag = hex(&keccak256(b"mpp")[..4]);
    let server = hex(&keccak256(realm.as_bytes())[..10]);
    let nonce = hex(&keccak256(challenge_id.as_bytes())[..7]);
    memo[..8] == tag
        && memo[8..10] == format!("{MEMO_VERSION:02x}")
        && memo[10..30] == server
        && memo[50..64] == nonce
}

/// The verdict on a receipt: the paying address, or why it is not this challenge's payment.
pub fn verify_receipt(receipt: &Receipt, expected: &Expected) -> Result<Paid, MppError> {
    if !receipt.succeeded {
        return Err(MppError::TransactionFailed);
    }
    let payer = expected.source.unwrap_or(&receipt.from);
    let transfers: Vec<&Log> = receipt
        .logs
        .iter()
        .filter(|log| {
            log.address == expected.currency
                && log.topics.len() == 4
                && log.topics[0] == TRANSFER_WITH_MEMO_TOPIC
                && log.topics[1] == address_topic(payer)
                && log.topics[2] == address_topic(expected.recipient)
                && log.data == amount_word(expected.amount)
        })
        .collect();
    if transfers.is_empty() {
        return Err(MppError::TransferMismatch);
    }
    transfers
        .into_iter()
        .find(|log| memo_bound(&log.topics[3], expected.realm, expected.challenge_id))
        .map(|log| Paid {
            payer: payer.to_owned(),
            block_timestamp: log.block_timestamp,
        })
        .ok_or(MppError::MemoUnbound)
}
