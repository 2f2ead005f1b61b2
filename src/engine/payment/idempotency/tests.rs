//! Every retry rule of the per-key record, each with a case that fails when the rule is broken.

use super::*;
use crate::engine::payment::outbox::tests::row;

const LEASE: u64 = 10_000;

fn attempt<'a>(route: &'a str, fp: Option<&'a str>, claim: &'a str, now: u64) -> Attempt<'a> {
    Attempt {
        route_id: route,
        fingerprint: fp,
        claim_key: claim,
        now_ms: now,
        lease_ms: LEASE,
        max_attempts: 5,
    }
}

fn facts(sig: &str) -> SettledFacts {
    SettledFacts {
        tx_sig: sig.into(),
        payer: "payer".into(),
        fee_lamports: 10_001,
        house: false,
        settled_ms: 7,
    }
}

fn fresh(route: &str, fp: Option<&str>, claim: &str, now: u64) -> KeyRecord {
    let (decision, record) = begin(None, &attempt(route, fp, claim, now));
    assert_eq!(decision, Decision::Fresh);
    record.unwrap()
}

#[test]
fn a_new_key_is_claimed_for_its_route_and_proof() {
    let record = fresh("r", None, "tx1", 1_000);
    assert_eq!(record.state, KeyState::Claimed);
    assert_eq!(record.claim_key.as_deref(), Some("tx1"));
    assert_eq!(record.lease_until_ms, 1_000 + LEASE);
    assert_eq!(record.attempts, vec![1_000]);
}

#[test]
fn another_route_or_body_is_a_free_conflict() {
    let record = fresh("r", Some("fp"), "tx1", 1_000);
    let (d, stored) = begin(Some(&record), &attempt("other", Some("fp"), "tx1", 2_000));
    assert_eq!((d, stored), (Decision::RouteConflict, None));
    let (d, stored) = begin(Some(&record), &attempt("r", Some("fp2"), "tx1", 2_000));
    assert_eq!((d, stored), (Decision::InputConflict, None));
    // Also after delivery, and also for a different proof.
    let mut done = record.clone();
    done.state = KeyState::Delivered;
    done.settled = Some(facts("s"));
    assert_eq!(
        begin(Some(&done), &attempt("r", Some("fp2"), "tx9", 99_000)).0,
        Decision::InputConflict
    );
}

#[test]
fn another_proof_while_the_first_holds_the_key_is_refused() {
    let claimed = fresh("r", None, "tx1", 1_000);
    let settling = settling(Some(&claimed), "tx1", 1_100, LEASE, None).unwrap();
    let uncertain = uncertain(Some(&settling), "tx1", 1_200, 5_000).unwrap();
    let settled_rec = settled(Some(&settling), "tx1", facts("s")).unwrap();
    let delivered_rec = delivered(Some(&settled_rec), "tx1", true).unwrap();
    for record in [
        &claimed,
        &settling,
        &uncertain,
        &settled_rec,
        &delivered_rec,
    ] {
        // Even long after every lease and Retry-After.
        assert_eq!(
            begin(Some(record), &attempt("r", None, "tx2", 500_000)).0,
            Decision::ProofConflict,
            "{:?}",
            record.state
        );
    }
}

#[test]
fn a_claim_whose_holder_vanished_before_settle_is_taken_afresh_after_its_lease() {
    let claimed = fresh("r", None, "tx1", 1_000);
    let (d, _) = begin(Some(&claimed), &attempt("r", None, "tx1", 1_500));
    assert_eq!(
        d,
        Decision::InProgress {
            retry_after_ms: LEASE - 500
        }
    );
    let (d, again) = begin(Some(&claimed), &attempt("r", None, "tx1", 1_000 + LEASE));
    assert_eq!(d, Decision::Fresh);
    assert_eq!(again.unwrap().lease_until_ms, 1_000 + 2 * LEASE);
}

#[test]
fn a_settle_whose_holder_vanished_is_reconciled_never_claimed_afresh() {
    let claimed = fresh("r", None, "tx1", 1_000);
    let settling_rec = settling(Some(&claimed), "tx1", 1_100, LEASE, None).unwrap();
    let (d, _) = begin(Some(&settling_rec), &attempt("r", None, "tx1", 2_000));
    assert!(matches!(d, Decision::InProgress { .. }));
    let (d, next) = begin(
        Some(&settling_rec),
        &attempt("r", None, "tx1", 1_100 + LEASE),
    );
    assert_eq!(d, Decision::Reconcile);
    assert_eq!(next.unwrap().state, KeyState::Settling);
}

