//! The facilitator's credentials, read from optional secrets, and the headers they put on each
//! facilitator call (`/supported`, `/verify`, `/settle`). Without the secrets, calls carry no
//! authentication (a local or open facilitator).
//!
//! Secrets (set both or neither; `wrangler secret put CDP_API_KEY_ID` / `CDP_API_KEY_SECRET`):
//! CDP_API_KEY_ID (the key's id or name) and CDP_API_KEY_SECRET (the Ed25519 secret, base64 of
//! 64 bytes). Each call then carries `Authorization: Bearer <JWT>`, a fresh 120-second token for
//! exactly that method, host and path (`engine::payment::cdp_jwt`). Never logged, never
//! rendered into an error body; a malformed or half-set credential is `payment_config_invalid`.

use crate::engine::payment::cdp_jwt::{self, CdpKey};
use crate::engine::payment::PaymentError;
use worker::Env;

/// The credentials every facilitator call carries.
#[derive(Clone, Debug, Default)]
pub enum Credentials {
    /// No credential secret is set: calls carry no authentication.
    #[default]
    None,
    /// A Coinbase CDP API key (Ed25519): a Bearer JWT per call.
    Cdp(Box<CdpKey>),
}

fn secret(env: &Env, name: &str) -> Option<String> {
    env.secret(name)
        .ok()
        .map(|s| s.to_string())
        .filter(|s| !s.trim().is_empty())
}

impl Credentials {
    /// From the optional secrets.
    pub fn from_env(env: &Env) -> Result<Self, PaymentError> {
        match (
            secret(env, "CDP_API_KEY_ID"),
            secret(env, "CDP_API_KEY_SECRET"),
        ) {
            (None, None) => Ok(Credentials::None),
            (Some(id), Some(key)) => {
                CdpKey::parse(&id, &key).map(|k| Credentials::Cdp(Box::new(k)))
            }
            _ => Err(PaymentError::ConfigInvalid),
        }
    }

    /// The headers for one call `method` `path` on the facilitator at `base_url` at `now_ms`.
    pub fn headers(
        &self,
        base_url: &str,
        method: &str,
        path: &str,
        now_ms: u64,
    ) -> Result<Vec<(&'static str, String)>, PaymentError> {
        let Credentials::Cdp(key) = self else {
            return Ok(Vec::new());
        };
        let (host, full_path) =
            cdp_jwt::host_and_path(base_url, path).ok_or(PaymentError::ConfigInvalid)?;
        let mut nonce = [0u8; cdp_jwt::NONCE_BYTES];
        getrandom::fill(&mut nonce).map_err(|_| PaymentError::FacilitatorUnavailable)?;
        let token = key.token(method, &host, &full_path, now_ms / 1000, &nonce);
        Ok(vec![("authorization", format!("Bearer {token}"))])
    }
}
