//! The x402 headers as they travel: base64 of compact JSON. Encoding, and the decoding steps every
//! rail's `PAYMENT-SIGNATURE` shares (the size cap, the JSON object, the version, the
//! payment-identifier); each rail reads its own payload from the object.

use super::{PaymentError, MAX_PAYMENT_HEADER_BYTES, PAYMENT_IDENTIFIER, X402_VERSION};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde_json::{Map, Value};

/// Base64 of the compact JSON (how every x402 header travels).
pub fn encode_header(value: &Value) -> String {
    STANDARD.encode(value.to_string())
}

/// The JSON object a `PAYMENT-SIGNATURE` header carries: at most [`MAX_PAYMENT_HEADER_BYTES`] of
/// canonical base64.
pub fn decode_header_object(header: &str) -> Result<Map<String, Value>, PaymentError> {
    if header.len() > MAX_PAYMENT_HEADER_BYTES {
        return Err(PaymentError::HeaderOversized);
    }
    let bytes = STANDARD
        .decode(header.as_bytes())
        .map_err(|_| PaymentError::HeaderMalformed)?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(PaymentError::HeaderMalformed),
    }
}

/// `x402Version` must be ours: another number is unsupported, none at all malformed.
pub fn check_version(object: &Map<String, Value>) -> Result<(), PaymentError> {
    match object.get("x402Version").and_then(Value::as_u64) {
        Some(X402_VERSION) => Ok(()),
        Some(_) => Err(PaymentError::VersionUnsupported),
        None => Err(PaymentError::HeaderMalformed),
    }
}

/// The payment-identifier extension's id, when one is sent.
pub fn payment_identifier(object: &Map<String, Value>) -> Option<String> {
    object
        .get("extensions")
        .and_then(|e| e.get(PAYMENT_IDENTIFIER))
        .and_then(|e| e.get("info"))
        .and_then(|i| i.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}
