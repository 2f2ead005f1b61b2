//! Settlement in doubt on Solana, the pure half: what a `/settle` answer says about whether money
//! can move, and how the chain's answers decide an uncertain payment.
//!
//! Solana makes "did it land?" decidable. The transaction's id is the fee payer's Ed25519 signature
//! over the message, and the runtime executes a signature at most once, so re-submitting the same
//! signed message can never charge twice. A transaction can land only while its recent blockhash
//! is valid (150 blocks, about 60–90 s). So, asked in this order:
//! 1. is the blockhash still valid? (asked first: once it is not, nothing can land later);
//! 2. did a transaction carrying this payment's memo (route + key) land from the payer's token
//!    account? (yes, without error → landed; yes, with an error → failed, nothing moved);
//! 3. not found and the blockhash no longer valid → definitely failed; not found and still valid →
//!    still unknown (the same signed message is re-submitted through `/settle`, which either lands
//!    it or is refused as a duplicate).

use super::{is_transaction_signature, pda, transaction};
use crate::engine::base58;
use crate::engine::payment::facilitator::SettleAnswer;
use crate::engine::payment::reconcile::{ChainVerdict, SettleVerdict};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde_json::{json, Value};

/// What the chain is asked about one payment (from its checked transaction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainQuery {
    /// The transaction's recent blockhash (base58).
    pub blockhash: String,
    /// The transfer's source token account (base58): whose history is scanned.
    pub source_account: String,
}

/// The chain query of a checked transaction (base64 wire bytes). None when it does not decode
/// (it was checked, so this does not happen).
pub fn chain_query(transaction_base64: &str) -> Option<ChainQuery> {
    let wire = STANDARD.decode(transaction_base64.as_bytes()).ok()?;
    let tx = transaction::decode(&wire).ok()?;
    // The transfer is TransferChecked under either token program the scheme allows (layout.rs).
    let transfer = tx.instructions.iter().find(|ix| {
        let program = base58::encode(&tx.account_keys[usize::from(ix.program_index)]);
        program == pda::TOKEN_PROGRAM || program == pda::TOKEN_2022_PROGRAM
    })?;
    let source = *transfer.account_indexes.first()?;
    Some(ChainQuery {
        blockhash: base58::encode(&tx.recent_blockhash),
        source_account: base58::encode(tx.account_keys.get(usize::from(source))?),
    })
}

/// Reads a `/settle` answer. Only a success with a well-formed signature is `Landed`; only a
/// refusal the facilitator makes before signing is `NotSent`; everything else is `Unknown`.
pub fn settle_verdict(body: &[u8]) -> SettleVerdict {
    let Some(answer) = SettleAnswer::read(body, is_transaction_signature) else {
        return SettleVerdict::Unknown;
    };
    let reason = answer.reason.as_str();
    match (answer.success, answer.transaction) {
        (Some(true), Some(tx_sig)) => SettleVerdict::Landed { tx_sig },
        (Some(false), _) if reason.starts_with("invalid_") || reason == "insufficient_funds" => {
            SettleVerdict::NotSent
        }
        _ => SettleVerdict::Unknown,
    }
}

/// JSON-RPC body of `isBlockhashValid`.
pub fn blockhash_valid_request(query: &ChainQuery) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "isBlockhashValid",
        "params": [query.blockhash, {"commitment": "processed"}]})
}

/// Signatures per `getSignaturesForAddress` page (the RPC's maximum).
pub const SIGNATURES_PAGE: usize = 1_000;
/// The most pages one reconciliation reads (a busy payer's day of history, at most).
pub const MAX_SIGNATURE_PAGES: usize = 25;

/// JSON-RPC body of `getSignaturesForAddress` over the source account's history, newest first,
/// from before `before` (the last signature of the previous page) when given.
pub fn signatures_request(query: &ChainQuery, before: Option<&str>) -> Value {
    let mut options = json!({"limit": SIGNATURES_PAGE, "commitment": "confirmed"});
    if let Some(before) = before {
        options["before"] = Value::from(before);
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "getSignaturesForAddress",
        "params": [query.source_account, options]})
}

/// Where the next page of a payer's history starts, when there may be one that can hold this
/// payment: the page was full, and its oldest entry is not older than `not_before_s` (a payment
/// cannot land before its record was created: the facilitator's fee-payer signature, which it
/// adds only at `/settle`, is what makes it valid). None: the scan is complete.
pub fn next_page(body: &[u8], not_before_s: u64) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let entries = value.get("result")?.as_array()?;
    if entries.len() < SIGNATURES_PAGE {
        return None;
    }
    let last = entries.last()?;
    let older = last
        .get("blockTime")
        .and_then(Value::as_u64)
        .is_some_and(|t| t < not_before_s);
    if older {
        return None;
    }
    last.get("signature")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Reads an `isBlockhashValid` answer.
pub fn read_blockhash_valid(body: &[u8]) -> Option<bool> {
    let value: Value = serde_json::from_slice(body).ok()?;
    value.get("result")?.get("value")?.as_bool()
}

/// What a `getSignaturesForAddress` answer says about one memo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoScan {
    /// A transaction with the memo landed without error: its signature.
    Landed(String),
    /// A transaction with the memo landed with an error (nothing was transferred).
    LandedFailed,
    /// No transaction in the answer carries the memo.
    NotFound,
    /// The answer could not be read.
    Unreadable,
}

