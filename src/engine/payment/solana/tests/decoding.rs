//! The `PAYMENT-SIGNATURE` header and its transaction: size caps, strict decoding, the v0 message.

use super::*;

#[test]
fn transaction_shapes_are_refused() {
    let cfg = config();
    let tx = standard(&cfg);
    let (bytes, message) = wire(&tx);
    let check = |tx_bytes: &[u8]| check_bytes(&cfg, tx_bytes);
    // Legacy: drop the version prefix (and the empty lookup list) and re-sign.
    let legacy_message = message[1..message.len() - 1].to_vec();
    assert_eq!(
        check(&signed_by(&tx.authority, &legacy_message)),
        Err(PaymentError::TransactionVersion)
    );
    // One address-table lookup.
    let mut with_lookup = message[..message.len() - 1].to_vec();
    with_lookup.push(1);
    with_lookup.extend([77u8; 32]);
    with_lookup.extend([1, 0, 0]);
    assert_eq!(
        check(&signed_by(&tx.authority, &with_lookup)),
        Err(PaymentError::LookupTables)
    );
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
