//! The payment guard's state machine (pure; the Durable Object in `edge::guard` stores the record
//! and applies these transitions atomically, one object per claim key).
//!
//! A record holds payment facts only: the claim key (SHA-256 of the transaction message), route,
//! Idempotency-Key, state, times, and after settlement the settlement facts (signature, payer, fee,
//! house flag). Nothing derived from the request body is ever stored.
//!
//! States: claimed → settled → delivered. A claim carries a lease: while it runs, the same payment
//! arriving again is `InProgress` (two identical requests at once → one charge, one result). After
//! the lease ends (or the holder released it), a claimed payment may be claimed afresh (nothing
//! moved), a settled one resumes without a second charge, and a delivered one is always `Replay`.

use serde::{Deserialize, Serialize};

/// How long a claim keeps a second identical request out (the facilitator waits up to 30 s for a
/// confirmation; a settle may be retried once).
pub const LEASE_MS: u64 = 120_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardState {
    Claimed,
    Settled,
    Delivered,
}

/// What settlement established (payment facts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettledFacts {
    pub tx_sig: String,
    pub payer: String,
    pub fee_lamports: u64,
    pub house: bool,
    pub settled_ms: u64,
}

/// The stored record of one payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardRecord {
    pub claim_key: String,
    pub route_id: String,
    pub idempotency_key: String,
    pub state: GuardState,
    pub claimed_ms: u64,
    pub lease_until_ms: u64,
    pub settled: Option<SettledFacts>,
    pub delivered_ms: Option<u64>,
}

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimDecision {
    /// Nothing has moved: verify, run, settle.
    Fresh,
    /// Already settled, never delivered: run again and deliver, no second charge.
    Resume(SettledFacts),
    /// Already delivered.
    Replay,
    /// Another request holds the lease.
    InProgress,
    /// Claimed for another route or Idempotency-Key.
    BoundElsewhere,
}

/// Decides a claim and returns the record to store (None = store nothing).
pub fn claim(
    existing: Option<&GuardRecord>,
    claim_key: &str,
    route_id: &str,
    idempotency_key: &str,
    now_ms: u64,
) -> (ClaimDecision, Option<GuardRecord>) {
    let fresh = || GuardRecord {
        claim_key: claim_key.to_owned(),
        route_id: route_id.to_owned(),
        idempotency_key: idempotency_key.to_owned(),
        state: GuardState::Claimed,
        claimed_ms: now_ms,
        lease_until_ms: now_ms.saturating_add(LEASE_MS),
        settled: None,
        delivered_ms: None,
    };
    let Some(record) = existing else {
        return (ClaimDecision::Fresh, Some(fresh()));
    };
    if record.state == GuardState::Delivered {
        return (ClaimDecision::Replay, None);
    }
    if record.route_id != route_id || record.idempotency_key != idempotency_key {
        return (ClaimDecision::BoundElsewhere, None);
    }
    if now_ms < record.lease_until_ms {
        return (ClaimDecision::InProgress, None);
    }
    match (&record.state, &record.settled) {
        (GuardState::Settled, Some(facts)) => {
            let mut resumed = record.clone();
            resumed.lease_until_ms = now_ms.saturating_add(LEASE_MS);
            (ClaimDecision::Resume(facts.clone()), Some(resumed))
        }
        _ => (ClaimDecision::Fresh, Some(fresh())),
    }
}

/// Why a transition was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransitionError {
    /// No record (released or never claimed).
    Missing,
    /// The record is not in a state this transition starts from.
    WrongState,
}

/// claimed → settled (idempotent for the same signature).
pub fn settle(
    existing: Option<&GuardRecord>,
    facts: SettledFacts,
) -> Result<GuardRecord, TransitionError> {
    let record = existing.ok_or(TransitionError::Missing)?;
    match record.state {
        GuardState::Claimed => {
            let mut next = record.clone();
            next.state = GuardState::Settled;
            next.settled = Some(facts);
            Ok(next)
        }
        GuardState::Settled
            if record.settled.as_ref().map(|f| &f.tx_sig) == Some(&facts.tx_sig) =>
        {
            Ok(record.clone())
        }
        _ => Err(TransitionError::WrongState),
    }
}

/// settled → delivered.
pub fn deliver(
    existing: Option<&GuardRecord>,
    now_ms: u64,
) -> Result<GuardRecord, TransitionError> {
    let record = existing.ok_or(TransitionError::Missing)?;
    match record.state {
        GuardState::Settled | GuardState::Delivered => {
            let mut next = record.clone();
            if next.state == GuardState::Settled {
                next.state = GuardState::Delivered;
                next.delivered_ms = Some(now_ms);
            }
            next.lease_until_ms = 0;
            Ok(next)
        }
        GuardState::Claimed => Err(TransitionError::WrongState),
    }
}

