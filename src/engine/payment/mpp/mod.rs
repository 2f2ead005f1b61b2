//! MPP, the pure half: the "Payment" HTTP authentication scheme (draft-httpauth-payment) with
//! method `tempo`, intent `charge` (draft-tempo-charge), push mode only — the payer broadcasts a
//! TIP-20 `transferWithMemo` and presents its hash; the worker checks the receipt through a
//! Tempo JSON-RPC (`chain`). The edge half is `edge::payment::mpp`.
//!
//! Wire format (as the stock `mppx` 0.11 client reads and writes it):
//! - challenge: `WWW-Authenticate: Payment id="…", realm="…", method="tempo", intent="charge",
//!   request="<base64url, no padding, of the JCS request>", expires="<RFC 3339, ms>"`; the request
//!   is `{"amount","currency","methodDetails":{"chainId","supportedModes":["push"]},"recipient"}`;
//! - credential: `Authorization: Payment <base64url of {"challenge":{…echo, request as the same
//!   base64url string…},"payload":{"type":"hash","hash":"0x…"},"source":"did:pkh:eip155:<chain>:0x…"}>`;
//! - receipt: `Payment-Receipt: <base64url of {"method":"tempo","reference":"0x<tx>","status":"success","timestamp":…}>`.
//!
//! The challenge `id` is stateless: base64url(HMAC-SHA256(server secret, realm, method, intent,
//! request, expires, route, Idempotency-Key, body fingerprint)). The request carries the amount, so
//! the id binds route, key, amount, body and expiry; a credential whose echo differs in any of them
//! is refused before any state is touched.

pub mod chain;
#[cfg(test)]
mod tests;

use crate::engine::ClosedError;
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};

/// The contract's MPP path.
pub const PATH: &str = "/v1/mpp/context-budget-pack";
/// The payment method and intent served.
pub const METHOD: &str = "tempo";
pub const INTENT: &str = "charge";
/// Largest `Authorization` header read (a push credential is ~700 bytes).
pub const MAX_AUTHORIZATION_BYTES: usize = 8 * 1024;
/// Default lifetime of a challenge.
pub const DEFAULT_CHALLENGE_TTL_MS: u64 = 300_000;
/// How long a client waits before retrying a hash the chain does not know yet.
pub const NOT_FOUND_RETRY_AFTER_MS: u64 = 2_000;
/// Problem types of draft-httpauth-payment.
pub const PROBLEM_PAYMENT_REQUIRED: &str = "https://paymentauth.org/problems/payment-required";
const PROBLEM_MALFORMED: &str = "https://paymentauth.org/problems/malformed-credential";
const PROBLEM_INVALID_CHALLENGE: &str = "https://paymentauth.org/problems/invalid-challenge";
const PROBLEM_VERIFICATION_FAILED: &str = "https://paymentauth.org/problems/verification-failed";
const PROBLEM_EXPIRED: &str = "https://paymentauth.org/problems/payment-expired";

/// The Tempo settings of the MPP rail (from `[vars]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MppConfig {
    /// The challenge's realm (the host the worker answers on, unless `MPP_REALM` is set).
    pub realm: String,
    /// TIP-20 token address, lowercase `0x` + 40 hex.
    pub currency: String,
    /// Our receiving address, lowercase `0x` + 40 hex.
    pub recipient: String,
    pub chain_id: u64,
    pub challenge_ttl_ms: u64,
}

/// An EVM address as lowercase `0x` + 40 hex, if `text` is one (any case).
pub fn normalized_address(text: &str) -> Option<String> {
    let hex = text.strip_prefix("0x")?;
    (hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("0x{}", hex.to_ascii_lowercase()))
}

impl MppConfig {
    /// Checks and normalizes the configured values.
    pub fn new(
        realm: &str,
        currency: &str,
        recipient: &str,
        chain_id: u64,
        challenge_ttl_ms: u64,
    ) -> Result<Self, MppError> {
        let printable = |s: &str| {
            !s.is_empty() && s.len() <= 255 && s.bytes().all(|b| b.is_ascii_graphic() && b != b'"')
        };
        if !printable(realm) || chain_id == 0 || chain_id > (1 << 53) || challenge_ttl_ms < 1_000 {
            return Err(MppError::ConfigInvalid);
        }
        Ok(Self {
            realm: realm.to_owned(),
            currency: normalized_address(currency).ok_or(MppError::ConfigInvalid)?,
            recipient: normalized_address(recipient).ok_or(MppError::ConfigInvalid)?,
            chain_id,
            challenge_ttl_ms,
        })
    }

