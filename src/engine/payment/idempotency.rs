//! The per-key idempotency record and its retry rules (pure; the `PaymentGuard` Durable Object in
//! `edge::guard` stores one record per Idempotency-Key and applies these transitions atomically).
//!
//! A record lives 24 hours ([`RECORD_TTL_MS`]) and holds payment facts only: the route the key was
//! first used on, the claim (SHA-256 of the payment's transaction message), the state, times, the
//! settlement facts, and the times of recent payment attempts (for the per-key rate). Never the
//! result. For context-budget-pack alone it also holds a keyed HMAC of (release version, route,
//! body) ([`fingerprint`]), because that contract asks for INVALID_RETRY_INPUT; the criteria families
//! keep nothing derived from a submission.
//!
//! States: `claimed` (verify and engine running, nothing submitted) → `settling` (written *before*
//! `/settle` is called) → `settled` → `delivered`; `settling` → `uncertain` when `/settle` was
//! pending, failed on the connection or timed out; `released` when nothing moved (or the payment
//! definitely failed). A holder that vanished while `claimed` left nothing behind: the claim may be
//! taken afresh after its lease. A holder that vanished while `settling` may have moved money: the
//! next retry with the same proof reconciles, exactly as after `uncertain`.

use super::guard::SettledFacts;
use super::hmac::hmac_sha256;
use super::outbox::{PendingRow, RETRY_MAX_MS};
use serde::{Deserialize, Serialize};

/// How long a key's record is kept (the contract's 24-hour replay window).
pub const RECORD_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// The window over which payment attempts are counted (per key and per wallet).
pub const ATTEMPT_WINDOW_MS: u64 = 60_000;
/// How long a client is told to wait after PAYMENT_UNCERTAIN before retrying.
pub const UNCERTAIN_RETRY_AFTER_MS: u64 = 5_000;
/// How many times one delivered payment's result is delivered again to an identical retry (a
/// lost answer); past it the retry gets 409 `payment_replayed` with the original receipt. Bounds
/// what a changed body with the paid call's figures can obtain under one payment (ARCHITECTURE §4).
pub const REDELIVERY_LIMIT: u32 = 16;

/// Where one key's payment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyState {
    Claimed,
    Settling,
    Uncertain,
    Settled,
    Delivered,
    Released,
}

impl KeyState {
    /// The state's name as served and documented.
    pub fn name(self) -> &'static str {
        match self {
            KeyState::Claimed => "claimed",
            KeyState::Settling => "settling",
            KeyState::Uncertain => "uncertain",
            KeyState::Settled => "settled",
            KeyState::Delivered => "delivered",
            KeyState::Released => "released",
        }
    }
}

/// The stored record of one Idempotency-Key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    pub route_id: String,
    pub created_ms: u64,
    /// context-budget-pack only: hex HMAC-SHA256 (server secret) of release version, route, body.
    pub fingerprint: Option<String>,
    /// The current claim: hex SHA-256 of the payment's transaction message (None once released).
    pub claim_key: Option<String>,
    pub state: KeyState,
    pub lease_until_ms: u64,
    /// A retry of the same attempt before this time is INVALID_RETRY_AFTER (the Retry-After given).
    pub retry_at_ms: u64,
    pub settled: Option<SettledFacts>,
    /// Times of the payment attempts inside the last [`ATTEMPT_WINDOW_MS`].
    pub attempts: Vec<u64>,
    /// The ledger row this payment owes (its closed fields, from `settling` on): the outbox the
    /// object's alarm empties into D1 whenever the worker could not (`outbox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<PendingRow>,
    /// True once D1 confirmed the row.
    #[serde(default)]
    pub row_written: bool,
    /// Outbox writes that failed in a row (the alarm backs off by it).
    #[serde(default)]
    pub row_failures: u32,
    /// Times the delivered result was delivered again to an identical retry.
    #[serde(default)]
    pub redeliveries: u32,
}