/// Finds, in a `getSignaturesForAddress` answer, a transaction whose memo is `memo`.
pub fn find_memo(body: &[u8], memo: &str) -> MemoScan {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return MemoScan::Unreadable;
    };
    let Some(entries) = value.get("result").and_then(Value::as_array) else {
        return MemoScan::Unreadable;
    };
    for entry in entries {
        // The RPC writes a memo as "[<length>] <text>", several joined by "; ".
        let carries = entry
            .get("memo")
            .and_then(Value::as_str)
            .is_some_and(|m| m.split("; ").any(|part| part.ends_with(memo)));
        if !carries {
            continue;
        }
        let signature = entry.get("signature").and_then(Value::as_str).unwrap_or("");
        let failed = !entry.get("err").is_none_or(Value::is_null);
        if failed || base58::decode(signature).is_none_or(|b| b.len() != 64) {
            return MemoScan::LandedFailed;
        }
        return MemoScan::Landed(signature.to_owned());
    }
    MemoScan::NotFound
}

/// Decides from the blockhash validity (asked first) and the memo scan (asked second).
pub fn chain_verdict(blockhash_valid: Option<bool>, found: MemoScan) -> ChainVerdict {
    match (found, blockhash_valid) {
        (MemoScan::Landed(tx_sig), _) => ChainVerdict::Landed { tx_sig },
        (MemoScan::LandedFailed, _) => ChainVerdict::Failed,
        (MemoScan::NotFound, Some(false)) => ChainVerdict::Failed,
        _ => ChainVerdict::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIG: &str =
        "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";

    #[test]
    fn settle_answers_are_read_conservatively() {
        let landed =
            format!(r#"{{"success":true,"transaction":"{SIG}","network":"n","payer":"p"}}"#);
        assert_eq!(
            settle_verdict(landed.as_bytes()),
            SettleVerdict::Landed { tx_sig: SIG.into() }
        );
        for unknown in [
            r#"{"success":false,"errorReason":"transaction_failed","transaction":""}"#,
            r#"{"success":false,"errorReason":"settlement_pending"}"#,
            r#"{"success":false,"errorReason":"duplicate_settlement"}"#,
            r#"{"success":true,"transaction":""}"#,
            "not json",
            "{}",
        ] {
            assert_eq!(
                settle_verdict(unknown.as_bytes()),
                SettleVerdict::Unknown,
                "{unknown}"
            );
        }
        for refused in [
            r#"{"success":false,"errorReason":"invalid_exact_svm_payload_transaction_simulation_failed"}"#,
            r#"{"success":false,"errorReason":"insufficient_funds"}"#,
        ] {
            assert_eq!(settle_verdict(refused.as_bytes()), SettleVerdict::NotSent);
        }
    }

    #[test]
    fn history_is_paged_until_it_is_older_than_the_payment() {
        let page = |n: usize, last_time: u64| {
            let entries: Vec<Value> = (0..n)
                .map(|i| json!({"signature": format!("s{i}"), "blockTime": last_time + (n - i) as u64}))
                .collect();
            json!({ "result": entries }).to_string()
        };
        // A short page is the end of the history.
        assert_eq!(next_page(page(10, 500).as_bytes(), 0), None);
        // A full page continues from its last signature while it is recent enough.
        let full = page(SIGNATURES_PAGE, 500);
        assert_eq!(
            next_page(full.as_bytes(), 400),
            Some(format!("s{}", SIGNATURES_PAGE - 1))
        );
        // A full page that reaches before the payment's record ends the scan.
        assert_eq!(next_page(full.as_bytes(), 600), None);
        assert_eq!(next_page(b"{}", 0), None);
        let first = signatures_request(
            &ChainQuery {
                blockhash: "b".into(),
                source_account: "a".into(),
            },
            None,
        );
        assert_eq!(first["params"][1]["limit"], SIGNATURES_PAGE);
        assert!(first["params"][1].get("before").is_none());
        let later = signatures_request(
            &ChainQuery {
                blockhash: "b".into(),
                source_account: "a".into(),
            },
            Some("s9"),
        );
        assert_eq!(later["params"][1]["before"], "s9");
    }

    #[test]
    fn the_chain_decides_only_what_it_can() {
        let memo = "cm:0123456789abcdef0123456789abcdef";
        let history = format!(
            r#"{{"result":[{{"signature":"x","memo":"[5] other","err":null}},{{"signature":"{SIG}","memo":"[35] {memo}","err":null}}]}}"#
        );
        let found = find_memo(history.as_bytes(), memo);
        assert_eq!(found, MemoScan::Landed(SIG.to_owned()));
        assert_eq!(
            chain_verdict(Some(true), found.clone()),
            ChainVerdict::Landed { tx_sig: SIG.into() }
        );
        assert_eq!(
            chain_verdict(None, found),
            ChainVerdict::Landed { tx_sig: SIG.into() }
        );
        let failed = format!(
            r#"{{"result":[{{"signature":"{SIG}","memo":"[35] {memo}","err":{{"InstructionError":[2,"x"]}}}}]}}"#
        );
        assert_eq!(
            chain_verdict(Some(true), find_memo(failed.as_bytes(), memo)),
            ChainVerdict::Failed
        );
        let empty = br#"{"result":[]}"#;
        assert_eq!(
            chain_verdict(Some(false), find_memo(empty, memo)),
            ChainVerdict::Failed
        );
        assert_eq!(
            chain_verdict(Some(true), find_memo(empty, memo)),
            ChainVerdict::Unknown
        );
        assert_eq!(
            chain_verdict(None, find_memo(empty, memo)),
            ChainVerdict::Unknown
        );
        assert_eq!(
            chain_verdict(Some(false), find_memo(b"{}", memo)),
            ChainVerdict::Unknown
        );
        assert_eq!(
            read_blockhash_valid(br#"{"result":{"context":{"slot":1},"value":false}}"#),
            Some(false)
        );
        assert_eq!(read_blockhash_valid(b"{}"), None);
    }
}