    /// The chain as CAIP-2 (the ledger row's transaction reference names it).
    pub fn network(&self) -> String {
        format!("eip155:{}", self.chain_id)
    }

    /// The `request` auth-param: base64url (no padding) of the JCS request object for `price_units`.
    /// Keys in JCS order; push is the only mode offered (see `supportedModes`).
    pub fn request_param(&self, price_units: u64) -> String {
        let json = format!(
            "{{\"amount\":\"{price_units}\",\"currency\":\"{}\",\"methodDetails\":{{\"chainId\":{},\"supportedModes\":[\"push\"]}},\"recipient\":\"{}\"}}",
            self.currency, self.chain_id, self.recipient
        );
        URL_SAFE_NO_PAD.encode(json)
    }
}

/// What a challenge id binds, besides the request (which holds the amount).
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    pub secret: &'a [u8],
    pub route_id: &'a str,
    pub idempotency_key: &'a str,
    /// The pack's keyed body fingerprint.
    pub fingerprint: &'a str,
    pub price_units: u64,
}

/// One challenge as served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    pub id: String,
    pub realm: String,
    pub request: String,
    pub expires: String,
}

fn challenge_id(config: &MppConfig, binding: &Binding, request: &str, expires: &str) -> String {
    let mac = super::hmac::hmac_sha256(
        binding.secret,
        &[
            b"context-meter mpp challenge v1",
            b"\n",
            config.realm.as_bytes(),
            b"\n",
            METHOD.as_bytes(),
            b"\n",
            INTENT.as_bytes(),
            b"\n",
            request.as_bytes(),
            b"\n",
            expires.as_bytes(),
            b"\n",
            binding.route_id.as_bytes(),
            b"\n",
            binding.idempotency_key.as_bytes(),
            b"\n",
            binding.fingerprint.as_bytes(),
        ],
    );
    URL_SAFE_NO_PAD.encode(mac)
}

/// A fresh challenge for this route, key, body and price, expiring `challenge_ttl_ms` after `now_ms`.
pub fn challenge(config: &MppConfig, binding: &Binding, now_ms: u64) -> Challenge {
    challenge_until(
        config,
        binding,
        now_ms.saturating_add(config.challenge_ttl_ms),
    )
}

/// The challenge of `binding` that expires at `expires_ms`: the same id for the same binding and
/// expiry, so requests that share an expiry share one challenge.
pub fn challenge_until(config: &MppConfig, binding: &Binding, expires_ms: u64) -> Challenge {
    let request = config.request_param(binding.price_units);
    let expires = crate::engine::time::iso8601_millis(expires_ms);
    Challenge {
        id: challenge_id(config, binding, &request, &expires),
        realm: config.realm.clone(),
        request,
        expires,
    }
}

/// The `WWW-Authenticate` value of a challenge (every value is ours: base64url, an RFC 3339 time, a
/// checked realm; none needs escaping).
pub fn www_authenticate(challenge: &Challenge) -> String {
    format!(
        "Payment id=\"{}\", realm=\"{}\", method=\"{METHOD}\", intent=\"{INTENT}\", request=\"{}\", expires=\"{}\"",
        challenge.id, challenge.realm, challenge.request, challenge.expires
    )
}