/// One request under a key that carries a payment.
#[derive(Debug, Clone, Copy)]
pub struct Attempt<'a> {
    pub route_id: &'a str,
    pub fingerprint: Option<&'a str>,
    pub claim_key: &'a str,
    pub now_ms: u64,
    pub lease_ms: u64,
    pub max_attempts: u32,
}

/// What a request under a key gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Claimed: verify, run, settle.
    Fresh,
    /// Settled by an earlier attempt, never delivered: run and deliver, no second charge.
    Resume(SettledFacts),
    /// The outcome of an earlier settle is unknown: ask the chain before anything else.
    Reconcile,
    /// The key was first used on another route: 409 IDEMPOTENCY_CONFLICT, free.
    RouteConflict,
    /// (pack) The key was first used with another body or release: 409 INVALID_RETRY_INPUT, free.
    InputConflict,
    /// Another proof holds this key (claimed, settling, uncertain, settled or delivered): 409.
    ProofConflict,
    /// The same proof is being processed by another request: 409 with Retry-After.
    InProgress { retry_after_ms: u64 },
    /// Delivered already, and the same proof again (a lost answer): run the operation again and
    /// deliver it with the original receipt, no second charge and no second row. The row holds
    /// the paid call's closed figures, which a criteria family's re-run must equal.
    Redeliver {
        facts: SettledFacts,
        row: Option<PendingRow>,
        /// The payment's claim when it settled but was never delivered (a request with no payment
        /// resumed it): the delivered row is written and the record marked delivered under it.
        first_delivery: Option<String>,
    },
    /// Delivered already and re-delivered [`REDELIVERY_LIMIT`] times: 409 with the original
    /// PAYMENT-RESPONSE.
    Delivered(SettledFacts),
    /// Retried before the Retry-After this key was given: 429 INVALID_RETRY_AFTER.
    TooEarly { retry_after_ms: u64 },
    /// Too many payment attempts under this key in the window: 429 with Retry-After.
    RateLimited { retry_after_ms: u64 },
}

/// Counts one attempt at `now_ms` into `attempts` (dropping those outside the window), or says how
/// long to wait when `max_attempts` are already inside it. Shared by the key and wallet counts.
pub fn count_attempt(attempts: &mut Vec<u64>, now_ms: u64, max_attempts: u32) -> Result<(), u64> {
    attempts.retain(|&at| at.saturating_add(ATTEMPT_WINDOW_MS) > now_ms && at <= now_ms);
    if attempts.len() >= max_attempts as usize {
        let oldest = attempts.iter().copied().min().unwrap_or(now_ms);
        return Err(oldest
            .saturating_add(ATTEMPT_WINDOW_MS)
            .saturating_sub(now_ms)
            .max(1));
    }
    attempts.push(now_ms);
    Ok(())
}

fn live(existing: Option<&KeyRecord>, now_ms: u64) -> Option<&KeyRecord> {
    existing.filter(|r| r.created_ms.saturating_add(RECORD_TTL_MS) > now_ms)
}

