//! The delivery steps every paid rail shares (x402 in `pipeline::paid`, MPP in `payment::mpp`) and
//! the free check reuses: run the engine with its wall time observed, sign where the family's table
//! says the signature goes, write the delivered call's ledger row, and deliver a paid result again
//! to a retry after a lost answer. It names no rail and no pipeline stage, so both can use it
//! without importing each other (the one delivery mark it sets is the payment record's).

use crate::edge::engines::Runnable;
use crate::edge::error::Refused;
use crate::edge::family::{Family, PaidOp, SignatureAt};
use crate::edge::{ledger, metrics, respond};
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::outbox::PendingRow;
use crate::engine::sign::ReportSigner;
use crate::engine::Delivery;
use serde_json::{Map, Value};
use worker::{Date, Env, Response};

/// Signs a family's report where the family's table says the signature goes: in the body, or
/// detached into `Report-Signature` (a closed published output schema stays byte-exact).
pub(crate) fn sign_for(
    family: &Family,
    status: u16,
    report: Map<String, Value>,
    signer: &ReportSigner,
) -> Result<Response, Refused> {
    Ok(match family.signature {
        SignatureAt::Member => respond::signed(status, report, signer)?,
        SignatureAt::Header => respond::signed_detached(status, report, signer)?,
    })
}

pub(crate) fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// What the engine produced for a paid call.
pub(crate) enum Chargeable {
    /// A result to charge for: settle, then deliver it.
    Yes(Delivery),
    /// Could-not-measure: delivered, signed, and never charged.
    No(Response),
}

/// Runs the engine (its wall time observed): a chargeable result, the signed unchargeable answer,
/// or the engine's refusal.
pub(crate) fn run_engine(
    op: &PaidOp,
    runnable: &dyn Runnable,
    signer: &ReportSigner,
    now: u64,
) -> Result<Chargeable, Refused> {
    let outcome = runnable.run(now);
    metrics::engine_latency(now_ms().saturating_sub(now));
    match outcome? {
        delivery if delivery.chargeable => Ok(Chargeable::Yes(delivery)),
        unpaid => sign_for(op.family, unpaid.status, unpaid.report, signer).map(Chargeable::No),
    }
}

/// Writes a delivered call's ledger row: true when D1 confirmed it. When it did not, the row
/// stays in the payment's record (its outbox) and the record's alarm writes it; the gap is
/// counted as `ledger_deferred`.
pub(crate) async fn write_row(
    env: &Env,
    op: &PaidOp,
    row: &PendingRow,
    facts: &SettledFacts,
) -> bool {
    let written = ledger::write(env, row, facts, true).await.is_ok();
    if !written {
        metrics::payment(op.family.id, "ledger_deferred");
    }
    written
}

/// What a paid payment's retry after a lost answer is checked against and answered with.
pub(crate) struct Again<'a> {
    /// The paid call's closed ledger figures (None on a record from before they were kept).
    pub row: Option<&'a PendingRow>,
    pub facts: &'a SettledFacts,
    /// Settled and never delivered: (the record's object, the payment's claim) to write the
    /// delivered row for and mark delivered.
    pub first_delivery: Option<(&'a str, &'a str)>,
    /// The rail's receipt header, as the first answer carried it.
    pub receipt: (&'static str, String),
    /// The body's keyed fingerprint already matched the paid call's (the pack).
    pub fingerprinted: bool,
}

/// A retry after a lost answer: the operation runs again; delivered, signed, with the original
/// receipt when it is the paid call (its fingerprint matched, or its closed figures equal the
/// paid call's), else None (the caller answers 409). No second charge; no second row.
pub(crate) async fn redeliver(
    env: &Env,
    op: &PaidOp,
    runnable: &dyn Runnable,
    signer: &ReportSigner,
    again: Again<'_>,
) -> Result<Option<Response>, Refused> {
    // The re-run is dated as the paid call was (its row's time), so its report and figures are the
    // paid call's, timestamps included; only the signature is new.
    let now = again.row.map_or_else(now_ms, |row| row.ts_ms);
    let delivery = match run_engine(op, runnable, signer, now)? {
        Chargeable::Yes(delivery) => delivery,
        Chargeable::No(_) => return Ok(None),
    };
    let same = match again.row {
        _ if again.fingerprinted => true,
        Some(row) => row.same_figures(&delivery.ledger),
        None => false,
    };
    if !same {
        metrics::payment(op.family.id, "redelivery_refused");
        return Ok(None);
    }
    if let Some((object, claim_key)) = again.first_delivery {
        let written = match again.row {
            Some(row) => write_row(env, op, row, again.facts).await,
            None => false,
        };
        mark_delivered(env, object, claim_key, op.family.id, written).await;
        metrics::payment(op.family.id, "resumed");
    } else {
        metrics::payment(op.family.id, "redelivered");
    }
    let mut response = sign_for(op.family, delivery.status, delivery.report, signer)?;
    let (name, value) = again.receipt;
    let _ = response.headers_mut().set(name, &value);
    Ok(Some(response))
}

/// The delivery mark of the payment record `object` (both rails, and a re-delivery). A guard that
/// could not set it leaves the payment settled-undelivered (its alarm writes the row as
/// undelivered; a retry resumes it), and the gap is counted as `delivered_unmarked`.
pub(crate) async fn mark_delivered(
    env: &Env,
    object: &str,
    claim_key: &str,
    family_id: &'static str,
    row_written: bool,
) {
    let command = crate::edge::guard::Command::Delivered {
        claim_key: claim_key.to_owned(),
        row_written,
    };
    if !crate::edge::guard::transition(env, object, command).await {
        metrics::payment(family_id, "delivered_unmarked");
    }
}
