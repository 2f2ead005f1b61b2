//! How a paid call is bound to its payment (ARCHITECTURE §4), decided in one place.
//!
//! A call is bound either by the caller's `Idempotency-Key` (the pack requires one; the criteria
//! families accept one) or, when a criteria call sends no key, by a server-issued nonce carried
//! in the challenge itself: `extra.memo` is then a compact token
//! `cmn1.<nonce: 32 hex>.<expiry: unix seconds>.<mac: 32 hex>`, the mac being the first 16 bytes
//! of HMAC-SHA256 (server secret) over a fixed label, route, price, nonce and expiry. A payment
//! signed for that challenge carries the token in its Memo instruction, so checking it needs no
//! stored state: a valid mac proves we issued it for this route and price. The guard claim is then
//! taken in a record named by the nonce (`nonce:<hex>`, a namespace no Idempotency-Key can reach),
//! so one nonce is charged at most once and the retry rules of the key record apply unchanged.
//!
//! The token stays far under the x402 SVM client's memo cap (`MAX_MEMO_BYTES` = 256 in
//! `@x402/svm` 2.27.0): 4 + 1 + 32 + 1 + 10 + 1 + 32 = 81 bytes of ASCII.
//!
//! (Room is left for a third binding, a payment-derived identity — e.g. an EVM authorization's
//! chain, asset, payer and nonce — which names its own record the same way.)

use super::hmac::hmac_sha256;
use super::{is_valid_idempotency_key, memo_for, PaymentError};
use crate::engine::sign::hex;

/// Prefix of a nonce memo (version 1 of the token).
pub const NONCE_MEMO_PREFIX: &str = "cmn1.";
/// Domain label of the nonce token's mac (keeps it apart from every other use of the secret).
const NONCE_MAC_LABEL: &[u8] = b"context-meter payment nonce v1";
/// Bytes of randomness in a nonce.
pub const NONCE_BYTES: usize = 16;
/// Bytes of the mac kept in the token.
const MAC_BYTES: usize = 16;
/// Longest accepted nonce lifetime (the key record's own life, 24 hours).
pub const MAX_NONCE_TTL_S: u64 = 24 * 60 * 60;

/// How this call is bound to its payment, as the router decided it from the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallBinding {
    /// The caller's Idempotency-Key. `identifier_required`: the payment-identifier extension must
    /// be sent and equal the key (the pack's contract); otherwise it is checked only when sent.
    IdempotencyKey {
        key: String,
        identifier_required: bool,
    },
    /// No key: the challenge carries a server-issued nonce token as its memo.
    ServerNonce,
}

impl CallBinding {
    /// The binding of a criteria-family call: by its key when it sent one, else by a nonce.
    pub fn criteria(key: Option<String>) -> Self {
        match key {
            Some(key) => CallBinding::IdempotencyKey {
                key,
                identifier_required: false,
            },
            None => CallBinding::ServerNonce,
        }
    }

    /// The pack's binding: its key, with the payment-identifier required and equal to it.
    pub fn pack(key: String) -> Self {
        CallBinding::IdempotencyKey {
            key,
            identifier_required: true,
        }
    }

    /// Whether the challenge declares the payment-identifier extension `required`.
    pub fn identifier_required(&self) -> bool {
        matches!(
            self,
            CallBinding::IdempotencyKey {
                identifier_required: true,
                ..
            }
        )
    }
}

/// How the payment-identifier extension of a payment is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentifierRule {
    /// Must be sent and equal this key.
    Required(String),
    /// When sent, must equal this key.
    EqualWhenSent(String),
    /// When sent, must be well formed (16–128 of `[A-Za-z0-9_-]`); it binds nothing.
    WellFormedWhenSent,
}

impl IdentifierRule {
    /// Checks the id the payment carried (None: the client did not fill the extension).
    pub fn check(&self, sent: Option<&str>) -> Result<(), PaymentError> {
        match (self, sent) {
            (IdentifierRule::Required(key), Some(id))
            | (IdentifierRule::EqualWhenSent(key), Some(id))
                if id == key =>
            {
                Ok(())
            }
            (IdentifierRule::Required(_), _) | (IdentifierRule::EqualWhenSent(_), Some(_)) => {
                Err(PaymentError::IdentifierMismatch)
            }
            (IdentifierRule::WellFormedWhenSent, Some(id)) if !is_valid_idempotency_key(id) => {
                Err(PaymentError::IdentifierInvalid)
            }
            _ => Ok(()),
        }
    }
}

