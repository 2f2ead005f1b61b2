//! The Bearer JWT a Coinbase CDP-hosted facilitator demands on every call (pure: the caller
//! passes the time and the random nonce).
//!
//! The CDP API key's Ed25519 form: the key id (`kid`/`sub`) and the secret, base64 of 64 bytes
//! (32-byte seed, then its 32-byte public key). One token per request, valid 120 seconds:
//! header `{"alg":"EdDSA","kid":<key id>,"typ":"JWT","nonce":<32 hex>}`, claims
//! `{"sub":<key id>,"iss":"cdp","aud":["cdp_service"],"uris":["<METHOD> <host><path>"],"iat",
//! "nbf","exp"}`, signed EdDSA over `base64url(header).base64url(claims)` (RFC 7519/8037).
//! `host` is the URL's authority (with a non-default port), `path` the full request path.
//!
//! The secret never leaves this module except as a signature; `CdpKey`'s Debug prints the key
//! id only.

use super::PaymentError;
use base64::{
    engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD},
    Engine as _,
};
use ed25519_dalek::{Signer, SigningKey};
use serde_json::json;

/// Lifetime of one token, seconds (the CDP SDK's default).
pub const TOKEN_TTL_S: u64 = 120;
/// Bytes of the header nonce.
pub const NONCE_BYTES: usize = 16;

/// A parsed CDP API key (Ed25519).
#[derive(Clone)]
pub struct CdpKey {
    key_id: String,
    signing: SigningKey,
}

impl std::fmt::Debug for CdpKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CdpKey {{ key_id: {:?}, secret: <hidden> }}",
            self.key_id
        )
    }
}

impl CdpKey {
    /// Parses the key id and the base64 secret (seed ‖ public key, 64 bytes; the public half must
    /// be the seed's). Anything else is `ConfigInvalid` (the secret is never echoed).
    pub fn parse(key_id: &str, secret_base64: &str) -> Result<Self, PaymentError> {
        let key_id = key_id.trim();
        let bytes = STANDARD
            .decode(secret_base64.trim().as_bytes())
            .map_err(|_| PaymentError::ConfigInvalid)?;
        if key_id.is_empty() || key_id.len() > 256 || bytes.len() != 64 {
            return Err(PaymentError::ConfigInvalid);
        }
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&bytes[..32]);
        let signing = SigningKey::from_bytes(&seed);
        if signing.verifying_key().as_bytes()[..] != bytes[32..] {
            return Err(PaymentError::ConfigInvalid);
        }
        Ok(CdpKey {
            key_id: key_id.to_owned(),
            signing,
        })
    }

    /// The token for one `method` call to `host` + `path` at `now_s` with header `nonce`.
    pub fn token(
        &self,
        method: &str,
        host: &str,
        path: &str,
        now_s: u64,
        nonce: &[u8; NONCE_BYTES],
    ) -> String {
        let header = json!({
            "alg": "EdDSA",
            "kid": self.key_id,
            "typ": "JWT",
            "nonce": crate::engine::sign::hex(nonce),
        });
        let claims = json!({
            "sub": self.key_id,
            "iss": "cdp",
            "aud": ["cdp_service"],
            "uris": [format!("{method} {host}{path}")],
            "iat": now_s,
            "nbf": now_s,
            "exp": now_s.saturating_add(TOKEN_TTL_S),
        });
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self.signing.sign(signing_input.as_bytes());
        format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        )
    }
}