/// Milliseconds of an RFC 3339 UTC time exactly as this worker writes it (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
pub fn parse_expires(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'.' || b[23] != b'Z' {
        return None;
    }
    let number = |from: usize, to: usize| -> Option<u64> {
        let digits = text.get(from..to)?;
        digits
            .bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
    let (hour, minute, second, millis) = (
        number(11, 13)?,
        number(14, 16)?,
        number(17, 19)?,
        number(20, 23)?,
    );
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 59 || year < 1970 {
        return None;
    }
    let days = crate::engine::time::days_from_civil(year as i64, month as u32, day as u32);
    let ms = u64::try_from(days).ok()? * crate::engine::time::DAY_MS
        + ((hour * 60 + minute) * 60 + second) * 1000
        + millis;
    // Round trip: no 31 February.
    (crate::engine::time::iso8601_millis(ms) == text).then_some(ms)
}

/// The challenge as the credential echoes it (extra members such as `opaque` are ignored: this
/// worker never issues them, and the id does not cover them).
#[derive(Debug, Clone)]
struct EchoedChallenge {
    id: String,
    realm: String,
    method: String,
    intent: String,
    request: String,
    expires: Option<String>,
}

/// A decoded `Authorization: Payment` credential (not yet checked against anything).
#[derive(Debug, Clone)]
pub struct Credential {
    challenge: EchoedChallenge,
    /// `payload.type`.
    kind: String,
    /// `payload.hash`.
    hash: Option<String>,
    source: Option<String>,
}

impl Credential {
    /// The echoed challenge id (names the challenge's use record once the id is checked).
    pub fn challenge_id(&self) -> &str {
        &self.challenge.id
    }
}

/// Decodes an `Authorization` value: the `Payment` scheme (one of possibly several, comma
/// separated) followed by base64url (padding tolerated) of the credential JSON.
pub fn parse_authorization(header: &str) -> Result<Credential, MppError> {
    if header.len() > MAX_AUTHORIZATION_BYTES {
        return Err(MppError::CredentialOversized);
    }
    let token = header
        .split(',')
        .map(str::trim)
        .find_map(|scheme| {
            let (name, rest) = scheme.split_once(' ')?;
            name.eq_ignore_ascii_case("Payment").then(|| rest.trim())
        })
        .ok_or(MppError::CredentialMalformed)?;
    let bytes = URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|_| MppError::CredentialMalformed)?;
    let wire: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|_| MppError::CredentialMalformed)?;
    let text =
        |v: &serde_json::Value, name: &str| v.get(name).and_then(|x| x.as_str()).map(str::to_owned);
    let optional = |v: &serde_json::Value, name: &str| -> Result<Option<String>, MppError> {
        match v.get(name) {
            None => Ok(None),
            Some(x) => x
                .as_str()
                .map(|s| Some(s.to_owned()))
                .ok_or(MppError::CredentialMalformed),
        }
    };
    let echo = wire.get("challenge").ok_or(MppError::CredentialMalformed)?;
    let payload = wire.get("payload").ok_or(MppError::CredentialMalformed)?;
    let required =
        |v: &serde_json::Value, name: &str| text(v, name).ok_or(MppError::CredentialMalformed);
    Ok(Credential {
        challenge: EchoedChallenge {
            id: required(echo, "id")?,
            realm: required(echo, "realm")?,
            method: required(echo, "method")?,
            intent: required(echo, "intent")?,
            request: required(echo, "request")?,
            expires: optional(echo, "expires")?,
        },
        kind: required(payload, "type")?,
        hash: optional(payload, "hash")?,
        source: optional(&wire, "source")?,
    })
}

/// A credential whose challenge this worker issued for this request, unexpired or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub challenge_id: String,
    pub expires_ms: u64,
    /// The pushed transaction's hash, lowercase `0x` + 64 hex.
    pub tx_hash: String,
    /// The payer the `source` DID names, lowercase, when one was sent.
    pub source: Option<String>,
}

fn constant_time_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Checks that the credential answers a challenge this worker issued for exactly this route,
/// Idempotency-Key, body and price (the id's HMAC over the echo), and reads its push payload.
/// Expiry is the caller's to judge (`expires_ms`): a payment that landed before it is honoured.
pub fn check_credential(
    config: &MppConfig,
    binding: &Binding,
    credential: &Credential,
) -> Result<Bound, MppError> {
    let echo = &credential.challenge;
    let expires = echo.expires.as_deref().ok_or(MppError::ChallengeInvalid)?;
    let same_terms = echo.method == METHOD
        && echo.intent == INTENT
        && echo.realm == config.realm
        && echo.request == config.request_param(binding.price_units);
    let expected_id = challenge_id(config, binding, &echo.request, expires);
    if !same_terms || !constant_time_equal(expected_id.as_bytes(), echo.id.as_bytes()) {
        return Err(MppError::ChallengeInvalid);
    }
    let expires_ms = parse_expires(expires).ok_or(MppError::ChallengeInvalid)?;
    let tx_hash = match (credential.kind.as_str(), &credential.hash) {
        ("hash", Some(hash)) => hash
            .strip_prefix("0x")
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(|h| format!("0x{}", h.to_ascii_lowercase()))
            .ok_or(MppError::CredentialMalformed)?,
        ("transaction" | "proof", _) => return Err(MppError::ModeUnsupported),
        _ => return Err(MppError::CredentialMalformed),
    };
    let source = match &credential.source {
        None => None,
        Some(did) => Some(source_address(did, config.chain_id)?),
    };
    Ok(Bound {
        challenge_id: echo.id.clone(),
        expires_ms,
        tx_hash,
        source,
    })
}

