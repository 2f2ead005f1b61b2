//! The payment members of an MCP message, translated to and from the HTTP headers the paid routes
//! already read and write (ARCHITECTURE §4b), so a tool call is paid, checked, settled and
//! receipted by the HTTP pipeline itself:
//!
//! - x402 (`transports-v2/mcp.md`): `_meta["x402/payment"]` (a PaymentPayload object) is the
//!   `PAYMENT-SIGNATURE` header's JSON; `PAYMENT-REQUIRED` and `PAYMENT-RESPONSE` are base64 JSON
//!   whose objects travel as `structuredContent` and `_meta["x402/payment-response"]`.
//! - MPP (the paymentauth MCP transport draft, as mppx reads it): `_meta["org.paymentauth/credential"]`
//!   is the `Authorization: Payment` credential with its challenge's `request` as an object; the
//!   header carries base64url of that object's JCS form. A challenge travels as
//!   `{httpStatus, challenges: [..]}` with `request` decoded; a receipt as the `Payment-Receipt`
//!   object plus the challenge id it settled.
//!
//! Invariant: every function is a pure re-encoding; none checks a payment (the routes do), and
//! none renders anything of its input into an error (a malformed member is `None`).

use crate::engine::jsjson::to_jcs;
use crate::engine::payment::header::encode_header;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use serde_json::{json, Map, Value};

/// The `_meta` key of an x402 payment.
pub const X402_PAYMENT: &str = "x402/payment";
/// The `_meta` key of an x402 settlement.
pub const X402_PAYMENT_RESPONSE: &str = "x402/payment-response";
/// The `_meta` key of an MPP credential.
pub const MPP_CREDENTIAL: &str = "org.paymentauth/credential";
/// The `_meta` key of MPP challenges on a payment-required result.
pub const MPP_PAYMENT_REQUIRED: &str = "org.paymentauth/payment-required";
/// The `_meta` key of an MPP receipt.
pub const MPP_RECEIPT: &str = "org.paymentauth/receipt";

/// Longest payment member accepted, encoded (the x402 and MPP headers' own bounds are smaller).
const MAX_ENCODED_BYTES: usize = 16 * 1024;

/// The `PAYMENT-SIGNATURE` value for an x402 payment object.
pub fn x402_header(payment: &Value) -> Option<String> {
    let encoded = payment.is_object().then(|| encode_header(payment))?;
    (encoded.len() <= MAX_ENCODED_BYTES).then_some(encoded)
}

