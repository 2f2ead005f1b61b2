//! The facilitator's credentials, read from optional secrets, and the headers they put on each
//! facilitator call. Without any credential secret, calls carry no authentication (a local or
//! open facilitator). Never logged, never rendered into an error body.

use crate::engine::payment::PaymentError;
use worker::Env;

/// The credentials every facilitator call carries.
#[derive(Clone, Default)]
pub enum Credentials {
    /// No credential secret is set: calls carry no authentication.
    #[default]
    None,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a credential.
        f.write_str(match self {
            Credentials::None => "Credentials::None",
        })
    }
}

impl Credentials {
    /// From the optional secrets (none yet: no authentication).
    pub fn from_env(_env: &Env) -> Result<Self, PaymentError> {
        Ok(Credentials::None)
    }

    /// The headers for one call `method` `path` on the facilitator at `base_url` at `now_ms`.
    pub fn headers(
        &self,
        _base_url: &str,
        _method: &str,
        _path: &str,
        _now_ms: u64,
    ) -> Result<Vec<(&'static str, String)>, PaymentError> {
        Ok(Vec::new())
    }
}