/// One challenge's or one payment's binding, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// The memo the payment's transaction must carry (`extra.memo`).
    pub memo: String,
    /// The payment guard record (Durable Object name) the claim is taken in.
    pub record: String,
    /// The payment-identifier id forwarded to the facilitator.
    pub identifier_id: String,
    /// How the payment-identifier extension is checked.
    pub identifier: IdentifierRule,
    /// Whether the challenge declares the extension `required`.
    pub identifier_required: bool,
    /// Expiry of a nonce token (unix seconds); None for a key binding.
    pub expires_s: Option<u64>,
}

impl Bound {
    /// Whether a nonce binding is past its expiry at `now_s` (a key binding never is).
    pub fn expired(&self, now_s: u64) -> bool {
        self.expires_s.is_some_and(|at| now_s >= at)
    }
}

/// The guard record name of an Idempotency-Key.
pub fn key_record(key: &str) -> String {
    format!("key:{key}")
}

/// The guard record name of a server nonce (`.`/`:` never occur in a key, so no key reaches it).
pub fn nonce_record(nonce_hex: &str) -> String {
    format!("nonce:{nonce_hex}")
}

/// The binding of an Idempotency-Key on a route (`identifier_required`: the pack's rule).
pub fn by_key(route_id: &str, key: &str, identifier_required: bool) -> Bound {
    Bound {
        memo: memo_for(route_id, key),
        record: key_record(key),
        identifier_id: key.to_owned(),
        identifier: if identifier_required {
            IdentifierRule::Required(key.to_owned())
        } else {
            IdentifierRule::EqualWhenSent(key.to_owned())
        },
        identifier_required,
        expires_s: None,
    }
}

fn bound_by_nonce(memo: String, nonce_hex: &str, expires_s: u64) -> Bound {
    Bound {
        memo,
        record: nonce_record(nonce_hex),
        identifier_id: format!("nonce-{nonce_hex}"),
        identifier: IdentifierRule::WellFormedWhenSent,
        identifier_required: false,
        expires_s: Some(expires_s),
    }
}

fn nonce_mac(
    secret: &[u8],
    route_id: &str,
    price_units: u64,
    nonce_hex: &str,
    expires_s: u64,
) -> String {
    let price = price_units.to_string();
    let expiry = expires_s.to_string();
    let mac = hmac_sha256(
        secret,
        &[
            NONCE_MAC_LABEL,
            b"\n",
            route_id.as_bytes(),
            b"\n",
            price.as_bytes(),
            b"\n",
            nonce_hex.as_bytes(),
            b"\n",
            expiry.as_bytes(),
        ],
    );
    hex(&mac[..MAC_BYTES])
}

/// The nonce token for (route, price) with `nonce`, valid until `expires_s`.
pub fn nonce_memo(
    secret: &[u8],
    route_id: &str,
    price_units: u64,
    nonce: &[u8; NONCE_BYTES],
    expires_s: u64,
) -> String {
    let nonce_hex = hex(nonce);
    let mac = nonce_mac(secret, route_id, price_units, &nonce_hex, expires_s);
    format!("{NONCE_MEMO_PREFIX}{nonce_hex}.{expires_s}.{mac}")
}

