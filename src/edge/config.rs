//! Configuration from `[vars]` and secrets, with the embedded defaults `make dev` runs on.

use crate::edge::error::EdgeError;
use crate::engine::allowance::Limits;
use crate::engine::sign::ReportSigner;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use worker::Env;

/// A `[vars]` string, if set and non-empty.
pub fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name)
        .ok()
        .map(|v| v.to_string())
        .filter(|s| !s.is_empty())
}

/// A `[vars]` integer, or `default` when unset or not a number.
pub fn var_u64(env: &Env, name: &str, default: u64) -> u64 {
    var(env, name)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

/// The free-tier limits in force: `FREE_PER_DAY` and `FREE_MIN_INTERVAL_MS`, else the criteria's
/// 100 per day, 5,000 ms apart. A per-day figure past `u32::MAX` saturates rather than wraps.
pub fn free_limits(env: &Env) -> Limits {
    let published = Limits::default();
    Limits {
        per_day: u32::try_from(var_u64(env, "FREE_PER_DAY", u64::from(published.per_day)))
            .unwrap_or(u32::MAX),
        min_interval_ms: var_u64(env, "FREE_MIN_INTERVAL_MS", published.min_interval_ms),
    }
}

/// The report signer from the `SIGNING_KEY` secret: base64 of a 32-byte Ed25519 seed.
pub fn signer(env: &Env) -> Result<ReportSigner, EdgeError> {
    let secret = env
        .secret("SIGNING_KEY")
        .map_err(|_| EdgeError::Misconfigured)?
        .to_string();
    let seed = STANDARD
        .decode(secret.trim())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
        .ok_or(EdgeError::Misconfigured)?;
    Ok(ReportSigner::from_seed(&seed))
}
