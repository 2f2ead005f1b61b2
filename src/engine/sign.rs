//! Ed25519 signatures over reports: the signed bytes are the RFC 8785 (JCS) canonical form of the
//! report object without its `signature` member, so a saved report verifies offline whatever its key
//! order or whitespace. `key_id` = the first 16 hex digits of SHA-256(public key).
//!
//! Every signature is a standard Ed25519 signature (RFC 8032 verification accepts it unchanged).
//! Only the secret nonce may differ from RFC 8032's: with [`Nonce::Fresh`] it is drawn from 32
//! random bytes instead of from the message, so a report (up to a whole shaped payload) is hashed
//! once instead of twice. Signatures are the one part of a response the determinism rule exempts.

use crate::engine::jsjson::{to_jcs, to_jcs_with_slot, write_js_string};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use curve25519_dalek::{edwards::EdwardsPoint, scalar::Scalar};
use ed25519_dalek::hazmat::ExpandedSecretKey;
use ed25519_dalek::{Signature, Verifier as _, VerifyingKey};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256, Sha512};

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

/// Where a signature's secret nonce `r` comes from. Both give signatures any Ed25519 verifier
/// accepts; a nonce must never repeat across different messages, which both guarantee.
#[derive(Clone, Copy)]
pub enum Nonce {
    /// RFC 8032 §5.1.6: `r = SHA-512(prefix ‖ message)`. Deterministic; the message is hashed twice
    /// (once for `r`, once for the challenge).
    FromMessage,
    /// `r = SHA-512(prefix ‖ seed)` for 32 fresh bytes from a CSPRNG: the message is hashed once.
    /// The secret prefix keeps `r` secret even if the seed were seen.
    Fresh([u8; 32]),
}

/// A report signer holding one Ed25519 key.
pub struct ReportSigner {
    secret: ExpandedSecretKey,
    public: [u8; 32],
    key_id: String,
}

