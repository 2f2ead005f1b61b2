//! MPP on `POST /v1/mpp/context-budget-pack`, the I/O half (the pure half is
//! `engine::payment::mpp`): the "Payment" HTTP authentication scheme, method `tempo`, intent
//! `charge`, push mode. Everything but the payment is the x402 pack route's: the router has already
//! run the free validation, the contract's key check and the keyed body fingerprint.
//!
//! Order: engine (pure, deterministic; a refusal or an unchargeable result is answered here and
//! nothing is asked for) → no `Authorization` → 402 `WWW-Authenticate: Payment` → decode the
//! credential under a size cap → its challenge id's HMAC (route, key, body, amount, expiry) → the
//! key's record `begin` (`PaymentGuard` `key:<Idempotency-Key>`, claim = the pushed transaction's
//! hash; the x402 rail's states and retry rules, ARCHITECTURE §4) → JSON-RPC: `eth_chainId`, the
//! transaction's receipt and its TransferWithMemo log, the block time against `expires` → the
//! challenge's own record (`PaymentGuard` `mpp:<challenge id>`, one transaction per challenge) →
//! settling → settled → ledger row → delivered → 200 with `Payment-Receipt` and `Report-Signature`.
//!
//! In push mode the payer's transfer precedes every check here, so the engine's outcome is decided
//! before a challenge is ever answered: a payer is only ever asked to pay for a result this worker
//! will deliver. Nothing is broadcast by the worker, so no settlement can be in doubt; a receipt the
//! chain does not show yet is answered 409 with Retry-After (a 402 would make a stock client pay
//! again), and the same credential is honoured later as long as the payment landed before `expires`.
//!
//! Env vars: TEMPO_RPC_URL, TEMPO_CHAIN_ID, TEMPO_CURRENCY, TEMPO_RECIPIENT, MPP_CHALLENGE_TTL_MS
//! (default 300000), MPP_REALM (default: the request's host), HOUSE_WALLETS; the x402 rail's
//! PAYMENT_LEASE_MS and PAY_ATTEMPTS_PER_KEY. Secret: IDEMPOTENCY_SECRET, else derived from
//! SIGNING_KEY (the pack fingerprint's secret).

use crate::edge::deliver::{
    mark_delivered, redeliver, run_engine, sign_for, write_row, Again, Chargeable,
};
use crate::edge::engines::Runnable;
use crate::edge::error::Refused;
use crate::edge::family::PaidOp;
use crate::edge::guard::{self, Command, TransitionAnswer};
use crate::edge::payment::binding::fingerprint_secret;
use crate::edge::payment::facilitator::post_json;
use crate::edge::payment::{count_guard_gap, tunables, PaidCall};
use crate::edge::{config, ledger, metrics};
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::idempotency::{Decision, RECORD_TTL_MS};
use crate::engine::payment::mpp::chain::{self, Expected, ReceiptAnswer};
use crate::engine::payment::mpp::{
    self, check_credential, parse_authorization, Binding, Bound, MppConfig, MppError,
};
use crate::engine::payment::outbox::PendingRow;
use crate::engine::payment::PaymentError;
use crate::engine::ClosedError;
use serde_json::Value;
use worker::{Date, Env, Headers, Request, Response, Result};

fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// The MPP settings from `[vars]`; the realm defaults to the request's host.
fn load_config(env: &Env, req: &Request) -> std::result::Result<MppConfig, MppError> {
    let get = |name: &str| config::var(env, name).ok_or(MppError::ConfigInvalid);
    let realm = match config::var(env, "MPP_REALM") {
        Some(realm) => realm,
        None => req
            .url()
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .ok_or(MppError::ConfigInvalid)?,
    };
    let chain_id = get("TEMPO_CHAIN_ID")?
        .trim()
        .parse()
        .map_err(|_| MppError::ConfigInvalid)?;
    get("TEMPO_RPC_URL")?;
    MppConfig::new(
        &realm,
        &get("TEMPO_CURRENCY")?,
        &get("TEMPO_RECIPIENT")?,
        chain_id,
        config::var_u64(env, "MPP_CHALLENGE_TTL_MS", mpp::DEFAULT_CHALLENGE_TTL_MS),
    )
}