fn is_lower_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Opens a nonce token: Ok((nonce hex, expiry)) when it is well formed and its mac is ours for
/// (route, price); `PaymentError::NonceInvalid` otherwise. The expiry is not judged here (a
/// payment already in the guard may be retried after it; see [`Bound::expired`]).
pub fn open_nonce_memo(
    secret: &[u8],
    route_id: &str,
    price_units: u64,
    memo: &str,
) -> Result<(String, u64), PaymentError> {
    let rest = memo
        .strip_prefix(NONCE_MEMO_PREFIX)
        .ok_or(PaymentError::NonceInvalid)?;
    let mut parts = rest.split('.');
    let (Some(nonce_hex), Some(expiry), Some(mac), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(PaymentError::NonceInvalid);
    };
    let expiry_digits_ok = (1..=12).contains(&expiry.len())
        && expiry.bytes().all(|b| b.is_ascii_digit())
        && !(expiry.len() > 1 && expiry.starts_with('0'));
    if !is_lower_hex(nonce_hex, NONCE_BYTES * 2)
        || !is_lower_hex(mac, MAC_BYTES * 2)
        || !expiry_digits_ok
    {
        return Err(PaymentError::NonceInvalid);
    }
    let expires_s: u64 = expiry.parse().map_err(|_| PaymentError::NonceInvalid)?;
    let ours = nonce_mac(secret, route_id, price_units, nonce_hex, expires_s);
    // Constant-time comparison of equal-length ASCII.
    let diff = ours
        .bytes()
        .zip(mac.bytes())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    if diff != 0 {
        return Err(PaymentError::NonceInvalid);
    }
    Ok((nonce_hex.to_owned(), expires_s))
}

/// The binding of a challenge: a key binding's memo, or a fresh nonce token (`nonce` drawn by the
/// caller from a CSPRNG) valid for `ttl_s` (capped at [`MAX_NONCE_TTL_S`]) from `now_s`.
pub fn for_challenge(
    binding: &CallBinding,
    secret: &[u8],
    route_id: &str,
    price_units: u64,
    nonce: &[u8; NONCE_BYTES],
    now_s: u64,
    ttl_s: u64,
) -> Bound {
    match binding {
        CallBinding::IdempotencyKey {
            key,
            identifier_required,
        } => by_key(route_id, key, *identifier_required),
        CallBinding::ServerNonce => {
            let expires_s = now_s.saturating_add(ttl_s.clamp(1, MAX_NONCE_TTL_S));
            let memo = nonce_memo(secret, route_id, price_units, nonce, expires_s);
            bound_by_nonce(memo, &hex(nonce), expires_s)
        }
    }
}

/// The binding of a payment: for a key, the key's memo; for a nonce, the token the payment's
/// `accepted.extra.memo` carries, refused free (`NonceInvalid`) unless its mac is ours for this
/// route and price.
pub fn for_payment(
    binding: &CallBinding,
    secret: &[u8],
    route_id: &str,
    price_units: u64,
    accepted_memo: Option<&str>,
) -> Result<Bound, PaymentError> {
    match binding {
        CallBinding::IdempotencyKey {
            key,
            identifier_required,
        } => {
            if !is_valid_idempotency_key(key) {
                return Err(PaymentError::IdempotencyKeyInvalid);
            }
            Ok(by_key(route_id, key, *identifier_required))
        }
        CallBinding::ServerNonce => {
            let memo = accepted_memo.ok_or(PaymentError::NonceInvalid)?;
            let (nonce_hex, expires_s) = open_nonce_memo(secret, route_id, price_units, memo)?;
            Ok(bound_by_nonce(memo.to_owned(), &nonce_hex, expires_s))
        }
    }
}

