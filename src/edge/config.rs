//! Configuration from `[vars]` and secrets, with the embedded defaults `make dev` runs on.

use crate::edge::error::EdgeError;
use crate::engine::allowance::Limits;
use crate::engine::sign::ReportSigner;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use std::cell::RefCell;
use std::rc::Rc;
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

thread_local! {
    /// The signer of the last `SIGNING_KEY` seed read, with that seed. Deriving a signer (its
    /// public key is a basepoint multiplication, its `key_id` a SHA-256) cost every signed answer
    /// about 70 µs in workerd (ARCHITECTURE §7); an isolate keeps one key for its life, and a
    /// changed seed is derived afresh.
    static SIGNER: RefCell<Option<([u8; 32], Rc<ReportSigner>)>> = const { RefCell::new(None) };
}

/// The report signer from the `SIGNING_KEY` secret: base64 of a 32-byte Ed25519 seed. The secret
/// is read on every call; the signer is derived only when its seed differs from the last one's.
pub fn signer(env: &Env) -> Result<Rc<ReportSigner>, EdgeError> {
    let secret = env
        .secret("SIGNING_KEY")
        .map_err(|_| EdgeError::Misconfigured)?
        .to_string();
    let seed = STANDARD
        .decode(secret.trim())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
        .ok_or(EdgeError::Misconfigured)?;
    Ok(signer_of_seed(seed))
}

/// The signer of `seed`: the one held if it was derived from the same seed, else a new one, held.
fn signer_of_seed(seed: [u8; 32]) -> Rc<ReportSigner> {
    SIGNER.with(|held| {
        let mut held = held.borrow_mut();
        match held.as_ref() {
            Some((last, signer)) if *last == seed => Rc::clone(signer),
            _ => {
                let signer = Rc::new(ReportSigner::from_seed(&seed));
                *held = Some((seed, Rc::clone(&signer)));
                signer
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same seed gives the signer already derived; another seed its own key, then held.
    #[test]
    fn a_signer_is_derived_once_per_seed() {
        let first = signer_of_seed([1; 32]);
        assert!(Rc::ptr_eq(&first, &signer_of_seed([1; 32])));
        assert_eq!(
            first.public_key(),
            ReportSigner::from_seed(&[1; 32]).public_key()
        );
        let other = signer_of_seed([2; 32]);
        assert!(!Rc::ptr_eq(&first, &other));
        assert_eq!(
            other.public_key(),
            ReportSigner::from_seed(&[2; 32]).public_key()
        );
        assert!(Rc::ptr_eq(&other, &signer_of_seed([2; 32])));
        assert_ne!(signer_of_seed([1; 32]).public_key(), other.public_key());
    }
}