/// An `application/problem+json` answer (RFC 9457), with a fresh challenge where given.
fn problem(
    error: &dyn ClosedError,
    problem_type: &str,
    challenge: Option<&mpp::Challenge>,
    retry_after_s: Option<u64>,
) -> Result<Response> {
    let headers = Headers::new();
    headers.set("content-type", "application/problem+json")?;
    headers.set("cache-control", "no-store")?;
    if let Some(challenge) = challenge {
        headers.set("www-authenticate", &mpp::www_authenticate(challenge))?;
    }
    if let Some(seconds) = retry_after_s {
        headers.set("retry-after", &seconds.to_string())?;
    }
    let body = mpp::problem_body(error, problem_type).to_string();
    Ok(Response::from_bytes(body.into_bytes())?
        .with_status(error.status())
        .with_headers(headers))
}

/// One paid request on the MPP route, after free validation and the engine.
struct Asked<'a> {
    family_id: &'static str,
    /// The ledger row the payment will owe (built once, from the engine's figures).
    row: PendingRow,
    env: &'a Env,
    config: MppConfig,
    secret: Vec<u8>,
    route_id: &'a str,
    key: &'a str,
    fingerprint: &'a str,
    price: u64,
}

impl Asked<'_> {
    fn binding(&self) -> Binding<'_> {
        Binding {
            secret: &self.secret,
            route_id: self.route_id,
            idempotency_key: self.key,
            fingerprint: self.fingerprint,
            price_units: self.price,
        }
    }

    fn fresh_challenge(&self) -> mpp::Challenge {
        mpp::challenge(&self.config, &self.binding(), now_ms())
    }

    /// A refusal of the MPP rail: every 402 carries a fresh challenge, as the draft asks.
    fn refuse(&self, error: MppError) -> Result<Response> {
        let challenge = error.rechallenges().then(|| self.fresh_challenge());
        let retry = (error == MppError::TransactionNotFound)
            .then_some(mpp::NOT_FOUND_RETRY_AFTER_MS / 1000);
        problem(&error, error.problem_type(), challenge.as_ref(), retry)
    }

    /// A refusal of the key's record (the x402 rail's codes), as a problem.
    fn conflict(&self, error: PaymentError, retry_after_ms: Option<u64>) -> Result<Response> {
        let seconds = retry_after_ms
            .map(PaymentError::seconds)
            .or(error.retry_after_s());
        problem(&error, "about:blank", None, seconds)
    }

    async fn transition(&self, command: Command) -> bool {
        guard::transition(self.env, &guard::key_object(self.key), command).await
    }

    /// Frees the key's claim; a guard that could not is counted (`release_unrecorded`).
    async fn release(&self, tx_hash: &str) {
        let released = self
            .transition(Command::Release {
                claim_key: tx_hash.to_owned(),
            })
            .await;
        count_guard_gap(self.family_id, "release_unrecorded", released);
    }
}

/// JSON-RPC POST to the configured Tempo node (None: unreachable or unreadable).
async fn rpc(env: &Env, body: &Value) -> Option<Vec<u8>> {
    let url = config::var(env, "TEMPO_RPC_URL")?;
    post_json(&url, body).await.ok()
}