/// Splits a facilitator base URL (`https://host[:port][/prefix]`) and a call path into the
/// `uris` claim's host (the authority) and full path (prefix + path). None for another scheme,
/// userinfo, a query or a fragment.
pub fn host_and_path(base_url: &str, path: &str) -> Option<(String, String)> {
    let rest = base_url
        .strip_prefix("https://")
        .or_else(|| base_url.strip_prefix("http://"))?;
    let (authority, prefix) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains('@') || rest.contains(['?', '#']) {
        return None;
    }
    let prefix = prefix.trim_end_matches('/');
    Some((authority.to_owned(), format!("{prefix}{path}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signature, Verifier};
    use serde_json::Value;

    /// A fixed test key: seed = 0x01..0x20 (never a real credential).
    fn test_secret() -> String {
        let seed: Vec<u8> = (1u8..=32).collect();
        let mut fixed = [0u8; 32];
        fixed.copy_from_slice(&seed);
        let public = SigningKey::from_bytes(&fixed).verifying_key();
        STANDARD.encode([seed.as_slice(), public.as_bytes()].concat())
    }

    /// Produced independently by node:crypto (Ed25519 sign of the same JSON bytes with the
    /// PKCS#8-wrapped seed 0x01..0x20), for key id "test-key", POST 127.0.0.1:18103/verify,
    /// now 1700000000, nonce 16 × 0xab. Ed25519 is deterministic, so the bytes must match.
    const NODE_VECTOR: &str = include_str!("cdp_jwt.vector.txt");

    #[test]
    fn the_token_matches_an_independent_node_crypto_signature() {
        let key = CdpKey::parse("test-key", &test_secret()).unwrap();
        let token = key.token(
            "POST",
            "127.0.0.1:18103",
            "/verify",
            1_700_000_000,
            &[0xab; 16],
        );
        assert_eq!(token, NODE_VECTOR.trim());
    }

    #[test]
    fn the_token_carries_the_cdp_claims_and_verifies() {
        let key = CdpKey::parse("organizations/o/apiKeys/k", &test_secret()).unwrap();
        let token = key.token(
            "GET",
            "api.cdp.coinbase.com",
            "/platform/v2/x402/supported",
            1_000,
            &[7; 16],
        );
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let decode = |p: &str| -> Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap()
        };
        let (header, claims) = (decode(parts[0]), decode(parts[1]));
        assert_eq!(header["alg"], "EdDSA");
        assert_eq!(header["typ"], "JWT");
        assert_eq!(header["kid"], "organizations/o/apiKeys/k");
        assert_eq!(header["nonce"], "07".repeat(16));
        assert_eq!(claims["sub"], "organizations/o/apiKeys/k");
        assert_eq!(claims["iss"], "cdp");
        assert_eq!(claims["aud"], json!(["cdp_service"]));
        assert_eq!(
            claims["uris"],
            json!(["GET api.cdp.coinbase.com/platform/v2/x402/supported"])
        );
        assert_eq!(
            (claims["nbf"].as_u64(), claims["exp"].as_u64()),
            (Some(1_000), Some(1_120))
        );
        let signature: [u8; 64] = URL_SAFE_NO_PAD
            .decode(parts[2])
            .unwrap()
            .try_into()
            .unwrap();
        let public = key.signing.verifying_key();
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(public
            .verify(input.as_bytes(), &Signature::from_bytes(&signature))
            .is_ok());
        assert!(public
            .verify(b"tampered", &Signature::from_bytes(&signature))
            .is_err());
        assert!(!format!("{key:?}").contains(&test_secret()));
    }

    #[test]
    fn malformed_keys_are_refused_without_echo() {
        let secret = test_secret();
        assert!(CdpKey::parse("", &secret).is_err());
        assert!(CdpKey::parse("k", "not base64!").is_err());
        assert!(CdpKey::parse("k", &STANDARD.encode([1u8; 32])).is_err());
        // A public half that is not the seed's.
        let mut bytes = STANDARD.decode(&secret).unwrap();
        bytes[63] ^= 1;
        assert_eq!(
            CdpKey::parse("k", &STANDARD.encode(bytes)).unwrap_err(),
            PaymentError::ConfigInvalid
        );
    }

    #[test]
    fn uris_host_and_path_come_from_the_base_url() {
        assert_eq!(
            host_and_path("https://api.cdp.coinbase.com/platform/v2/x402", "/verify"),
            Some((
                "api.cdp.coinbase.com".into(),
                "/platform/v2/x402/verify".into()
            ))
        );
        assert_eq!(
            host_and_path("http://127.0.0.1:18103", "/settle"),
            Some(("127.0.0.1:18103".into(), "/settle".into()))
        );
        assert_eq!(
            host_and_path("https://h/x/", "/supported"),
            Some(("h".into(), "/x/supported".into()))
        );
        for bad in ["ftp://h", "https://", "https://u@h/", "https://h/?q", "h/x"] {
            assert_eq!(host_and_path(bad, "/verify"), None, "{bad}");
        }
    }
}