/// The payer address of a `did:pkh:eip155:<chainId>:<address>` source on the configured chain.
fn source_address(did: &str, chain_id: u64) -> Result<String, MppError> {
    let rest = did
        .strip_prefix("did:pkh:eip155:")
        .ok_or(MppError::SourceInvalid)?;
    let (chain, address) = rest.split_once(':').ok_or(MppError::SourceInvalid)?;
    if chain != chain_id.to_string() {
        return Err(MppError::SourceInvalid);
    }
    normalized_address(address).ok_or(MppError::SourceInvalid)
}

/// Records `tx_hash` as the payment of a challenge (the `PaymentGuard` object `mpp:<challenge id>`
/// keeps the hash of its first verified payment for 24 hours): the first binds it; the same payment
/// again is accepted (its key's record then decides: resume, replayed, in progress); any other payment
/// is refused. Returns whether it is accepted and the hash to store (None: keep the record).
pub fn use_challenge(existing: Option<&str>, tx_hash: &str) -> (bool, Option<String>) {
    match existing {
        None => (true, Some(tx_hash.to_owned())),
        Some(bound) => (bound == tx_hash, None),
    }
}

/// The `Payment-Receipt` value: base64url of the receipt JSON (JCS member order).
pub fn receipt_header(tx_hash: &str, settled_ms: u64) -> String {
    let json = format!(
        "{{\"method\":\"{METHOD}\",\"reference\":\"{tx_hash}\",\"status\":\"success\",\"timestamp\":\"{}\"}}",
        crate::engine::time::iso8601_millis(settled_ms)
    );
    URL_SAFE_NO_PAD.encode(json)
}

/// An MPP refusal (closed: static message, numbers only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MppError {
    /// No credential: the 402 challenge itself.
    PaymentRequired,
    ConfigInvalid,
    CredentialOversized,
    CredentialMalformed,
    /// The echo is not a challenge this worker issued for this route, key, body and price.
    ChallengeInvalid,
    /// The payment landed after the challenge expired, or was not found once it had expired.
    ChallengeExpired,
    /// A pull (`transaction`) or `proof` credential: this worker offers push only.
    ModeUnsupported,
    /// The `source` DID is not `did:pkh:eip155:<our chain>:<address>`, or not the payer.
    SourceInvalid,
    /// The challenge was already paid by another transaction.
    ChallengeUsed,
    /// The JSON-RPC serves another chain than the configured one.
    ChainMismatch,
    RpcUnavailable,
    /// The chain does not know the transaction (yet): retry the same credential.
    TransactionNotFound,
    TransactionFailed,
    /// No TIP-20 TransferWithMemo of the exact amount, token and recipient from the payer.
    TransferMismatch,
    /// The transfer's memo is not bound to this realm and challenge.
    MemoUnbound,
}