/// Verifies the pushed payment on chain: the node's chain, the receipt and its transfer, and that
/// it landed before the challenge expired. The payer's address, or the refusal.
async fn verify_on_chain(
    asked: &Asked<'_>,
    bound: &Bound,
) -> std::result::Result<String, MppError> {
    let chain_id = rpc(asked.env, &chain::chain_id_request())
        .await
        .and_then(|a| chain::read_chain_id(&a))
        .ok_or(MppError::RpcUnavailable)?;
    if chain_id != asked.config.chain_id {
        return Err(MppError::ChainMismatch);
    }
    let answer = rpc(asked.env, &chain::receipt_request(&bound.tx_hash))
        .await
        .and_then(|a| chain::read_receipt(&a))
        .ok_or(MppError::RpcUnavailable)?;
    let receipt = match answer {
        ReceiptAnswer::Found(receipt) => receipt,
        // Not (yet) on chain: it may still land before `expires`; after it, it can only land late.
        ReceiptAnswer::Missing if now_ms() <= bound.expires_ms => {
            return Err(MppError::TransactionNotFound)
        }
        ReceiptAnswer::Missing => return Err(MppError::ChallengeExpired),
    };
    let expected = Expected {
        currency: &asked.config.currency,
        recipient: &asked.config.recipient,
        amount: asked.price,
        realm: &asked.config.realm,
        challenge_id: &bound.challenge_id,
        source: bound.source.as_deref(),
    };
    let paid = chain::verify_receipt(&receipt, &expected)?;
    let landed_s = match paid.block_timestamp {
        Some(seconds) => seconds,
        None => rpc(asked.env, &chain::block_request(&receipt.block_number))
            .await
            .and_then(|a| chain::read_block_timestamp(&a))
            .ok_or(MppError::RpcUnavailable)?,
    };
    if landed_s.saturating_mul(1000) > bound.expires_ms {
        return Err(MppError::ChallengeExpired);
    }
    Ok(paid.payer)
}

/// Whether the payer is one of ours (`HOUSE_WALLETS`, compared case-insensitively).
fn is_house(env: &Env, payer: &str) -> bool {
    config::var(env, "HOUSE_WALLETS")
        .unwrap_or_default()
        .split(',')
        .any(|w| w.trim().eq_ignore_ascii_case(payer))
}

/// What the payment gate decided.
enum Gate {
    Answer(Response),
    Paid(SettledFacts),
    /// A delivered payment (or a settled, undelivered one) asked again after a lost answer: the
    /// facts, the paid call's row, and the claim when the delivery is still to be marked.
    Again {
        facts: SettledFacts,
        row: Option<PendingRow>,
        first_delivery: Option<String>,
    },
}

/// A request with no credential under a key that already holds a payment: delivered again, or
/// the record's 409; never a new challenge (in push mode a challenge is a request to pay). A key
/// that holds nothing gets the challenge its concurrent unpaid requests share.
async fn unpaid(asked: &Asked<'_>) -> Result<Gate> {
    let object = guard::key_object(asked.key);
    let peek = Command::Peek {
        route_id: asked.route_id.to_owned(),
        fingerprint: Some(asked.fingerprint.to_owned()),
        now_ms: now_ms(),
        lease_ms: tunables(asked.env).lease_ms,
    };
    let decision: Decision = match guard::call(asked.env, &object, &peek).await {
        Ok(decision) => decision,
        Err(error) => return asked.conflict(error, None).map(Gate::Answer),
    };
    let seconds = PaymentError::seconds;
    let error = match decision {
        Decision::Fresh => {
            let expiry = Command::ChallengeExpiry {
                now_ms: now_ms(),
                ttl_ms: asked.config.challenge_ttl_ms,
            };
            let expires: ChallengeExpiry = match guard::call(asked.env, &object, &expiry).await {
                Ok(expires) => expires,
                Err(error) => return asked.conflict(error, None).map(Gate::Answer),
            };
            let challenge =
                mpp::challenge_until(&asked.config, &asked.binding(), expires.expires_ms);
            let error = MppError::PaymentRequired;
            let answer = problem(&error, error.problem_type(), Some(&challenge), None);
            return answer.map(Gate::Answer);
        }
        Decision::Redeliver {
            facts,
            row,
            first_delivery,
        } => {
            return Ok(Gate::Again {
                facts,
                row,
                first_delivery,
            });
        }
        Decision::Delivered(_) => PaymentError::Replayed,
        Decision::RouteConflict => PaymentError::IdempotencyConflict,
        Decision::InputConflict => PaymentError::RetryInputInvalid,
        Decision::InProgress { retry_after_ms } => {
            return asked
                .conflict(PaymentError::InProgress, Some(retry_after_ms))
                .map(Gate::Answer)
        }
        Decision::TooEarly { retry_after_ms } => PaymentError::RetryTooEarly {
            retry_after_s: seconds(retry_after_ms),
        },
        _ => PaymentError::InProgress,
    };
    asked.conflict(error, None).map(Gate::Answer)
}