/// Decides a request under a key and returns the record to store (None = store nothing).
pub fn begin(existing: Option<&KeyRecord>, attempt: &Attempt) -> (Decision, Option<KeyRecord>) {
    let now = attempt.now_ms;
    let claim = |record: &mut KeyRecord| {
        record.claim_key = Some(attempt.claim_key.to_owned());
        record.state = KeyState::Claimed;
        record.lease_until_ms = now.saturating_add(attempt.lease_ms);
        record.retry_at_ms = 0;
        record.settled = None;
    };
    let Some(existing) = live(existing, now) else {
        let mut record = KeyRecord {
            route_id: attempt.route_id.to_owned(),
            created_ms: now,
            fingerprint: attempt.fingerprint.map(str::to_owned),
            claim_key: None,
            state: KeyState::Claimed,
            lease_until_ms: 0,
            retry_at_ms: 0,
            settled: None,
            attempts: vec![now],
            row: None,
            row_written: false,
            row_failures: 0,
            redeliveries: 0,
        };
        claim(&mut record);
        return (Decision::Fresh, Some(record));
    };
    if existing.route_id != attempt.route_id {
        return (Decision::RouteConflict, None);
    }
    if existing.fingerprint.as_deref() != attempt.fingerprint {
        return (Decision::InputConflict, None);
    }
    let mut record = existing.clone();
    // A delivered payment's identical retries are bounded by REDELIVERY_LIMIT, not counted as
    // attempts: a lost answer retried as told is not a failure. Any other proof counts.
    let redelivery = record.state == KeyState::Delivered
        && record.claim_key.as_deref() == Some(attempt.claim_key);
    let limited = if redelivery {
        Ok(())
    } else {
        count_attempt(&mut record.attempts, now, attempt.max_attempts)
    };
    if let Err(wait) = limited {
        return (
            Decision::RateLimited {
                retry_after_ms: wait,
            },
            None,
        );
    }
    let same_proof = record.claim_key.as_deref() == Some(attempt.claim_key);
    let leased = now < record.lease_until_ms;
    let decision = match record.state {
        KeyState::Delivered => match (record.settled.clone(), same_proof) {
            (Some(facts), true) => redeliver(&mut record, facts),
            _ => Decision::ProofConflict,
        },
        KeyState::Released => {
            claim(&mut record);
            Decision::Fresh
        }
        _ if !same_proof => Decision::ProofConflict,
        _ if now < record.retry_at_ms => Decision::TooEarly {
            retry_after_ms: record.retry_at_ms - now,
        },
        KeyState::Claimed | KeyState::Settling | KeyState::Settled if leased => {
            record.retry_at_ms = record.lease_until_ms;
            Decision::InProgress {
                retry_after_ms: record.lease_until_ms - now,
            }
        }
        // The holder vanished before `/settle` was called: nothing moved.
        KeyState::Claimed => {
            claim(&mut record);
            Decision::Fresh
        }
        // The holder vanished during `/settle`, or the settle was uncertain: reconcile first.
        KeyState::Settling | KeyState::Uncertain => {
            record.state = KeyState::Settling;
            record.lease_until_ms = now.saturating_add(attempt.lease_ms);
            record.retry_at_ms = 0;
            Decision::Reconcile
        }
        KeyState::Settled => match &record.settled {
            Some(facts) => {
                record.lease_until_ms = now.saturating_add(attempt.lease_ms);
                Decision::Resume(facts.clone())
            }
            None => Decision::ProofConflict,
        },
    };
    (decision, Some(record))
}

/// The delivered answer again, while the record's re-delivery allowance lasts.
fn redeliver(record: &mut KeyRecord, facts: SettledFacts) -> Decision {
    if record.redeliveries >= REDELIVERY_LIMIT {
        return Decision::Delivered(facts);
    }
    record.redeliveries += 1;
    Decision::Redeliver {
        facts,
        row: record.row.clone(),
        first_delivery: None,
    }
}

/// What a request under a key that carries NO payment gets (the pack, whose key is required, on
/// either rail): `Fresh` when the key holds no payment (answer the challenge); a delivered payment
/// is delivered again and a settled one resumed (the key is paid for: the pack's fingerprint
/// proves the body is the paid one); a payment in flight is 409 and never a new challenge (in
/// MPP's push mode a challenge is a request to pay).
pub fn peek(
    existing: Option<&KeyRecord>,
    route_id: &str,
    fingerprint: Option<&str>,
    now_ms: u64,
    lease_ms: u64,
) -> (Decision, Option<KeyRecord>) {
    let Some(existing) = live(existing, now_ms) else {
        return (Decision::Fresh, None);
    };
    if existing.route_id != route_id {
        return (Decision::RouteConflict, None);
    }
    if existing.fingerprint.as_deref() != fingerprint {
        return (Decision::InputConflict, None);
    }
    let mut record = existing.clone();
    let wait = record.lease_until_ms.saturating_sub(now_ms).max(1_000);
    let decision = match (record.state, record.settled.clone()) {
        (KeyState::Released, _) => return (Decision::Fresh, None),
        (KeyState::Delivered, Some(facts)) => redeliver(&mut record, facts),
        (KeyState::Settled, Some(facts)) if now_ms >= record.lease_until_ms => {
            record.lease_until_ms = now_ms.saturating_add(lease_ms);
            Decision::Redeliver {
                facts,
                row: record.row.clone(),
                first_delivery: record.claim_key.clone(),
            }
        }
        (KeyState::Uncertain, _) => Decision::TooEarly {
            retry_after_ms: record
                .retry_at_ms
                .saturating_sub(now_ms)
                .max(UNCERTAIN_RETRY_AFTER_MS),
        },
        _ => Decision::InProgress {
            retry_after_ms: wait,
        },
    };
    let changed = (record != *existing).then_some(record);
    (decision, changed)
}