#[test]
fn uncertain_is_kept_and_reconciled_by_the_same_proof_after_retry_after() {
    let claimed = fresh("r", None, "tx1", 1_000);
    let settling_rec = settling(Some(&claimed), "tx1", 1_100, LEASE, None).unwrap();
    let unsure = uncertain(Some(&settling_rec), "tx1", 2_000, 5_000).unwrap();
    assert_eq!(unsure.state, KeyState::Uncertain);
    assert_eq!(unsure.claim_key.as_deref(), Some("tx1"));
    // Before Retry-After: INVALID_RETRY_AFTER, and nothing changes but the count.
    let (d, stored) = begin(Some(&unsure), &attempt("r", None, "tx1", 3_000));
    assert_eq!(
        d,
        Decision::TooEarly {
            retry_after_ms: 4_000
        }
    );
    assert_eq!(stored.unwrap().state, KeyState::Uncertain);
    let (d, next) = begin(Some(&unsure), &attempt("r", None, "tx1", 7_000));
    assert_eq!(d, Decision::Reconcile);
    let next = next.unwrap();
    // Landed → settled; definitely failed → released (then a new proof is accepted).
    let landed = settled(Some(&next), "tx1", facts("s")).unwrap();
    assert_eq!(landed.state, KeyState::Settled);
    let failed = release(Some(&next), "tx1").unwrap();
    assert_eq!(failed.state, KeyState::Released);
    assert_eq!(
        begin(Some(&failed), &attempt("r", None, "tx2", 7_100)).0,
        Decision::Fresh
    );
    // Unknown again → uncertain again.
    assert_eq!(
        uncertain(Some(&next), "tx1", 7_200, 5_000).unwrap().state,
        KeyState::Uncertain
    );
}

#[test]
fn settled_but_undelivered_resumes_and_delivered_is_delivered_again_a_bounded_number_of_times() {
    let claimed = fresh("r", None, "tx1", 1_000);
    let s = settling(Some(&claimed), "tx1", 1_100, LEASE, None).unwrap();
    let s = settled(Some(&s), "tx1", facts("sig")).unwrap();
    let released = release(Some(&s), "tx1").unwrap();
    assert_eq!(released.state, KeyState::Settled);
    let (d, resumed) = begin(Some(&released), &attempt("r", None, "tx1", 1_200));
    assert_eq!(d, Decision::Resume(facts("sig")));
    let mut done = delivered(resumed.as_ref(), "tx1", true).unwrap();
    // The identical retry after a lost answer is delivered again, counted, never as an attempt.
    for n in 1..=REDELIVERY_LIMIT {
        let (d, next) = begin(Some(&done), &attempt("r", None, "tx1", 1_300));
        assert_eq!(
            d,
            Decision::Redeliver {
                facts: facts("sig"),
                row: None,
                first_delivery: None,
            },
            "re-delivery {n}"
        );
        done = next.unwrap();
        assert_eq!(done.redeliveries, n);
        assert_eq!(
            done.attempts.len(),
            2,
            "a re-delivery is not a counted attempt"
        );
    }
    // Past the limit: 409 with the original receipt.
    let (d, _) = begin(Some(&done), &attempt("r", None, "tx1", 1_400));
    assert_eq!(d, Decision::Delivered(facts("sig")));
    // Another proof under a delivered key is still a conflict.
    let (d, _) = begin(Some(&done), &attempt("r", None, "tx2", 1_400));
    assert_eq!(d, Decision::ProofConflict);
}

#[test]
fn a_request_without_payment_is_answered_from_the_record_never_challenged_while_it_holds_one() {
    let fp = Some("f");
    // Nothing under the key, or released: the challenge.
    assert_eq!(peek(None, "r", fp, 1_000, LEASE).0, Decision::Fresh);
    let claimed = fresh("r", fp, "tx1", 1_000);
    let released = release(Some(&claimed), "tx1").unwrap();
    assert_eq!(
        peek(Some(&released), "r", fp, 1_100, LEASE).0,
        Decision::Fresh
    );
    // In flight: 409 with the lease's remaining wait.
    let (d, stored) = peek(Some(&claimed), "r", fp, 1_500, LEASE);
    assert_eq!(
        d,
        Decision::InProgress {
            retry_after_ms: 9_500
        }
    );
    assert!(
        stored.is_none(),
        "a peek at a payment in flight changes nothing"
    );
    let settling_rec = settling(Some(&claimed), "tx1", 1_100, LEASE, None).unwrap();
    let uncertain_rec = uncertain(Some(&settling_rec), "tx1", 1_200, 5_000).unwrap();
    assert!(matches!(
        peek(Some(&uncertain_rec), "r", fp, 1_300, LEASE).0,
        Decision::TooEarly { .. }
    ));
    // Another route or body: the conflicts.
    assert_eq!(
        peek(Some(&claimed), "other", fp, 1_500, LEASE).0,
        Decision::RouteConflict
    );
    assert_eq!(
        peek(Some(&claimed), "r", Some("g"), 1_500, LEASE).0,
        Decision::InputConflict
    );
    // Settled and never delivered (the worker went away): resumed once its lease is over.
    let settled_rec = settled(Some(&settling_rec), "tx1", facts("sig")).unwrap();
    assert!(matches!(
        peek(Some(&settled_rec), "r", fp, 1_200, LEASE).0,
        Decision::InProgress { .. }
    ));
    let (d, stored) = peek(Some(&settled_rec), "r", fp, 20_000, LEASE);
    assert_eq!(
        d,
        Decision::Redeliver {
            facts: facts("sig"),
            row: None,
            first_delivery: Some("tx1".into()),
        }
    );
    assert_eq!(
        stored.unwrap().lease_until_ms,
        20_000 + LEASE,
        "the resumer holds a lease"
    );
    // Delivered: delivered again (the key is paid for).
    let done = delivered(Some(&settled_rec), "tx1", true).unwrap();
    let (d, stored) = peek(Some(&done), "r", fp, 20_000, LEASE);
    assert!(matches!(
        d,
        Decision::Redeliver {
            first_delivery: None,
            ..
        }
    ));
    assert_eq!(stored.unwrap().redeliveries, 1);
}

