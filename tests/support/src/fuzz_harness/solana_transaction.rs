//! The Solana wire-transaction decoder (`engine::payment::transaction::decode`) and, behind it, the
//! local payment checks with a well-formed header around the transaction.
//!
//! Input: the first byte picks the fixture call; the rest is the wire transaction.
//!
//! Checks: a refusal is one of the closed decode errors; a decoded transaction re-encodes to exactly
//! the input bytes (the decoder is strict: canonical lengths, no trailing bytes), its `message` is
//! the input after the signatures, its header is consistent, its keys distinct and every index in
//! range; then `check_payment` on our own requirements and the call's key either refuses with a
//! closed error or passes a payment that is exactly what [`super::x402_header::assert_checked`]
//! re-derives.

use super::mode_and_rest;
use super::x402_header::{check_against, fixtures};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use context_meter::engine::payment::transaction::{
    decode, push_compact_u16, MessageVersion, Transaction, MAX_TRANSACTION_BYTES,
};
use context_meter::engine::payment::{requirements, PaymentPayload};

/// The wire form of a decoded transaction, written independently of the decoder.
fn encode(tx: &Transaction) -> Vec<u8> {
    let mut out = Vec::new();
    let compact = |out: &mut Vec<u8>, n: usize| {
        push_compact_u16(out, u16::try_from(n).expect("lengths fit 16 bits"))
    };
    compact(&mut out, tx.signatures.len());
    for s in &tx.signatures {
        out.extend_from_slice(s);
    }
    if tx.version == MessageVersion::V0 {
        out.push(0x80);
    }
    out.extend([
        tx.num_required_signatures,
        tx.num_readonly_signed,
        tx.num_readonly_unsigned,
    ]);
    compact(&mut out, tx.account_keys.len());
    for k in &tx.account_keys {
        out.extend_from_slice(k);
    }
    out.extend_from_slice(&tx.recent_blockhash);
    compact(&mut out, tx.instructions.len());
    for ix in &tx.instructions {
        out.push(ix.program_index);
        compact(&mut out, ix.account_indexes.len());
        out.extend_from_slice(&ix.account_indexes);
        compact(&mut out, ix.data.len());
        out.extend_from_slice(&ix.data);
    }
    if tx.version == MessageVersion::V0 {
        compact(&mut out, tx.address_table_lookups.len());
        for l in &tx.address_table_lookups {
            out.extend_from_slice(&l.table);
            compact(&mut out, l.writable_indexes.len());
            out.extend_from_slice(&l.writable_indexes);
            compact(&mut out, l.readonly_indexes.len());
            out.extend_from_slice(&l.readonly_indexes);
        }
    }
    out
}

pub fn check(data: &[u8]) {
    let (pick, wire) = mode_and_rest(data);
    let decoded = decode(wire);
    assert_eq!(decoded, decode(wire), "decoding not deterministic");
    let tx = match decoded {
        Err(_) => {
            // DecodeError is a closed enum without payload; nothing else to check.
            return;
        }
        Ok(tx) => tx,
    };
    assert!(wire.len() <= MAX_TRANSACTION_BYTES);
    assert_eq!(
        encode(&tx),
        wire,
        "decode is not the inverse of the wire format"
    );
    assert_eq!(tx.message, wire[wire.len() - tx.message.len()..]);
    assert_eq!(
        wire.len() - tx.message.len(),
        {
            let mut prefix = Vec::new();
            push_compact_u16(&mut prefix, tx.signatures.len() as u16);
            prefix.len() + 64 * tx.signatures.len()
        },
        "message does not start right after the signatures"
    );
    let required = usize::from(tx.num_required_signatures);
    assert!(required >= 1 && required <= tx.account_keys.len());
    assert_eq!(tx.signatures.len(), required);
    assert!(usize::from(tx.num_readonly_signed) < required);
    assert!(usize::from(tx.num_readonly_unsigned) <= tx.account_keys.len() - required);
    for (i, k) in tx.account_keys.iter().enumerate() {
        assert!(!tx.account_keys[..i].contains(k), "duplicate account key");
    }
    let looked_up: usize = tx
        .address_table_lookups
        .iter()
        .map(|l| l.writable_indexes.len() + l.readonly_indexes.len())
        .sum();
    for ix in &tx.instructions {
        assert!(usize::from(ix.program_index) < tx.account_keys.len());
        assert!(ix
            .account_indexes
            .iter()
            .all(|&i| usize::from(i) < tx.account_keys.len() + looked_up));
    }

    let fixtures = fixtures();
    let call = &fixtures.calls[usize::from(pick) % fixtures.calls.len()];
    let payload = PaymentPayload {
        accepted: requirements(&fixtures.config, &call.route, call.price, &call.key),
        transaction_base64: STANDARD.encode(wire),
        payment_identifier: Some(call.key.clone()),
    };
    check_against(&fixtures.config, call, &payload);
}
