//! Ed25519 signatures over reports: the signed bytes are the RFC 8785 (JCS) canonical form of the
//! report object without its `signature` member, so a saved report verifies offline whatever its key
//! order or whitespace. `key_id` = the first 16 hex digits of SHA-256(public key).

use crate::engine::canonical::{to_jcs, to_jcs_with_slot, write_js_string};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// Name of the report member that carries the signature.
pub const SIGNATURE_MEMBER: &str = "signature";

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

/// A report signer holding one Ed25519 key.
pub struct ReportSigner {
    key: SigningKey,
    public: [u8; 32],
    key_id: String,
}

impl ReportSigner {
    /// A signer from a 32-byte Ed25519 seed (the `SIGNING_KEY` secret, decoded).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let key = SigningKey::from_bytes(seed);
        let public = key.verifying_key().to_bytes();
        let key_id = key_id(&public);
        ReportSigner {
            key,
            public,
            key_id,
        }
    }

    /// The raw public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.public
    }

    /// The public key, base64 (standard alphabet, padded).
    pub fn public_key_b64(&self) -> String {
        STANDARD.encode(self.public)
    }

    /// First 16 hex digits of SHA-256(public key).
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// Signs `report` in place: any existing `signature` member is replaced by
    /// `{alg:"Ed25519", key_id, sig}` over the JCS bytes of the rest of the object.
    pub fn sign(&self, report: &mut Map<String, Value>) {
        report.shift_remove(SIGNATURE_MEMBER);
        let signature =
            self.signature_over(to_jcs_with_slot(report, SIGNATURE_MEMBER).0.as_bytes());
        report.insert(SIGNATURE_MEMBER.to_owned(), signature);
    }

    /// The response body of a signed `report`: its JCS bytes with the `signature` member spliced
    /// into its sorted place. The body is itself in JCS form, the report is serialised once, and
    /// the signed bytes are exactly the body without that member (any existing one is replaced).
    pub fn signed_body(&self, mut report: Map<String, Value>) -> Vec<u8> {
        report.shift_remove(SIGNATURE_MEMBER);
        let (jcs, slot) = to_jcs_with_slot(&report, SIGNATURE_MEMBER);
        let signature = self.signature_over(jcs.as_bytes());
        let mut member = String::new();
        write_js_string(&mut member, SIGNATURE_MEMBER);
        member.push(':');
        member.push_str(&to_jcs(&signature));
        let mut body = Vec::with_capacity(jcs.len() + member.len() + 1);
        body.extend_from_slice(&jcs.as_bytes()[..slot]);
        if slot > 1 {
            body.push(b',');
            body.extend_from_slice(member.as_bytes());
        } else {
            body.extend_from_slice(member.as_bytes());
            if !report.is_empty() {
                body.push(b',');
            }
        }
        body.extend_from_slice(&jcs.as_bytes()[slot..]);
        body
    }

    /// The `{alg, key_id, sig}` object over `bytes`.
    fn signature_over(&self, bytes: &[u8]) -> Value {
        let sig = self.key.sign(bytes);
        json!({"alg": "Ed25519", "key_id": self.key_id, "sig": STANDARD.encode(sig.to_bytes())})
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
            let mut signed = map;
            s.sign(&mut signed);
            assert_eq!(parsed, Value::Object(signed), "{report}");
        }
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