#[test]
fn concurrent_unpaid_requests_share_one_challenge() {
    let ttl = 300_000;
    let first = challenge_expiry(None, 1_000, ttl);
    assert_eq!(first, 301_000);
    assert_eq!(
        challenge_expiry(Some(first), 2_000, ttl),
        first,
        "the same challenge"
    );
    // Less than half its life left: a new one (a payer must have time to pay it).
    assert_eq!(challenge_expiry(Some(first), 200_000, ttl), 500_000);
}

#[test]
fn the_row_travels_with_the_record_and_a_delivery_says_whether_it_was_written() {
    use crate::engine::payment::outbox::PendingRow;
    let row = PendingRow {
        table: "t".into(),
        network: "n".into(),
        price_units: 1,
        ts_ms: 2,
        columns: vec![],
    };
    let claimed = fresh("r", None, "tx1", 1_000);
    let s = settling(Some(&claimed), "tx1", 1_100, LEASE, Some(row.clone())).unwrap();
    assert_eq!(s.row.as_ref(), Some(&row));
    let s = settled(Some(&s), "tx1", facts("sig")).unwrap();
    // The alarm wrote the row as undelivered meanwhile; the delivery owes the delivered one.
    let s = row_outcome(&s, true);
    assert!(s.row_written);
    let unwritten = delivered(Some(&s), "tx1", false).unwrap();
    assert!(!unwritten.row_written, "the delivered row is still owed");
    let written = delivered(Some(&s), "tx1", true).unwrap();
    assert!(written.row_written);
    // A failed outbox write is counted for the back-off, a confirmed one clears it.
    let failed = row_outcome(&unwritten, false);
    assert_eq!(failed.row_failures, 1);
    assert_eq!(row_outcome(&failed, true).row_failures, 0);
}

#[test]
fn payment_attempts_per_key_are_rate_limited() {
    let mut record = fresh("r", None, "tx1", 1_000);
    record.lease_until_ms = 0;
    record.state = KeyState::Released;
    record.claim_key = None;
    let mut now = 1_000;
    for _ in 0..4 {
        now += 10;
        let (d, next) = begin(Some(&record), &attempt("r", None, "txN", now));
        assert_ne!(d, Decision::RateLimited { retry_after_ms: 0 });
        record = release(next.as_ref(), "txN").unwrap();
    }
    assert_eq!(record.attempts.len(), 5);
    let (d, stored) = begin(Some(&record), &attempt("r", None, "txN", now + 1));
    assert_eq!(
        d,
        Decision::RateLimited {
            retry_after_ms: 1_000 + ATTEMPT_WINDOW_MS - (now + 1)
        }
    );
    assert_eq!(stored, None);
    // The window slides.
    let (d, _) = begin(
        Some(&record),
        &attempt("r", None, "txN", 1_000 + ATTEMPT_WINDOW_MS),
    );
    assert_eq!(d, Decision::Fresh);
}

#[test]
fn count_attempt_is_a_sliding_window() {
    let mut attempts = Vec::new();
    assert_eq!(count_attempt(&mut attempts, 100, 2), Ok(()));
    assert_eq!(count_attempt(&mut attempts, 200, 2), Ok(()));
    assert_eq!(
        count_attempt(&mut attempts, 300, 2),
        Err(ATTEMPT_WINDOW_MS - 200)
    );
    assert_eq!(
        count_attempt(&mut attempts, 100 + ATTEMPT_WINDOW_MS, 2),
        Ok(())
    );
}