/// The expiry of the challenge a key's unpaid requests are answered with: the one already issued
/// while more than half its life is left, else a new one `ttl_ms` from now. Two concurrent unpaid
/// requests under one key thus get the same challenge (MPP: the same id), never two to pay.
pub fn challenge_expiry(issued_ms: Option<u64>, now_ms: u64, ttl_ms: u64) -> u64 {
    match issued_ms {
        Some(expires) if expires.saturating_sub(now_ms) > ttl_ms / 2 => expires,
        _ => now_ms.saturating_add(ttl_ms),
    }
}

/// What the record's alarm does when it fires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlarmStep {
    /// Write the owed row (delivered or, the worker gone, settled-undelivered), then plan again.
    WriteRow { delivered: bool },
    /// Nothing to do before `at_ms`: set the alarm there.
    Wait { at_ms: u64 },
    /// The record's time is up and it owes nothing: delete everything the object holds.
    Delete,
}

/// The record's next alarm step at `now_ms`. A row is owed once the payment settled: at once when
/// delivered (the worker's own write failed), after the lease when settled and undelivered (the
/// worker is gone). A record is never deleted while it owes a row.
pub fn alarm_step(record: &KeyRecord, now_ms: u64) -> AlarmStep {
    let expires = record.created_ms.saturating_add(RECORD_TTL_MS);
    let owes = record.row.is_some() && !record.row_written && record.settled.is_some();
    match record.state {
        KeyState::Delivered if owes => AlarmStep::WriteRow { delivered: true },
        KeyState::Settled if owes && now_ms >= record.lease_until_ms => {
            AlarmStep::WriteRow { delivered: false }
        }
        KeyState::Settled if owes => AlarmStep::Wait {
            at_ms: record.lease_until_ms,
        },
        _ if now_ms >= expires && !owes => AlarmStep::Delete,
        _ => AlarmStep::Wait {
            at_ms: if owes {
                now_ms.saturating_add(RETRY_MAX_MS)
            } else {
                expires
            },
        },
    }
}

/// Why a transition was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransitionError {
    /// No record, or the record holds another claim.
    NotHolder,
    /// The record is not in a state this transition starts from.
    WrongState,
}

fn held<'a>(
    existing: Option<&'a KeyRecord>,
    claim_key: &str,
) -> Result<&'a KeyRecord, TransitionError> {
    existing
        .filter(|r| r.claim_key.as_deref() == Some(claim_key))
        .ok_or(TransitionError::NotHolder)
}

/// The holder's record moved by `change`, when it is in one of the states `from`.
fn transition(
    existing: Option<&KeyRecord>,
    claim_key: &str,
    from: &[KeyState],
    change: impl FnOnce(&mut KeyRecord),
) -> Result<KeyRecord, TransitionError> {
    let record = held(existing, claim_key)?;
    if !from.contains(&record.state) {
        return Err(TransitionError::WrongState);
    }
    let mut next = record.clone();
    change(&mut next);
    Ok(next)
}

/// claimed → settling, written before `/settle` is called (renews the lease). The ledger row the
/// payment will owe once it settles enters the record here (the engine has run).
pub fn settling(
    existing: Option<&KeyRecord>,
    claim_key: &str,
    now_ms: u64,
    lease_ms: u64,
    row: Option<PendingRow>,
) -> Result<KeyRecord, TransitionError> {
    transition(
        existing,
        claim_key,
        &[KeyState::Claimed, KeyState::Settling],
        |next| {
            next.state = KeyState::Settling;
            next.lease_until_ms = now_ms.saturating_add(lease_ms);
            if row.is_some() {
                next.row = row;
                next.row_written = false;
            }
        },
    )
}