/// The shared challenge expiry the key's object answers.
#[derive(serde::Deserialize)]
struct ChallengeExpiry {
    expires_ms: u64,
}

/// The payment gate: challenge, credential, key record, chain, challenge record, settled.
async fn gate(req: &Request, asked: &Asked<'_>) -> Result<Gate> {
    let Some(header) = req.headers().get("authorization")? else {
        return unpaid(asked).await;
    };
    let bound = match parse_authorization(&header)
        .and_then(|credential| check_credential(&asked.config, &asked.binding(), &credential))
    {
        Ok(bound) => bound,
        Err(error) => return asked.refuse(error).map(Gate::Answer),
    };
    let now = now_ms();
    if now > bound.expires_ms.saturating_add(RECORD_TTL_MS) {
        // Its records are gone: it cannot be told from a replay any more.
        return asked.refuse(MppError::ChallengeExpired).map(Gate::Answer);
    }
    let tunables = tunables(asked.env);
    let decision: Decision = match guard::call(
        asked.env,
        &guard::key_object(asked.key),
        &Command::Begin {
            route_id: asked.route_id.to_owned(),
            fingerprint: Some(asked.fingerprint.to_owned()),
            claim_key: bound.tx_hash.clone(),
            now_ms: now,
            lease_ms: tunables.lease_ms,
            max_attempts: tunables.attempts_per_key,
        },
    )
    .await
    {
        Ok(decision) => decision,
        Err(error) => return asked.conflict(error, None).map(Gate::Answer),
    };
    match decision {
        // Claimed (or a holder vanished between settling and settled: nothing was broadcast by
        // us, so the chain check is simply repeated).
        Decision::Fresh | Decision::Reconcile => {}
        Decision::Resume(facts) => return Ok(Gate::Paid(facts)),
        Decision::Redeliver { facts, row, .. } => {
            return Ok(Gate::Again {
                facts,
                row,
                first_delivery: None,
            })
        }
        Decision::Delivered(_) => {
            return asked
                .conflict(PaymentError::Replayed, None)
                .map(Gate::Answer)
        }
        Decision::RouteConflict => {
            return asked
                .conflict(PaymentError::IdempotencyConflict, None)
                .map(Gate::Answer)
        }
        Decision::InputConflict => {
            return asked
                .conflict(PaymentError::RetryInputInvalid, None)
                .map(Gate::Answer)
        }
        Decision::ProofConflict => {
            return asked
                .conflict(PaymentError::ProofConflict, None)
                .map(Gate::Answer)
        }
        Decision::InProgress { retry_after_ms } => {
            return asked
                .conflict(PaymentError::InProgress, Some(retry_after_ms))
                .map(Gate::Answer)
        }
        Decision::TooEarly { retry_after_ms } | Decision::RateLimited { retry_after_ms } => {
            let error = if matches!(decision, Decision::TooEarly { .. }) {
                PaymentError::RetryTooEarly {
                    retry_after_s: PaymentError::seconds(retry_after_ms),
                }
            } else {
                PaymentError::RateLimited {
                    retry_after_s: PaymentError::seconds(retry_after_ms),
                }
            };
            return asked.conflict(error, None).map(Gate::Answer);
        }
    }
    let payer = match verify_on_chain(asked, &bound).await {
        Ok(payer) => payer,
        Err(error) => {
            asked.release(&bound.tx_hash).await;
            return asked.refuse(error).map(Gate::Answer);
        }
    };
    // One transaction per challenge, recorded in the challenge's own object.
    let used = guard::call::<TransitionAnswer>(
        asked.env,
        &guard::challenge_object(&bound.challenge_id),
        &Command::ChallengeUse {
            tx_hash: bound.tx_hash.clone(),
            now_ms: now_ms(),
        },
    )
    .await;
    match used {
        Ok(TransitionAnswer { ok: true, .. }) => {}
        Ok(_) => {
            asked.release(&bound.tx_hash).await;
            return asked.refuse(MppError::ChallengeUsed).map(Gate::Answer);
        }
        Err(error) => {
            asked.release(&bound.tx_hash).await;
            return asked.conflict(error, None).map(Gate::Answer);
        }
    }
    let facts = SettledFacts {
        tx_sig: bound.tx_hash.clone(),
        house: is_house(asked.env, &payer),
        payer,
        fee_lamports: 0,
        settled_ms: now_ms(),
    };
    let settling = asked
        .transition(Command::Settling {
            claim_key: bound.tx_hash.clone(),
            now_ms: now_ms(),
            lease_ms: tunables.lease_ms,
            row: Some(asked.row.clone()),
        })
        .await;
    let settled = settling
        && asked
            .transition(Command::Settled {
                claim_key: bound.tx_hash.clone(),
                facts: facts.clone(),
            })
            .await;
    if !settled {
        // The payment is verified and stays bound to this challenge; the key's record could not
        // say so. The same credential retried is verified again and delivered.
        return asked
            .conflict(PaymentError::StateUnavailable, None)
            .map(Gate::Answer);
    }
    Ok(Gate::Paid(facts))
}

