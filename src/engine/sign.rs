//! Ed25519 signatures over reports: the signed bytes are the RFC 8785 (JCS) canonical form of the
//! report object without its `signature` member, so a saved report verifies offline whatever its key
//! order or whitespace. `key_id` = the first 16 hex digits of SHA-256(public key).
//!
//! Signing is ed25519-dalek's own RFC 8032 Ed25519 (`SigningKey::sign`): the secret nonce is
//! `SHA-512(prefix ‖ message)`, so a signature depends on the key and the signed bytes alone, is
//! the same for the same report, and draws no randomness (its safety does not rest on the runtime's
//! random bytes). The price is a second SHA-512 of the signed bytes (ARCHITECTURE §7).

use crate::engine::jsjson::{to_jcs, to_jcs_with_slot, write_js_string};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// Name of the report member that carries the signature.
pub const SIGNATURE_MEMBER: &str = "signature";

/// Room for `,"signature":{"alg":"Ed25519","key_id":…16 hex…,"sig":…88 base64…}` (155 bytes).
const SIGNATURE_MEMBER_ROOM: usize = 160;

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// `key_id` of a public key: first 16 hex digits of its SHA-256.
pub fn key_id(public_key: &[u8; 32]) -> String {
    sha256_hex(public_key)[..16].to_owned()
}

/// The bytes a signature over `report` covers: its JCS form. `report` is held without its
/// `signature` member, as [`ReportSigner::sign`] holds it once it has removed any; the benchmarks
/// hash these bytes to measure what signing a report costs at the least.
pub fn signed_bytes(report: &Map<String, Value>) -> String {
    to_jcs_with_slot(report, SIGNATURE_MEMBER, 0).0
}

/// A report signer holding one Ed25519 key: ed25519-dalek's signing key (the seed and its public
/// key, derived once here) and the key's `key_id`.
pub struct ReportSigner {
    key: SigningKey,
    key_id: String,
}

impl ReportSigner {
    /// A signer from a 32-byte Ed25519 seed (the `SIGNING_KEY` secret, decoded).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let key = SigningKey::from_bytes(seed);
        let key_id = key_id(&key.verifying_key().to_bytes());
        ReportSigner { key, key_id }
    }

    /// The raw public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The public key, base64 (standard alphabet, padded).
    pub fn public_key_b64(&self) -> String {
        STANDARD.encode(self.public_key())
    }

    /// First 16 hex digits of SHA-256(public key).
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// Signs `report` in place: any existing `signature` member is replaced by
    /// `{alg:"Ed25519", key_id, sig}` over the JCS bytes of the rest of the object.
    pub fn sign(&self, report: &mut Map<String, Value>) {
        report.shift_remove(SIGNATURE_MEMBER);
        let signature = self.signature_over(signed_bytes(report).as_bytes());
        report.insert(SIGNATURE_MEMBER.to_owned(), signature);
    }

    /// The response body of a signed `report`: its JCS bytes with the `signature` member spliced
    /// into its sorted place. The body is itself in JCS form, the report is serialised once into
    /// the buffer that is answered (the member is inserted in place: only the members that sort
    /// after it move), and the signed bytes are exactly the body without that member (any existing
    /// one is replaced).
    pub fn signed_body(&self, mut report: Map<String, Value>) -> Vec<u8> {
        report.shift_remove(SIGNATURE_MEMBER);
        let (mut jcs, slot) = to_jcs_with_slot(&report, SIGNATURE_MEMBER, SIGNATURE_MEMBER_ROOM);
        let signature = self.signature_over(jcs.as_bytes());
        let mut member = String::with_capacity(SIGNATURE_MEMBER_ROOM);
        if slot > 1 {
            member.push(',');
        }
        write_js_string(&mut member, SIGNATURE_MEMBER);
        member.push(':');
        member.push_str(&to_jcs(&signature));
        if slot == 1 && !report.is_empty() {
            member.push(',');
        }
        jcs.insert_str(slot, &member);
        jcs.into_bytes()
    }

    /// The `{alg, key_id, sig}` object over `bytes`.
    fn signature_over(&self, bytes: &[u8]) -> Value {
        let sig = self.ed25519(bytes);
        json!({"alg": "Ed25519", "key_id": self.key_id, "sig": STANDARD.encode(sig)})
    }

    /// The RFC 8032 Ed25519 signature `R ‖ S` of `message`, as ed25519-dalek computes it.
    fn ed25519(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }
}