impl ClosedError for MppError {
    fn code(&self) -> &'static str {
        use MppError::*;
        match self {
            PaymentRequired => "payment_required",
            ConfigInvalid => "payment_config_invalid",
            CredentialOversized => "mpp_credential_oversized",
            CredentialMalformed => "mpp_credential_malformed",
            ChallengeInvalid => "mpp_challenge_invalid",
            ChallengeExpired => "mpp_challenge_expired",
            ModeUnsupported => "mpp_mode_unsupported",
            SourceInvalid => "mpp_source_invalid",
            ChallengeUsed => "payment_proof_conflict",
            ChainMismatch => "mpp_chain_mismatch",
            RpcUnavailable => "mpp_rpc_unavailable",
            TransactionNotFound => "mpp_transaction_not_found",
            TransactionFailed => "mpp_transaction_failed",
            TransferMismatch => "mpp_transfer_mismatch",
            MemoUnbound => "mpp_memo_unbound",
        }
    }
    fn status(&self) -> u16 {
        use MppError::*;
        match self {
            ConfigInvalid | ChainMismatch | RpcUnavailable => 503,
            ChallengeUsed | TransactionNotFound => 409,
            _ => 402,
        }
    }
    fn message(&self) -> &'static str {
        use MppError::*;
        match self {
            PaymentRequired => "Payment required: fulfil the WWW-Authenticate Payment challenge (method tempo, intent charge, push) and send the same request with its credential.",
            ConfigInvalid => "The MPP payment configuration is incomplete or invalid.",
            CredentialOversized => "The Authorization header exceeds the size cap.",
            CredentialMalformed => "The Authorization header is not a Payment credential: base64url of {challenge, payload: {type: hash, hash}} JSON.",
            ChallengeInvalid => "The credential's challenge was not issued by this worker for this route, Idempotency-Key, body and price.",
            ChallengeExpired => "The challenge expired before its payment landed; nothing is delivered for it.",
            ModeUnsupported => "Only push mode is accepted: broadcast the transfer and send a credential of type hash.",
            SourceInvalid => "The credential's source must be did:pkh:eip155:<chainId>:<payer> on the challenge's chain.",
            ChallengeUsed => "This challenge was already paid by another transaction; nothing was delivered for this one.",
            ChainMismatch => "The configured Tempo JSON-RPC serves another chain than the challenge's chain id.",
            RpcUnavailable => "The Tempo JSON-RPC could not be asked; retry the same credential later.",
            TransactionNotFound => "The chain does not know this transaction yet; retry the same credential after Retry-After and do not pay again.",
            TransactionFailed => "The transaction did not execute successfully.",
            TransferMismatch => "The transaction holds no TIP-20 TransferWithMemo of the challenge's amount, currency and recipient from the payer.",
            MemoUnbound => "The transfer's memo is not bound to this realm and challenge.",
        }
    }
    fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            MppError::CredentialOversized => {
                vec![("max_bytes", MAX_AUTHORIZATION_BYTES as u64)]
            }
            MppError::TransactionNotFound => {
                vec![("retry_after_s", NOT_FOUND_RETRY_AFTER_MS / 1000)]
            }
            _ => Vec::new(),
        }
    }
}

impl MppError {
    /// The draft's problem type for a 402; RFC 9457's `about:blank` for the other statuses.
    pub fn problem_type(&self) -> &'static str {
        use MppError::*;
        match self {
            PaymentRequired => PROBLEM_PAYMENT_REQUIRED,
            CredentialOversized | CredentialMalformed => PROBLEM_MALFORMED,
            ChallengeInvalid => PROBLEM_INVALID_CHALLENGE,
            ChallengeExpired => PROBLEM_EXPIRED,
            _ if self.status() == 402 => PROBLEM_VERIFICATION_FAILED,
            _ => "about:blank",
        }
    }

    /// Whether the refusal comes with a fresh challenge (every 402 does, as the draft asks).
    pub fn rechallenges(&self) -> bool {
        self.status() == 402
    }
}

/// The title RFC 9457 gives a problem: the draft's title for its types, else the status phrase.
fn problem_title(problem_type: &str, status: u16) -> &'static str {
    match problem_type {
        PROBLEM_PAYMENT_REQUIRED => "Payment Required",
        PROBLEM_MALFORMED => "Malformed Credential",
        PROBLEM_INVALID_CHALLENGE => "Invalid Challenge",
        PROBLEM_VERIFICATION_FAILED => "Verification Failed",
        PROBLEM_EXPIRED => "Payment Expired",
        _ => match status {
            400 => "Bad Request",
            409 => "Conflict",
            429 => "Too Many Requests",
            503 => "Service Unavailable",
            _ => "Payment Required",
        },
    }
}

/// An `application/problem+json` body (RFC 9457) for a closed refusal: `type`, `title`, `status`,
/// `detail` (the static message), and the closed `code` and figures as extension members.
pub fn problem_body(error: &dyn ClosedError, problem_type: &str) -> serde_json::Value {
    let mut body = serde_json::Map::new();
    body.insert("type".into(), problem_type.into());
    body.insert(
        "title".into(),
        problem_title(problem_type, error.status()).into(),
    );
    body.insert("status".into(), error.status().into());
    body.insert("detail".into(), error.message().into());
    body.insert("code".into(), error.code().into());
    for (name, n) in error.figures() {
        body.insert(name.into(), n.into());
    }
    serde_json::Value::Object(body)
}