/// The MPP pack pipeline after free validation (see the module note for the order).
pub async fn paid(
    op: &'static PaidOp,
    env: &Env,
    call: &PaidCall<'_>,
    key: &str,
    runnable: &dyn Runnable,
) -> std::result::Result<Response, Refused> {
    let family = op.family;
    let signer = config::signer(env)?;
    let now = now_ms();
    let delivery = match run_engine(op, runnable, &signer, now)? {
        Chargeable::Yes(delivery) => delivery,
        // Could-not-measure: delivered, signed, and never asked to be paid for.
        Chargeable::No(unpaid) => return Ok(unpaid),
    };
    let answer = |error: MppError| -> std::result::Result<Response, Refused> {
        Ok(problem(&error, error.problem_type(), None, None)?)
    };
    let config = match load_config(env, call.req) {
        Ok(config) => config,
        Err(error) => return answer(error),
    };
    let (Some(secret), Some(fingerprint)) = (fingerprint_secret(env), call.fingerprint) else {
        return answer(MppError::ConfigInvalid);
    };
    let row = ledger::pending_row(
        family,
        &config.network(),
        call.price_units,
        now,
        &delivery.ledger,
    );
    let asked = Asked {
        family_id: family.id,
        row,
        env,
        config,
        secret,
        route_id: call.route_id,
        key,
        fingerprint,
        price: call.price_units,
    };
    let gate = gate(call.req, &asked).await?;
    let facts = match gate {
        Gate::Answer(response) => return Ok(response),
        Gate::Again {
            facts,
            row,
            first_delivery,
        } => {
            let object = guard::key_object(key);
            let receipt = mpp::receipt_header(&facts.tx_sig, facts.settled_ms);
            let again = Again {
                row: row.as_ref(),
                facts: &facts,
                first_delivery: first_delivery
                    .as_deref()
                    .map(|claim| (object.as_str(), claim)),
                receipt: ("payment-receipt", receipt),
                fingerprinted: true,
            };
            // The pack's fingerprint proved the body: the engine's answer is the paid one.
            return match redeliver(env, op, runnable, &signer, again).await? {
                Some(response) => Ok(response),
                None => answer_conflict(PaymentError::RedeliveryMismatch),
            };
        }
        Gate::Paid(facts) => facts,
    };
    metrics::payment(family.id, "settled");
    let written = write_row(env, op, &asked.row, &facts).await;
    mark_delivered(
        env,
        &guard::key_object(key),
        &facts.tx_sig,
        family.id,
        written,
    )
    .await;
    let mut response = sign_for(family, delivery.status, delivery.report, &signer)?;
    let _ = response.headers_mut().set(
        "payment-receipt",
        &mpp::receipt_header(&facts.tx_sig, facts.settled_ms),
    );
    Ok(response)
}

/// A conflict of the key's record as a problem (no receipt: the draft forbids one on errors).
fn answer_conflict(error: PaymentError) -> std::result::Result<Response, Refused> {
    Ok(problem(&error, "about:blank", None, None)?)
}