/// Why a report did not verify.
#[derive(Debug, PartialEq, Eq)]
pub enum VerifyError {
    NotAnObject,
    NoSignature,
    WrongAlgorithm,
    WrongKeyId,
    MalformedSignature,
    BadPublicKey,
    Mismatch,
}

/// Verifies a signed report (the whole response body) against `public_key`.
pub fn verify(report: &Value, public_key: &[u8; 32]) -> Result<(), VerifyError> {
    let obj = report.as_object().ok_or(VerifyError::NotAnObject)?;
    let sig = obj
        .get(SIGNATURE_MEMBER)
        .and_then(Value::as_object)
        .ok_or(VerifyError::NoSignature)?;
    if sig.get("alg").and_then(Value::as_str) != Some("Ed25519") {
        return Err(VerifyError::WrongAlgorithm);
    }
    if sig.get("key_id").and_then(Value::as_str) != Some(key_id(public_key).as_str()) {
        return Err(VerifyError::WrongKeyId);
    }
    let raw = sig
        .get("sig")
        .and_then(Value::as_str)
        .and_then(|s| STANDARD.decode(s).ok())
        .and_then(|b| <[u8; 64]>::try_from(b.as_slice()).ok())
        .ok_or(VerifyError::MalformedSignature)?;
    let key = VerifyingKey::from_bytes(public_key).map_err(|_| VerifyError::BadPublicKey)?;
    let mut unsigned = obj.clone();
    unsigned.shift_remove(SIGNATURE_MEMBER);
    let bytes = to_jcs(&Value::Object(unsigned));
    key.verify(bytes.as_bytes(), &Signature::from_bytes(&raw))
        .map_err(|_| VerifyError::Mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer() -> ReportSigner {
        ReportSigner::from_seed(&[7u8; 32])
    }

    fn unhex(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rfc8032_test_vectors_sign_byte_for_byte() {
        // RFC 8032 §7.1 TEST 1 (empty message) and TEST 3 (two bytes): the nonce is the RFC's
        // (from the message), so the signatures are the published ones to the byte.
        let vectors = [
            (
                "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
                "",
                "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
            ),
            (
                "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
                "af82",
                "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
            ),
        ];
        for (seed, message, signature) in vectors {
            let signer = ReportSigner::from_seed(&unhex(seed).try_into().unwrap());
            assert_eq!(hex(&signer.ed25519(&unhex(message))), signature);
        }
    }

    #[test]
    fn signatures_are_deterministic_and_verify_strictly_with_ed25519_dalek() {
        let mut rng = context_meter_test_rng::Lcg(41);
        for case in 0..40 {
            let seed: [u8; 32] = std::array::from_fn(|_| rng.below(256) as u8);
            let message: Vec<u8> = (0..rng.below(300) * (case % 3 + 1))
                .map(|_| rng.below(256) as u8)
                .collect();
            let signer = ReportSigner::from_seed(&seed);
            let key = VerifyingKey::from_bytes(&signer.public_key()).unwrap();
            let signed = signer.ed25519(&message);
            // The same key and bytes, the same signature; any other bytes, another R.
            assert_eq!(signer.ed25519(&message), signed);
            let mut tampered = message.clone();
            tampered.push(0);
            assert_ne!(signer.ed25519(&tampered)[..32], signed[..32]);
            assert!(key
                .verify_strict(&message, &Signature::from_bytes(&signed))
                .is_ok());
            assert!(key
                .verify_strict(&tampered, &Signature::from_bytes(&signed))
                .is_err());
        }
    }

    #[test]
    fn rfc8032_test_vector_1_public_key() {
        // RFC 8032 §7.1 TEST 1: secret 9d61b19d…7f60 → public d75a9801…511a.
        let seed: [u8; 32] = [
            0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec,
            0x2c, 0xc4, 0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03,
            0x1c, 0xae, 0x7f, 0x60,
        ];
        assert_eq!(
            hex(&ReportSigner::from_seed(&seed).public_key()),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
        );
    }

    #[test]
    fn round_trip_and_key_order_independence() {
        let s = signer();
        let mut report = json!({"b": 1, "a": "x", "n": [1.5, null]})
            .as_object()
            .unwrap()
            .clone();
        s.sign(&mut report);
        let signed = Value::Object(report.clone());
        assert_eq!(verify(&signed, &s.public_key()), Ok(()));
        // Re-serialised with other key order and whitespace: still verifies.
        let reordered: Value =
            serde_json::from_str(&serde_json::to_string_pretty(&signed).unwrap()).unwrap();
        assert_eq!(verify(&reordered, &s.public_key()), Ok(()));
        assert_eq!(s.key_id().len(), 16);
    }

    #[test]
    fn a_signed_body_is_its_own_jcs_form_and_verifies() {
        let s = signer();
        let reports = [
            json!({}),
            json!({"a": 1}),
            json!({"z": 1}),
            json!({"b": 1, "a": "x\"y", "n": [1.5, null], "sig": 2, "signaturf": 3}),
            json!({"verdict": "FITS", "signature": "stale", "shaped_payload": "{\"k\":1}"}),
        ];
        for report in reports {
            let map = report.as_object().unwrap().clone();
            let body = s.signed_body(map.clone());
            let parsed: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(verify(&parsed, &s.public_key()), Ok(()), "{report}");
            assert_eq!(to_jcs(&parsed).as_bytes(), body.as_slice(), "{report}");
            let mut unsigned = map.clone();
            unsigned.shift_remove(SIGNATURE_MEMBER);
            let member = body.len() - to_jcs(&Value::Object(unsigned)).len();
            assert!(member <= SIGNATURE_MEMBER_ROOM, "{member}");
            let mut signed = map;
            s.sign(&mut signed);
            assert_eq!(parsed, Value::Object(signed), "{report}");
        }
    }

    #[test]
    fn the_same_report_gives_the_same_signed_body() {
        let s = signer();
        let report = json!({"verdict": "FITS", "tokens": 10, "shaped_payload": "{\"k\":1}"});
        let map = report.as_object().unwrap().clone();
        let body = s.signed_body(map.clone());
        assert_eq!(s.signed_body(map.clone()), body);
        let mut other = map;
        other.insert("tokens".into(), json!(11));
        let sig = |body: &[u8]| {
            let parsed: Value = serde_json::from_slice(body).unwrap();
            parsed[SIGNATURE_MEMBER]["sig"].as_str().unwrap().to_owned()
        };
        assert_ne!(sig(&s.signed_body(other)), sig(&body));
    }

    #[test]
    fn a_signed_body_with_a_whole_payload_is_allocated_once() {
        // About 77,000 bytes, a fifth of them escapes: a buffer grown by doubling ends at 131,072.
        let payload = "{\"k\":\"word word\"},".repeat(3500);
        let report = json!({"shaped_payload": payload, "verdict": "FITS", "tokens": 10});
        let body = signer().signed_body(report.as_object().unwrap().clone());
        assert!(body.len() > 70_000);
        assert!(
            body.capacity() <= body.len() + body.len() / 4 + 300,
            "{}",
            body.capacity()
        );
    }

    #[test]
    fn tampering_fails() {
        let s = signer();
        let mut report = json!({"verdict": "FITS", "tokens": 10})
            .as_object()
            .unwrap()
            .clone();
        s.sign(&mut report);
        let mut tampered = report.clone();
        tampered.insert("tokens".into(), json!(11));
        assert_eq!(
            verify(&Value::Object(tampered), &s.public_key()),
            Err(VerifyError::Mismatch)
        );
        let other = ReportSigner::from_seed(&[8u8; 32]);
        assert_eq!(
            verify(&Value::Object(report), &other.public_key()),
            Err(VerifyError::WrongKeyId)
        );
    }
}