/// settling | uncertain → settled (idempotent for the same signature).
pub fn settled(
    existing: Option<&KeyRecord>,
    claim_key: &str,
    facts: SettledFacts,
) -> Result<KeyRecord, TransitionError> {
    let record = held(existing, claim_key)?;
    let same_signature = record.settled.as_ref().map(|f| &f.tx_sig) == Some(&facts.tx_sig);
    if same_signature && matches!(record.state, KeyState::Settled | KeyState::Delivered) {
        return Ok(record.clone());
    }
    transition(
        existing,
        claim_key,
        &[KeyState::Settling, KeyState::Uncertain],
        |next| {
            next.state = KeyState::Settled;
            next.settled = Some(facts);
        },
    )
}

/// settling → uncertain: the lease ends at once (a retry reconciles) and the retry is told to
/// wait `retry_after_ms`.
pub fn uncertain(
    existing: Option<&KeyRecord>,
    claim_key: &str,
    now_ms: u64,
    retry_after_ms: u64,
) -> Result<KeyRecord, TransitionError> {
    transition(
        existing,
        claim_key,
        &[KeyState::Settling, KeyState::Uncertain],
        |next| {
            next.state = KeyState::Uncertain;
            next.lease_until_ms = 0;
            next.retry_at_ms = now_ms.saturating_add(retry_after_ms);
        },
    )
}

/// settled → delivered; `row_written` says whether the worker's own ledger write succeeded (if
/// not, the record's alarm writes it).
pub fn delivered(
    existing: Option<&KeyRecord>,
    claim_key: &str,
    row_written: bool,
) -> Result<KeyRecord, TransitionError> {
    transition(
        existing,
        claim_key,
        &[KeyState::Settled, KeyState::Delivered],
        |next| {
            // Settled → delivered: the row now owed is the delivered one (an undelivered row the
            // alarm wrote meanwhile is replaced by the worker's write, or else by the alarm's).
            next.row_written =
                row_written || (next.state == KeyState::Delivered && next.row_written);
            next.state = KeyState::Delivered;
            next.lease_until_ms = 0;
        },
    )
}

/// The outbox's write came back: confirmed (the row is in D1) or failed (counted for back-off).
pub fn row_outcome(record: &KeyRecord, written: bool) -> KeyRecord {
    let mut next = record.clone();
    if written {
        next.row_written = true;
        next.row_failures = 0;
    } else {
        next.row_failures = next.row_failures.saturating_add(1);
    }
    next
}

/// Nothing was delivered. Claimed, or settling/uncertain that definitely failed → released (the
/// key takes a new proof); settled → stays settled, lease dropped (the same proof resumes at
/// once); delivered → unchanged. Another claim's holder changes nothing.
pub fn release(existing: Option<&KeyRecord>, claim_key: &str) -> Option<KeyRecord> {
    let record = existing?;
    if record.claim_key.as_deref() != Some(claim_key) {
        return Some(record.clone());
    }
    let mut next = record.clone();
    match record.state {
        KeyState::Claimed | KeyState::Settling | KeyState::Uncertain | KeyState::Released => {
            next.state = KeyState::Released;
            next.claim_key = None;
            next.lease_until_ms = 0;
            next.retry_at_ms = 0;
        }
        KeyState::Settled => next.lease_until_ms = 0,
        KeyState::Delivered => {}
    }
    Some(next)
}

/// The pack's request fingerprint: hex HMAC-SHA256 under the server's fingerprint secret of
/// release version "\n" route "\n" body. Keyed, so the stored value says nothing about a body to
/// anyone without the secret; deleted with the record.
pub fn fingerprint(secret: &[u8], release: &str, route_id: &str, body: &[u8]) -> String {
    crate::engine::sign::hex(&hmac_sha256(
        secret,
        &[release.as_bytes(), b"\n", route_id.as_bytes(), b"\n", body],
    ))
}

#[cfg(test)]
mod tests;