/// The JSON object inside a base64 header (`PAYMENT-REQUIRED`, `PAYMENT-RESPONSE`).
pub fn x402_object(header: &str) -> Option<Value> {
    let bytes = STANDARD.decode(header.trim()).ok()?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

/// The payment-identifier an x402 payment carries (`extensions["payment-identifier"].info.id`),
/// which binds a call like an `Idempotency-Key` when the request sent none.
pub fn x402_payment_identifier(payment: &Value) -> Option<&str> {
    payment
        .pointer("/extensions/payment-identifier/info/id")
        .and_then(Value::as_str)
}

/// The `Authorization` value for an MPP credential object: its challenge's `request`, when an
/// object, becomes base64url of its JCS text, as the HTTP credential carries it.
pub fn mpp_authorization(credential: &Value) -> Option<String> {
    let mut credential = credential.as_object()?.clone();
    let challenge = credential.get_mut("challenge")?.as_object_mut()?;
    if let Some(request) = challenge.get("request").filter(|r| r.is_object()) {
        let encoded = URL_SAFE_NO_PAD.encode(to_jcs(request));
        challenge.insert("request".into(), Value::from(encoded));
    }
    let encoded = URL_SAFE_NO_PAD.encode(Value::Object(credential).to_string());
    (encoded.len() <= MAX_ENCODED_BYTES).then(|| format!("Payment {encoded}"))
}

/// The challenge id an MPP credential object echoes.
pub fn mpp_challenge_id(credential: &Value) -> Option<&str> {
    credential.pointer("/challenge/id").and_then(Value::as_str)
}

/// `{httpStatus: 402, challenges: [..]}` from a `WWW-Authenticate: Payment` value this worker
/// wrote (`id`, `realm`, `method`, `intent`, `request`, `expires`, each quoted, none escaped), its
/// `request` decoded to the object mppx validates.
pub fn mpp_payment_required(www_authenticate: &str) -> Option<Value> {
    let params = www_authenticate.trim().strip_prefix("Payment ")?;
    let mut challenge = Map::new();
    for param in params.split(", ") {
        let (name, quoted) = param.split_once('=')?;
        let text = quoted.strip_prefix('"')?.strip_suffix('"')?;
        let value = if name == "request" {
            let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
            serde_json::from_slice::<Value>(&bytes)
                .ok()
                .filter(Value::is_object)?
        } else {
            Value::from(text)
        };
        challenge.insert(name.to_owned(), value);
    }
    let complete = ["id", "realm", "method", "intent", "request"]
        .iter()
        .all(|k| challenge.contains_key(*k));
    complete.then(|| json!({"httpStatus": 402, "challenges": [Value::Object(challenge)]}))
}

/// The MCP receipt: the `Payment-Receipt` object plus the id of the challenge it settled.
pub fn mpp_receipt(header: &str, challenge_id: Option<&str>) -> Option<Value> {
    let bytes = URL_SAFE_NO_PAD
        .decode(header.trim().trim_end_matches('='))
        .ok()?;
    let mut receipt = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)?;
    if let Some(id) = challenge_id {
        receipt["challengeId"] = Value::from(id);
    }
    Some(receipt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::payment::mpp::{self, Binding, MppConfig};

    fn config() -> MppConfig {
        let currency = "0x20c0000000000000000000000000000000000000";
        let recipient = "0x70997970C51812dc3A010C7d01b50e20d4dc79C8";
        MppConfig::new("127.0.0.1", currency, recipient, 31337, 300_000).unwrap()
    }

    /// A challenge served over HTTP, carried to an MCP client and echoed back in its credential
    /// (request as an object, members in the client's order), becomes the HTTP credential the
    /// route checks: the same challenge id, the same `request` string, byte for byte.
    #[test]
    fn an_mpp_challenge_round_trips_through_the_mcp_form() {
        let binding = Binding {
            secret: b"s",
            route_id: mpp::PATH,
            idempotency_key: "0123456789abcdef",
            fingerprint: "f",
            price_units: 5_000,
        };
        let served = mpp::challenge(&config(), &binding, 1_000);
        let required = mpp_payment_required(&mpp::www_authenticate(&served)).unwrap();
        assert_eq!(required["httpStatus"], 402);
        let challenge = &required["challenges"][0];
        assert_eq!(challenge["id"], served.id.as_str());
        assert_eq!(challenge["request"]["amount"], "5000");
        assert_eq!(challenge["request"]["methodDetails"]["chainId"], 31337);
        // The client's echo: its own member order (alphabetical, as mppx's schema leaves it).
        let reversed = |map: &Map<String, Value>| -> Map<String, Value> {
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let mut echoed = reversed(challenge.as_object().unwrap());
        echoed.insert(
            "request".into(),
            Value::Object(reversed(challenge["request"].as_object().unwrap())),
        );
        let credential = json!({
            "challenge": echoed,
            "payload": {"hash": "0xab", "type": "hash"},
            "source": "did:pkh:eip155:31337:0x9E91bDc0Bd0FB8F4Cd17ec67606061b729F597b4",
        });
        let header = mpp_authorization(&credential).unwrap();
        let parsed = mpp::parse_authorization(&header).unwrap();
        assert_eq!(parsed.challenge_id(), served.id);
        let reencoded = URL_SAFE_NO_PAD
            .decode(header.strip_prefix("Payment ").unwrap())
            .unwrap();
        let reencoded: Value = serde_json::from_slice(&reencoded).unwrap();
        assert_eq!(reencoded["challenge"]["request"], served.request.as_str());
        assert_eq!(mpp_challenge_id(&credential), Some(served.id.as_str()));
    }

    #[test]
    fn a_receipt_names_the_challenge_it_settled() {
        let receipt = mpp_receipt(&mpp::receipt_header("0xab", 0), Some("ch")).unwrap();
        assert_eq!(receipt["reference"], "0xab");
        assert_eq!(receipt["status"], "success");
        assert_eq!(receipt["challengeId"], "ch");
    }

    #[test]
    fn x402_members_are_the_headers_json() {
        let payment =
            json!({"x402Version": 2, "extensions": {"payment-identifier": {"info": {"id": "k"}}}});
        let header = x402_header(&payment).unwrap();
        assert_eq!(x402_object(&header), Some(payment.clone()));
        assert_eq!(x402_payment_identifier(&payment), Some("k"));
        assert_eq!(x402_header(&json!("text")), None);
        assert_eq!(x402_object("not base64"), None);
        assert_eq!(mpp_payment_required("Basic realm=\"x\""), None);
        assert_eq!(mpp_authorization(&json!({"payload": {}})), None);
    }
}