/// Nothing was delivered: a claimed record disappears (None), a settled one keeps its facts and
/// drops its lease so the same payment can resume at once, a delivered one stays.
pub fn release(existing: Option<&GuardRecord>) -> Option<GuardRecord> {
    let record = existing?;
    match record.state {
        GuardState::Claimed => None,
        GuardState::Settled => {
            let mut next = record.clone();
            next.lease_until_ms = 0;
            Some(next)
        }
        GuardState::Delivered => Some(record.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> SettledFacts {
        SettledFacts {
            tx_sig: "sig".into(),
            payer: "payer".into(),
            fee_lamports: 10_001,
            house: false,
            settled_ms: 2_000,
        }
    }

    #[test]
    fn full_life_and_replay() {
        let (decision, record) = claim(None, "k", "r", "key", 1_000);
        assert_eq!(decision, ClaimDecision::Fresh);
        let record = record.unwrap();
        assert_eq!(record.state, GuardState::Claimed);
        assert_eq!(record.lease_until_ms, 1_000 + LEASE_MS);
        let settled = settle(Some(&record), facts()).unwrap();
        assert_eq!(settled.state, GuardState::Settled);
        let delivered = deliver(Some(&settled), 3_000).unwrap();
        assert_eq!(delivered.state, GuardState::Delivered);
        assert_eq!(delivered.delivered_ms, Some(3_000));
        // Replay at any later time, on any route or key.
        for (route, key, at) in [
            ("r", "key", 4_000),
            ("other", "key", 10_000_000),
            ("r", "x", 5),
        ] {
            assert_eq!(
                claim(Some(&delivered), "k", route, key, at),
                (ClaimDecision::Replay, None)
            );
        }
    }

    #[test]
    fn concurrent_claim_is_in_progress_until_the_lease_ends() {
        let (_, record) = claim(None, "k", "r", "key", 1_000);
        let record = record.unwrap();
        assert_eq!(
            claim(Some(&record), "k", "r", "key", 1_001).0,
            ClaimDecision::InProgress
        );
        // Lease over, nothing settled: claim afresh.
        let (decision, again) = claim(Some(&record), "k", "r", "key", 1_000 + LEASE_MS);
        assert_eq!(decision, ClaimDecision::Fresh);
        assert_eq!(again.unwrap().claimed_ms, 1_000 + LEASE_MS);
    }

    #[test]
    fn settled_but_undelivered_resumes_without_second_charge() {
        let (_, record) = claim(None, "k", "r", "key", 1_000);
        let settled = settle(record.as_ref(), facts()).unwrap();
        assert_eq!(
            claim(Some(&settled), "k", "r", "key", 1_500).0,
            ClaimDecision::InProgress
        );
        let released = release(Some(&settled)).unwrap();
        assert_eq!(released.state, GuardState::Settled);
        let (decision, resumed) = claim(Some(&released), "k", "r", "key", 1_600);
        assert_eq!(decision, ClaimDecision::Resume(facts()));
        assert_eq!(resumed.unwrap().lease_until_ms, 1_600 + LEASE_MS);
    }

    #[test]
    fn bound_to_its_route_and_key() {
        let (_, record) = claim(None, "k", "r", "key", 1_000);
        let released = release(record.as_ref());
        assert_eq!(released, None);
        let (_, record) = claim(None, "k", "r", "key", 1_000);
        let record = record.unwrap();
        assert_eq!(
            claim(Some(&record), "k", "r2", "key", 999_999).0,
            ClaimDecision::BoundElsewhere
        );
        assert_eq!(
            claim(Some(&record), "k", "r", "key2", 999_999).0,
            ClaimDecision::BoundElsewhere
        );
    }

    #[test]
    fn transitions_refuse_wrong_states() {
        assert_eq!(settle(None, facts()), Err(TransitionError::Missing));
        assert_eq!(deliver(None, 1), Err(TransitionError::Missing));
        let (_, record) = claim(None, "k", "r", "key", 1_000);
        assert_eq!(
            deliver(record.as_ref(), 2),
            Err(TransitionError::WrongState)
        );
        let settled = settle(record.as_ref(), facts()).unwrap();
        assert_eq!(settle(Some(&settled), facts()), Ok(settled.clone()));
        let mut other = facts();
        other.tx_sig = "other".into();
        assert_eq!(
            settle(Some(&settled), other),
            Err(TransitionError::WrongState)
        );
        let delivered = deliver(Some(&settled), 5).unwrap();
        assert_eq!(release(Some(&delivered)), Some(delivered.clone()));
        assert_eq!(deliver(Some(&delivered), 9).unwrap().delivered_ms, Some(5));
    }
}