impl ReportSigner {
    /// A signer from a 32-byte Ed25519 seed (the `SIGNING_KEY` secret, decoded).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let secret = ExpandedSecretKey::from(seed);
        let public = VerifyingKey::from(&secret).to_bytes();
        let key_id = key_id(&public);
        ReportSigner {
            secret,
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
    pub fn sign(&self, report: &mut Map<String, Value>, nonce: Nonce) {
        report.shift_remove(SIGNATURE_MEMBER);
        let signature = self.signature_over(signed_bytes(report).as_bytes(), nonce);
        report.insert(SIGNATURE_MEMBER.to_owned(), signature);
    }

    /// The response body of a signed `report`: its JCS bytes with the `signature` member spliced
    /// into its sorted place. The body is itself in JCS form, the report is serialised once into
    /// the buffer that is answered (the member is inserted in place: only the members that sort
    /// after it move), and the signed bytes are exactly the body without that member (any existing
    /// one is replaced).
    pub fn signed_body(&self, mut report: Map<String, Value>, nonce: Nonce) -> Vec<u8> {
        report.shift_remove(SIGNATURE_MEMBER);
        let (mut jcs, slot) = to_jcs_with_slot(&report, SIGNATURE_MEMBER, SIGNATURE_MEMBER_ROOM);
        let signature = self.signature_over(jcs.as_bytes(), nonce);
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
    fn signature_over(&self, bytes: &[u8], nonce: Nonce) -> Value {
        let sig = self.ed25519(bytes, nonce);
        json!({"alg": "Ed25519", "key_id": self.key_id, "sig": STANDARD.encode(sig)})
    }

    /// RFC 8032 §5.1.6 signing, steps 2–6, with the nonce taken as `nonce` says:
    /// `R = r·B`, `k = SHA-512(R ‖ A ‖ M)`, `S = r + k·s`; the signature is `R ‖ S`.
    fn ed25519(&self, message: &[u8], nonce: Nonce) -> [u8; 64] {
        let mut nonce_hash = Sha512::new().chain_update(self.secret.hash_prefix);
        match nonce {
            Nonce::FromMessage => nonce_hash.update(message),
            Nonce::Fresh(seed) => nonce_hash.update(seed),
        }
        let r = Scalar::from_hash(nonce_hash);
        let big_r = EdwardsPoint::mul_base(&r).compress();
        let k = Scalar::from_hash(
            Sha512::new()
                .chain_update(big_r.as_bytes())
                .chain_update(self.public)
                .chain_update(message),
        );
        let big_s = k * self.secret.scalar + r;
        let mut signature = [0u8; 64];
        signature[..32].copy_from_slice(big_r.as_bytes());
        signature[32..].copy_from_slice(big_s.as_bytes());
        signature
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

    const FRESH: Nonce = Nonce::Fresh([3u8; 32]);

    fn unhex(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rfc8032_test_vectors_sign_byte_for_byte_with_the_message_nonce() {
        // RFC 8032 §7.1 TEST 1 (empty message) and TEST 3 (two bytes).
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
            let signed = signer.ed25519(&unhex(message), Nonce::FromMessage);
            assert_eq!(hex(&signed), signature);
        }
    }

    #[test]
    fn message_nonce_signatures_equal_ed25519_dalek_and_fresh_ones_verify_strictly() {
        use ed25519_dalek::{Signer as _, SigningKey};
        let mut rng = context_meter_test_rng::Lcg(41);
        for case in 0..40 {
            let seed: [u8; 32] = std::array::from_fn(|_| rng.below(256) as u8);
            let message: Vec<u8> = (0..rng.below(300) * (case % 3 + 1))
                .map(|_| rng.below(256) as u8)
                .collect();
            let signer = ReportSigner::from_seed(&seed);
            let dalek = SigningKey::from_bytes(&seed);
            assert_eq!(signer.public_key(), dalek.verifying_key().to_bytes());
            assert_eq!(
                signer.ed25519(&message, Nonce::FromMessage),
                dalek.sign(&message).to_bytes()
            );
            let key = dalek.verifying_key();
            let nonce: [u8; 32] = std::array::from_fn(|_| rng.below(256) as u8);
            let fresh = signer.ed25519(&message, Nonce::Fresh(nonce));
            assert_ne!(fresh, dalek.sign(&message).to_bytes());
            assert!(key
                .verify_strict(&message, &Signature::from_bytes(&fresh))
                .is_ok());
            // Another seed, another R; the same seed, the same signature.
            let other = signer.ed25519(&message, Nonce::Fresh(nonce.map(|b| b ^ 1)));
            assert_ne!(other[..32], fresh[..32]);
            assert!(key
                .verify_strict(&message, &Signature::from_bytes(&other))
                .is_ok());
            assert_eq!(signer.ed25519(&message, Nonce::Fresh(nonce)), fresh);
            let mut tampered = message.clone();
            tampered.push(0);
            assert!(key
                .verify_strict(&tampered, &Signature::from_bytes(&fresh))
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
        s.sign(&mut report, FRESH);
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
            let body = s.signed_body(map.clone(), FRESH);
            let parsed: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(verify(&parsed, &s.public_key()), Ok(()), "{report}");
            assert_eq!(to_jcs(&parsed).as_bytes(), body.as_slice(), "{report}");
            let mut unsigned = map.clone();
            unsigned.shift_remove(SIGNATURE_MEMBER);
            let member = body.len() - to_jcs(&Value::Object(unsigned)).len();
            assert!(member <= SIGNATURE_MEMBER_ROOM, "{member}");
            let mut signed = map;
            s.sign(&mut signed, FRESH);
            assert_eq!(parsed, Value::Object(signed), "{report}");
        }
    }

    #[test]
    fn a_signed_body_with_a_whole_payload_is_allocated_once() {
        // About 77,000 bytes, a fifth of them escapes: a buffer grown by doubling ends at 131,072.
        let payload = "{\"k\":\"word word\"},".repeat(3500);
        let report = json!({"shaped_payload": payload, "verdict": "FITS", "tokens": 10});
        let body = signer().signed_body(report.as_object().unwrap().clone(), FRESH);
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
        s.sign(&mut report, Nonce::FromMessage);
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
