//! The delivery steps every paid rail shares (x402 in `pipeline::paid`, MPP in `payment::mpp`) and
//! the free check reuses: run the engine with its wall time observed, sign where the family's table
//! says the signature goes, and write the delivered call's ledger row. A leaf of the edge: it names
//! no rail and no pipeline stage, so both can use it without importing each other.

use crate::edge::engines::Runnable;
use crate::edge::error::Refused;
use crate::edge::family::{Family, PaidOp, SignatureAt};
use crate::edge::{ledger, metrics, respond};
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

/// Writes the delivered call's ledger row. The payer has paid: the result is delivered even when
/// the row cannot be written, and the gap shows in the metrics.
pub(crate) async fn record_ledger_row(
    env: &Env,
    op: &PaidOp,
    facts: &ledger::PaymentFacts,
    columns: &[(&'static str, crate::engine::LedgerValue)],
) {
    if ledger::record(env, op.family, facts, columns)
        .await
        .is_err()
    {
        metrics::payment(op.family.id, "ledger_failed");
    }
}