/// The challenge's `payment-identifier` extension declaration (`required` per the binding).
pub fn identifier_declaration(required: bool) -> serde_json::Value {
    serde_json::json!({
        "info": { "required": required },
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "required": { "type": "boolean" },
                "id": { "type": "string", "minLength": 16, "maxLength": 128, "pattern": "^[a-zA-Z0-9_-]+$" },
            },
            "required": ["required"],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"test secret";
    const ROUTE: &str = "/token-opt/toon";

    fn nonce_bound(now_s: u64, ttl_s: u64) -> Bound {
        for_challenge(
            &CallBinding::ServerNonce,
            SECRET,
            ROUTE,
            5000,
            &[7u8; NONCE_BYTES],
            now_s,
            ttl_s,
        )
    }

    #[test]
    fn a_nonce_token_round_trips_and_fits_the_memo_cap() {
        let bound = nonce_bound(1_700_000_000, 300);
        assert_eq!(bound.memo.len(), 81);
        assert!(bound.memo.len() <= 256);
        assert!(bound.memo.starts_with("cmn1.07070707"));
        assert_eq!(bound.expires_s, Some(1_700_000_300));
        let opened = for_payment(
            &CallBinding::ServerNonce,
            SECRET,
            ROUTE,
            5000,
            Some(&bound.memo),
        )
        .unwrap();
        assert_eq!(opened, bound);
        assert_eq!(opened.record, format!("nonce:{}", "07".repeat(16)));
        assert!(!is_valid_idempotency_key(&opened.record));
        assert!(is_valid_idempotency_key(&opened.identifier_id));
    }

    #[test]
    fn a_nonce_token_is_bound_to_secret_route_price_and_expiry() {
        let memo = nonce_bound(1_000, 60).memo;
        let open = |secret: &[u8], route: &str, price: u64, memo: &str| {
            for_payment(&CallBinding::ServerNonce, secret, route, price, Some(memo))
        };
        assert!(open(SECRET, ROUTE, 5000, &memo).is_ok());
        assert_eq!(
            open(b"other", ROUTE, 5000, &memo),
            Err(PaymentError::NonceInvalid)
        );
        assert_eq!(
            open(SECRET, "/token-opt/levers", 5000, &memo),
            Err(PaymentError::NonceInvalid)
        );
        assert_eq!(
            open(SECRET, ROUTE, 5001, &memo),
            Err(PaymentError::NonceInvalid)
        );
        let later = memo.replace(".1060.", ".9999.");
        assert_eq!(
            open(SECRET, ROUTE, 5000, &later),
            Err(PaymentError::NonceInvalid)
        );
        let mut flipped = memo.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
        let flipped = String::from_utf8(flipped).unwrap();
        assert_eq!(
            open(SECRET, ROUTE, 5000, &flipped),
            Err(PaymentError::NonceInvalid)
        );
        for malformed in [
            "",
            "cm:0123",
            "cmn1.",
            &memo.to_uppercase(),
            &format!("{memo}.x"),
            &memo.replace(".1060.", ".01060."),
        ] {
            assert_eq!(
                open(SECRET, ROUTE, 5000, malformed),
                Err(PaymentError::NonceInvalid),
                "{malformed}"
            );
        }
        assert_eq!(
            for_payment(&CallBinding::ServerNonce, SECRET, ROUTE, 5000, None),
            Err(PaymentError::NonceInvalid)
        );
    }

    #[test]
    fn expiry_is_judged_by_the_caller_and_capped() {
        let bound = nonce_bound(1_000, 60);
        assert!(!bound.expired(1_059));
        assert!(bound.expired(1_060));
        assert_eq!(nonce_bound(0, u64::MAX).expires_s, Some(MAX_NONCE_TTL_S));
        let keyed = for_payment(
            &CallBinding::criteria(Some("k".repeat(16))),
            SECRET,
            ROUTE,
            1,
            None,
        )
        .unwrap();
        assert!(!keyed.expired(u64::MAX));
    }

    #[test]
    fn a_key_binding_keeps_the_key_memo_and_the_identifier_rule_of_its_route() {
        let key = "a".repeat(20);
        let criteria = for_payment(
            &CallBinding::criteria(Some(key.clone())),
            SECRET,
            ROUTE,
            1,
            None,
        )
        .unwrap();
        assert_eq!(criteria.memo, memo_for(ROUTE, &key));
        assert_eq!(criteria.record, format!("key:{key}"));
        assert!(!criteria.identifier_required);
        assert_eq!(criteria.identifier.check(None), Ok(()));
        assert_eq!(criteria.identifier.check(Some(&key)), Ok(()));
        assert_eq!(
            criteria.identifier.check(Some(&"b".repeat(20))),
            Err(PaymentError::IdentifierMismatch)
        );
        let pack = for_payment(&CallBinding::pack(key.clone()), SECRET, ROUTE, 1, None).unwrap();
        assert!(pack.identifier_required);
        assert_eq!(
            pack.identifier.check(None),
            Err(PaymentError::IdentifierMismatch)
        );
        assert_eq!(pack.identifier.check(Some(&key)), Ok(()));
        assert_eq!(
            for_payment(&CallBinding::pack("short".into()), SECRET, ROUTE, 1, None),
            Err(PaymentError::IdempotencyKeyInvalid)
        );
        let nonce = IdentifierRule::WellFormedWhenSent;
        assert_eq!(nonce.check(None), Ok(()));
        assert_eq!(nonce.check(Some(&key)), Ok(()));
        assert_eq!(
            nonce.check(Some("bad id")),
            Err(PaymentError::IdentifierInvalid)
        );
    }
}