#[test]
fn a_record_older_than_24_hours_is_gone() {
    let record = fresh("r", Some("fp"), "tx1", 1_000);
    let (d, next) = begin(
        Some(&record),
        &attempt("other", None, "tx2", 1_000 + RECORD_TTL_MS),
    );
    assert_eq!(d, Decision::Fresh);
    assert_eq!(next.unwrap().route_id, "other");
}

#[test]
fn transitions_need_the_holder_and_the_right_state() {
    let claimed = fresh("r", None, "tx1", 1_000);
    assert_eq!(
        settling(Some(&claimed), "tx2", 1, LEASE, None),
        Err(TransitionError::NotHolder)
    );
    assert_eq!(
        settled(Some(&claimed), "tx1", facts("s")),
        Err(TransitionError::WrongState)
    );
    assert_eq!(
        delivered(Some(&claimed), "tx1", true),
        Err(TransitionError::WrongState)
    );
    assert_eq!(release(Some(&claimed), "tx2"), Some(claimed.clone()));
    assert_eq!(
        settling(None, "tx1", 1, LEASE, None),
        Err(TransitionError::NotHolder)
    );
}

#[test]
fn settled_is_idempotent_for_its_signature_only() {
    let claimed = fresh("r", None, "tx1", 1_000);
    let settling_record = settling(Some(&claimed), "tx1", 1_000, LEASE, None).unwrap();
    let settled_record = settled(Some(&settling_record), "tx1", facts("s")).unwrap();
    assert_eq!(settled_record.state, KeyState::Settled);
    let delivered_record = delivered(Some(&settled_record), "tx1", true).unwrap();
    for record in [settled_record, delivered_record] {
        assert_eq!(
            settled(Some(&record), "tx1", facts("s")),
            Ok(record.clone())
        );
        assert_eq!(
            settled(Some(&record), "tx1", facts("other")),
            Err(TransitionError::WrongState)
        );
    }
}

#[test]
fn the_fingerprint_covers_release_route_and_body() {
    let base = fingerprint(b"secret", "1.0", "r", b"{}");
    assert_eq!(base.len(), 64);
    assert_ne!(base, fingerprint(b"secret", "1.1", "r", b"{}"));
    assert_ne!(base, fingerprint(b"secret", "1.0", "r2", b"{}"));
    assert_ne!(base, fingerprint(b"secret", "1.0", "r", b"{ }"));
    assert_ne!(base, fingerprint(b"other", "1.0", "r", b"{}"));
    assert_eq!(base, fingerprint(b"secret", "1.0", "r", b"{}"));
}

fn record(state: KeyState) -> KeyRecord {
    KeyRecord {
        route_id: "/r".into(),
        created_ms: 1_000,
        fingerprint: None,
        claim_key: Some("c".into()),
        state,
        lease_until_ms: 5_000,
        retry_at_ms: 0,
        settled: Some(SettledFacts {
            tx_sig: "sig".into(),
            payer: "p".into(),
            fee_lamports: 5,
            house: false,
            settled_ms: 2_000,
        }),
        attempts: vec![],
        row: Some(row()),
        row_written: false,
        redeliveries: 0,
        row_failures: 0,
    }
}

#[test]
fn a_row_is_owed_until_written_and_the_record_outlives_it() {
    // Delivered, the worker's write failed: write at once.
    let delivered = record(KeyState::Delivered);
    assert_eq!(
        alarm_step(&delivered, 3_000),
        AlarmStep::WriteRow { delivered: true }
    );
    // Settled, the worker may still be delivering: wait for its lease, then write undelivered.
    let settled = record(KeyState::Settled);
    assert_eq!(
        alarm_step(&settled, 3_000),
        AlarmStep::Wait { at_ms: 5_000 }
    );
    assert_eq!(
        alarm_step(&settled, 5_000),
        AlarmStep::WriteRow { delivered: false }
    );
    // Written: wait for the record's 24 hours, then delete.
    let mut written = delivered.clone();
    written.row_written = true;
    let expires = 1_000 + RECORD_TTL_MS;
    assert_eq!(
        alarm_step(&written, 3_000),
        AlarmStep::Wait { at_ms: expires }
    );
    assert_eq!(alarm_step(&written, expires), AlarmStep::Delete);
    // Never deleted while a row is owed, even past 24 hours.
    assert_eq!(
        alarm_step(&delivered, expires + 1),
        AlarmStep::WriteRow { delivered: true }
    );
    // Nothing settled: nothing owed (a claim's row figures are not a payment).
    let mut claimed = record(KeyState::Settling);
    claimed.settled = None;
    assert_eq!(
        alarm_step(&claimed, 3_000),
        AlarmStep::Wait { at_ms: expires }
    );
}
