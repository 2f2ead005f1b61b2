//! Reconciling an EVM payment whose settlement is in doubt, the pure half: the JSON-RPC bodies the
//! edge sends to the network's RPC and the readers of their answers (ARCHITECTURE §4).
//!
//! The token itself says whether the authorization was used: `authorizationState(from, nonce)`
//! (EIP-3009) via `eth_call`. Not used and `validBefore` passed → it can never execute: released.
//! Not used and still valid → the same signed authorization is re-submitted through `/settle`
//! (the token executes a nonce at most once). Used → the `AuthorizationUsed(from, nonce)` log
//! gives the transaction, and its receipt must hold the `Transfer(from → payTo, value)` of this
//! very payment to count as landed; a nonce used by another authorization means ours can never
//! execute: released. No answer, or no log in the looked-back blocks → still unknown (409).
//! The event topics and the selector are fixed constants (keccak-256 of the ABI signatures), so
//! no hash function is needed here.

use super::CheckedEvmPayment;
use crate::engine::payment::reconcile::ChainVerdict;
use serde_json::{json, Value};

/// keccak-256("authorizationState(address,bytes32)")[..4].
pub const AUTHORIZATION_STATE_SELECTOR: &str = "0xe94a0102";
/// keccak-256("AuthorizationUsed(address,bytes32)").
pub const AUTHORIZATION_USED_TOPIC: &str =
    "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5";
/// keccak-256("Transfer(address,address,uint256)").
pub const TRANSFER_TOPIC: &str =
    "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
/// How many blocks back the `AuthorizationUsed` log is looked for (about 5.5 hours on Base).
pub const LOG_LOOKBACK_BLOCKS: u64 = 10_000;

/// An address as a 32-byte topic / ABI word: lower-case, left-padded.
fn word_of_address(address: &str) -> String {
    format!("0x{:0>64}", address[2..].to_ascii_lowercase())
}

fn rpc(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// `eth_call` of `authorizationState(from, nonce)` on the token.
pub fn authorization_state_request(payment: &CheckedEvmPayment) -> Value {
    let data = format!(
        "{AUTHORIZATION_STATE_SELECTOR}{}{}",
        &word_of_address(&payment.payer)[2..],
        &payment.nonce[2..]
    );
    rpc(
        "eth_call",
        json!([{"to": payment.offer.asset.to_ascii_lowercase(), "data": data}, "latest"]),
    )
}

/// The JSON-RPC `result` string of an answer, if it is one.
fn result_str(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    value.get("result")?.as_str().map(str::to_owned)
}

/// Reads the `authorizationState` answer: a 32-byte boolean word.
pub fn read_authorization_state(body: &[u8]) -> Option<bool> {
    let result = result_str(body)?;
    let digits = result.strip_prefix("0x")?;
    if digits.len() != 64 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    match digits.trim_start_matches('0') {
        "" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// `eth_blockNumber`.
pub fn block_number_request() -> Value {
    rpc("eth_blockNumber", json!([]))
}

/// Reads an `eth_blockNumber` answer.
pub fn read_block_number(body: &[u8]) -> Option<u64> {
    let result = result_str(body)?;
    let digits = result.strip_prefix("0x")?;
    (!digits.is_empty() && digits.len() <= 16)
        .then(|| u64::from_str_radix(digits, 16).ok())
        .flatten()
}

/// `eth_getLogs` for `AuthorizationUsed(from, nonce)` on the token since `from_block`.
pub fn used_log_request(payment: &CheckedEvmPayment, from_block: u64) -> Value {
    rpc(
        "eth_getLogs",
        json!([{
            "address": payment.offer.asset.to_ascii_lowercase(),
            "fromBlock": format!("0x{from_block:x}"),
            "toBlock": "latest",
            "topics": [AUTHORIZATION_USED_TOPIC, word_of_address(&payment.payer), payment.nonce],
        }]),
    )
}

/// The transaction hash of the first matching log, if the answer has one.
pub fn read_used_log(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    value
        .get("result")?
        .as_array()?
        .iter()
        .find_map(|log| log.get("transactionHash")?.as_str())
        .filter(|hash| super::is_tx_hash(hash))
        .map(str::to_ascii_lowercase)
}

/// `eth_getTransactionReceipt`.
pub fn receipt_request(tx_hash: &str) -> Value {
    rpc("eth_getTransactionReceipt", json!([tx_hash]))
}

/// Whether a receipt holds this payment's `Transfer(from → payTo, value)` on the token, executed
/// successfully. None when the answer is unreadable or the receipt is not there yet.
pub fn receipt_pays(body: &[u8], payment: &CheckedEvmPayment) -> Option<bool> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let receipt = value.get("result")?.as_object()?;
    if receipt.get("status")?.as_str()? != "0x1" {
        return Some(false);
    }
    let asset = payment.offer.asset.to_ascii_lowercase();
    let (from, to) = (
        word_of_address(&payment.payer),
        word_of_address(&payment.offer.pay_to),
    );
    let amount = format!("0x{:064x}", payment.amount_units);
    let pays = receipt.get("logs")?.as_array()?.iter().any(|log| {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_ascii_lowercase);
        let topics: Vec<String> = log
            .get("topics")
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(|v| text(Some(v))).collect())
            .unwrap_or_default();
        text(log.get("address")).as_deref() == Some(asset.as_str())
            && topics == [TRANSFER_TOPIC.to_owned(), from.clone(), to.clone()]
            && text(log.get("data")).as_deref() == Some(amount.as_str())
    });
    Some(pays)
}

/// What the chain's answers decide. `used`: the token's authorizationState; `transfer`: for a used
/// nonce, (its transaction, whether that transaction paid us this payment), when found.
pub fn chain_verdict(
    used: Option<bool>,
    transfer: Option<(String, bool)>,
    now_s: u64,
    valid_before_s: u64,
) -> ChainVerdict {
    match (used, transfer) {
        (Some(false), _) if now_s >= valid_before_s => ChainVerdict::Failed,
        (Some(true), Some((tx_sig, true))) => ChainVerdict::Landed { tx_sig },
        (Some(true), Some((_, false))) => ChainVerdict::Failed,
        _ => ChainVerdict::Unknown,
    }
}
