//! The payment-guard Durable Object: one object per Idempotency-Key (`key:<key>`) holding that
//! key's idempotency record (`engine::payment::idempotency`), and one per paying wallet
//! (`wallet:<address>`) holding only the times of its recent payment attempts. Never one global
//! object. Each request reads the record, applies one pure transition and writes the result; no
//! other await happens in between, so the runtime's input gate makes every read-modify-write
//! atomic. A key's record is also its payment's ledger outbox (`engine::payment::outbox`): the
//! alarm writes the row the payment owes whenever the worker could not (D1 failed, or the worker
//! went away after the payment settled), retrying with back-off until D1 confirms. Then it deletes
//! everything the object holds when its time is up: a key's record (and the pack's keyed
//! fingerprint with it) 24 hours after it was created, never while it still owes a row; a
//! wallet's failed-attempt times one attempt window after the last one.
//!
//! Protocol (JSON over the stub's fetch, internal only; each command and each decision is an
//! externally tagged enum, `{"<op>": {…}}`, so neither side buffers a message to find its tag):
//! `{"begin":{route_id, fingerprint?, claim_key, now_ms, lease_ms, max_attempts}}` → a `Decision`
//!   (`"fresh"`, `{"redeliver":{…}}`, `{"in_progress":{retry_after_ms}}`, …);
//! `{"settling"|"settled"|"uncertain"|"delivered"|"release":{claim_key, …}}` →
//!   `{"ok":true}` or `{"ok":false,"error":"not_holder"|"wrong_state"}`;
//! `{"peek":{route_id, fingerprint?, now_ms, lease_ms}}` (a request with no payment) → a
//!   `Decision` (`"fresh"`: answer the challenge);
//! `{"challenge_expiry":{now_ms, ttl_ms}}` → `{"expires_ms"}` (MPP: one challenge per key);
//! `{"wallet_check":{now_ms, max_attempts}}` → `{"ok":bool,"retry_after_ms"?}`;
//! `{"wallet_failure":{now_ms}}` → `{"ok":true}` (a refused or failed attempt counted);
//! `{"bind":{binding}}` (an EVM authorization's object, `evm:<claim key>`) → `{"ok":true}` when the
//!   authorization is unbound (then bound to `binding`, route and key) or bound to the same call,
//!   else `{"ok":false,"error":"bound_elsewhere"}`;
//! `{"challenge_use":{tx_hash, now_ms}}` (MPP, object `mpp:<challenge id>`) → `{"ok":bool}`.
//! The worker's client ([`call`], [`transition`]) is at the end, beside the object it talks to.

use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::idempotency::{
    self, count_attempt, Attempt, KeyRecord, TransitionError, ATTEMPT_WINDOW_MS, RECORD_TTL_MS,
};
use crate::engine::payment::idempotency::{AlarmStep, Decision};
use crate::engine::payment::outbox::{self, PendingRow};
use crate::engine::payment::PaymentError;
use serde::{Deserialize, Serialize};
use std::time::Duration;
// The durable_object macro expands to wasm_bindgen paths; bring the crate's name into scope.
use worker::wasm_bindgen;
use worker::wasm_bindgen::JsValue;
use worker::{
    durable_object, DurableObject, Env, Headers, Method, Request, RequestInit, Response, Result,
    State,
};

/// wrangler.toml binding name of the guard's namespace.
pub const BINDING: &str = "PAYMENT_GUARD";
/// A key's record, as JSON text. (Objects are named by `opaque_name` since records moved to text,
/// so no object holds a record in the earlier structured form.)
const RECORD: &str = "record_json";
const ATTEMPTS: &str = "attempts";
const CALL_BINDING: &str = "binding";
const CHALLENGE_USE: &str = "challenge_use";
const CHALLENGE_EXPIRY: &str = "challenge_expiry";

/// The object name of a key's record.
pub fn key_object(idempotency_key: &str) -> String {
    crate::engine::payment::binding::key_record(idempotency_key)
}

/// The object name of an MPP challenge's use record.
pub fn challenge_object(challenge_id: &str) -> String {
    format!("mpp:{challenge_id}")
}

/// The object name of a wallet's attempt count.
pub fn wallet_object(wallet: &str) -> String {
    format!("wallet:{wallet}")
}

/// A command sent to the guard.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    Begin {
        route_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fingerprint: Option<String>,
        claim_key: String,
        now_ms: u64,
        lease_ms: u64,
        max_attempts: u32,
    },
    Settling {
        claim_key: String,
        now_ms: u64,
        lease_ms: u64,
        /// The ledger row the payment will owe (its closed fields).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        row: Option<PendingRow>,
    },
    Settled {
        claim_key: String,
        facts: SettledFacts,
    },
    Uncertain {
        claim_key: String,
        now_ms: u64,
        retry_after_ms: u64,
    },
    Delivered {
        claim_key: String,
        /// Whether the worker's own ledger write succeeded (else the alarm writes the row).
        row_written: bool,
    },
    Release {
        claim_key: String,
    },
    /// A request under a key that carries no payment (the pack's, on either rail).
    Peek {
        route_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fingerprint: Option<String>,
        now_ms: u64,
        lease_ms: u64,
    },
    /// The expiry of the challenge the key's unpaid requests share.
    ChallengeExpiry {
        now_ms: u64,
        ttl_ms: u64,
    },
    /// May this wallet attempt a payment? (Counts nothing.)
    WalletCheck {
        now_ms: u64,
        max_attempts: u32,
    },
    /// One of this wallet's attempts was refused, unverified or failed: it counts.
    WalletFailure {
        now_ms: u64,
    },
    Bind {
        binding: String,
    },
    /// MPP: the challenge's object (`mpp:<challenge id>`) records the transaction that paid it.
    ChallengeUse {
        tx_hash: String,
        now_ms: u64,
    },
}

/// The guard's answer to a transition or a wallet attempt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TransitionAnswer {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl TransitionAnswer {
    fn ok() -> Self {
        Self {
            ok: true,
            error: None,
            retry_after_ms: None,
        }
    }
}

#[durable_object]
pub struct PaymentGuard {
    state: State,
    env: Env,
}

fn now_ms() -> u64 {
    worker::Date::now().as_millis()
}

impl PaymentGuard {
    async fn record(&self) -> Result<Option<KeyRecord>> {
        // JSON text: serde_json keeps every i64 of a row exact (the runtime's structured values
        // hold integers only up to 2^53).
        let text = self.state.storage().get::<String>(RECORD).await?;
        text.map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|_| worker::Error::RustError("record".into()))
    }

    /// Stores the record and sets the alarm to its next step: an owed row at once (or after the
    /// settling worker's lease), else the record's 24 hours.
    async fn put_record(&self, record: &KeyRecord) -> Result<()> {
        let text = serde_json::to_string(record)?;
        self.state.storage().put(RECORD, text).await?;
        let now = now_ms();
        let at = match idempotency::alarm_step(record, now) {
            AlarmStep::Wait { at_ms } => at_ms,
            AlarmStep::WriteRow { .. } | AlarmStep::Delete => {
                now.saturating_add(outbox::retry_delay_ms(record.row_failures))
            }
        };
        self.state
            .storage()
            .set_alarm(Duration::from_millis(at.saturating_sub(now).max(1)))
            .await
    }

    /// Stores the record a decision changed (a new record's alarm: its 24 hours, or the row it
    /// owes) and answers the decision.
    async fn decided(&self, (decision, record): (Decision, Option<KeyRecord>)) -> Result<Response> {
        if let Some(record) = record {
            self.put_record(&record).await?;
        }
        Response::from_json(&decision)
    }

    async fn transition(
        &self,
        next: std::result::Result<KeyRecord, TransitionError>,
    ) -> Result<Response> {
        let answer = match next {
            Ok(record) => {
                self.put_record(&record).await?;
                TransitionAnswer::ok()
            }
            Err(error) => TransitionAnswer {
                ok: false,
                error: Some(
                    match error {
                        TransitionError::NotHolder => "not_holder",
                        TransitionError::WrongState => "wrong_state",
                    }
                    .to_owned(),
                ),
                retry_after_ms: None,
            },
        };
        Response::from_json(&answer)
    }

    /// Binds an EVM authorization to its first call (kept as long as a record: the authorization
    /// itself expires within `maxTimeoutSeconds`, long before).
    async fn bind(&self, binding: String) -> Result<Response> {
        let storage = self.state.storage();
        let answer = match storage.get::<String>(CALL_BINDING).await? {
            Some(bound) if bound != binding => TransitionAnswer {
                ok: false,
                error: Some("bound_elsewhere".to_owned()),
                retry_after_ms: None,
            },
            Some(_) => TransitionAnswer::ok(),
            None => {
                storage.put(CALL_BINDING, binding).await?;
                storage
                    .set_alarm(Duration::from_millis(RECORD_TTL_MS))
                    .await?;
                TransitionAnswer::ok()
            }
        };
        Response::from_json(&answer)
    }

    /// The times of a wallet's counted (failed) attempts.
    async fn attempts(&self) -> Result<Vec<u64>> {
        let stored = self.state.storage().get::<Vec<u64>>(ATTEMPTS).await?;
        Ok(stored.unwrap_or_default())
    }

    /// A wallet's failed attempts in the window: refused past `max_attempts` (nothing counted
    /// here: only a failure counts, in [`Self::wallet_failure`]).
    async fn wallet_check(&self, now_ms: u64, max_attempts: u32) -> Result<Response> {
        let mut attempts = self.attempts().await?;
        // Counted into a copy that is not stored: the check alone.
        let answer = match count_attempt(&mut attempts, now_ms, max_attempts) {
            Ok(()) => TransitionAnswer::ok(),
            Err(wait) => TransitionAnswer {
                ok: false,
                error: Some("rate_limited".to_owned()),
                retry_after_ms: Some(wait),
            },
        };
        Response::from_json(&answer)
    }

    async fn wallet_failure(&self, now_ms: u64) -> Result<Response> {
        let mut attempts = self.attempts().await?;
        let _ = count_attempt(&mut attempts, now_ms, u32::MAX);
        self.state.storage().put(ATTEMPTS, attempts).await?;
        self.state
            .storage()
            .set_alarm(Duration::from_millis(ATTEMPT_WINDOW_MS))
            .await?;
        Response::from_json(&TransitionAnswer::ok())
    }

    /// The challenge the key's unpaid requests share (kept until it expires).
    async fn challenge_expiry(&self, now_ms: u64, ttl_ms: u64) -> Result<Response> {
        let storage = self.state.storage();
        let issued = storage.get::<u64>(CHALLENGE_EXPIRY).await?;
        let expires_ms = idempotency::challenge_expiry(issued, now_ms, ttl_ms);
        if issued != Some(expires_ms) {
            storage.put(CHALLENGE_EXPIRY, expires_ms).await?;
            if self.record().await?.is_none() {
                storage
                    .set_alarm(Duration::from_millis(ttl_ms.max(1)))
                    .await?;
            }
        }
        Response::from_json(&serde_json::json!({ "expires_ms": expires_ms }))
    }

    /// The alarm: write the row the record owes (then plan again), or delete everything when the
    /// object's time is up. An object without a record (a wallet's, an authorization's, a
    /// challenge's) holds nothing that outlives its alarm.
    async fn on_alarm(&self) -> Result<()> {
        let Some(record) = self.record().await? else {
            return self.state.storage().delete_all().await;
        };
        match idempotency::alarm_step(&record, now_ms()) {
            AlarmStep::Delete => self.state.storage().delete_all().await,
            AlarmStep::Wait { .. } => self.put_record(&record).await,
            AlarmStep::WriteRow { delivered } => {
                let (Some(row), Some(facts)) = (&record.row, &record.settled) else {
                    return self.put_record(&record).await;
                };
                let written = crate::edge::ledger::write(&self.env, row, facts, delivered)
                    .await
                    .is_ok();
                if !written {
                    worker::console_error!("payment guard: ledger row not written, retrying");
                }
                self.put_record(&idempotency::row_outcome(&record, written))
                    .await
            }
        }
    }
}

impl PaymentGuard {
    /// Binds an MPP challenge to the transaction that paid it (kept 24 hours).
    async fn challenge_use(&self, tx_hash: &str) -> Result<Response> {
        let existing = self.state.storage().get::<String>(CHALLENGE_USE).await?;
        let (accepted, record) =
            crate::engine::payment::mpp::use_challenge(existing.as_deref(), tx_hash);
        if let Some(record) = record {
            self.state.storage().put(CHALLENGE_USE, record).await?;
            self.state
                .storage()
                .set_alarm(Duration::from_millis(RECORD_TTL_MS))
                .await?;
        }
        Response::from_json(&TransitionAnswer {
            ok: accepted,
            error: (!accepted).then(|| "challenge_used".to_owned()),
            retry_after_ms: None,
        })
    }
}

impl DurableObject for PaymentGuard {
    fn new(state: State, env: Env) -> Self {
        Self { state, env }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        // Read as text by serde_json: the runtime's own JSON reading goes through JavaScript
        // numbers, which hold a row's i64 figures only up to 2^53.
        let text = req.text().await.unwrap_or_default();
        let Ok(command) = serde_json::from_str::<Command>(&text) else {
            return Response::error("bad guard command", 400);
        };
        match command {
            Command::WalletCheck {
                now_ms,
                max_attempts,
            } => return self.wallet_check(now_ms, max_attempts).await,
            Command::WalletFailure { now_ms } => return self.wallet_failure(now_ms).await,
            Command::ChallengeExpiry { now_ms, ttl_ms } => {
                return self.challenge_expiry(now_ms, ttl_ms).await
            }
            _ => {}
        }
        if let Command::Bind { binding } = command {
            return self.bind(binding).await;
        }
        if let Command::ChallengeUse { tx_hash, .. } = command {
            return self.challenge_use(&tx_hash).await;
        }
        let existing = self.record().await?;
        let existing = existing.as_ref();
        match command {
            Command::Begin {
                route_id,
                fingerprint,
                claim_key,
                now_ms,
                lease_ms,
                max_attempts,
            } => {
                let attempt = Attempt {
                    route_id: &route_id,
                    fingerprint: fingerprint.as_deref(),
                    claim_key: &claim_key,
                    now_ms,
                    lease_ms,
                    max_attempts,
                };
                self.decided(idempotency::begin(existing, &attempt)).await
            }
            Command::Peek {
                route_id,
                fingerprint,
                now_ms,
                lease_ms,
            } => {
                let fingerprint = fingerprint.as_deref();
                self.decided(idempotency::peek(
                    existing,
                    &route_id,
                    fingerprint,
                    now_ms,
                    lease_ms,
                ))
                .await
            }
            Command::Settling {
                claim_key,
                now_ms,
                lease_ms,
                row,
            } => {
                self.transition(idempotency::settling(
                    existing, &claim_key, now_ms, lease_ms, row,
                ))
                .await
            }
            Command::Settled { claim_key, facts } => {
                self.transition(idempotency::settled(existing, &claim_key, facts))
                    .await
            }
            Command::Uncertain {
                claim_key,
                now_ms,
                retry_after_ms,
            } => {
                self.transition(idempotency::uncertain(
                    existing,
                    &claim_key,
                    now_ms,
                    retry_after_ms,
                ))
                .await
            }
            Command::Delivered {
                claim_key,
                row_written,
            } => {
                self.transition(idempotency::delivered(existing, &claim_key, row_written))
                    .await
            }
            Command::Release { claim_key } => {
                if let Some(record) = idempotency::release(existing, &claim_key) {
                    self.put_record(&record).await?;
                }
                Response::from_json(&TransitionAnswer::ok())
            }
            Command::WalletCheck { .. }
            | Command::WalletFailure { .. }
            | Command::ChallengeExpiry { .. }
            | Command::Bind { .. }
            | Command::ChallengeUse { .. } => Response::error("unreachable", 500),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.on_alarm().await?;
        Response::ok("")
    }
}

/// The worker's side of the guard: one command to the named object, its answer read as `T`.
/// Any failure on the way is `StateUnavailable` (the runtime's text is dropped).
pub async fn call<T: serde::de::DeserializeOwned>(
    env: &Env,
    object: &str,
    command: &Command,
) -> std::result::Result<T, PaymentError> {
    let answer = call_bytes(env, object, command).await?;
    serde_json::from_slice(&answer).map_err(|_| PaymentError::StateUnavailable)
}

/// The exchange itself, once for every answer type (only the reading is generic: each
/// instantiation of a future this size costs the bundle ~15 KB).
async fn call_bytes(
    env: &Env,
    object: &str,
    command: &Command,
) -> std::result::Result<Vec<u8>, PaymentError> {
    let name = opaque_name(env, object).ok_or(PaymentError::StateUnavailable)?;
    let call = async {
        let stub = env
            .durable_object(BINDING)?
            .id_from_name(&name)?
            .get_stub()?;
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(JsValue::from_str(&serde_json::to_string(command)?)));
        let request = Request::new_with_init("https://payment-guard/", &init)?;
        let mut response = stub.fetch_with_request(request).await?;
        response.bytes().await
    };
    call.await.map_err(|_| PaymentError::StateUnavailable)
}

/// The name a guard object is created under: a keyed HMAC of its logical name (`key:<key>`,
/// `wallet:<address>`, …) under the server secret, never the name itself. The runtime keeps an
/// object's name beside its storage, and a logical name holds a submitted Idempotency-Key.
fn opaque_name(env: &Env, object: &str) -> Option<String> {
    let secret = crate::edge::payment::binding::fingerprint_secret(env)?;
    let mac = crate::engine::payment::hmac::hmac_sha256(
        &secret,
        &[b"context-meter guard object v1\n", object.as_bytes()],
    );
    Some(crate::engine::sign::hex(&mac))
}

/// A state transition of the named record: true when the guard applied it.
pub async fn transition(env: &Env, object: &str, command: Command) -> bool {
    call::<TransitionAnswer>(env, object, &command)
        .await
        .is_ok_and(|a| a.ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::payment::idempotency::Decision;
    use serde_json::json;

    #[test]
    fn commands_and_answers_have_the_documented_wire_shape() {
        let begin = Command::Begin {
            route_id: "r".into(),
            fingerprint: None,
            claim_key: "k".into(),
            now_ms: 5,
            lease_ms: 9,
            max_attempts: 3,
        };
        assert_eq!(
            serde_json::to_value(&begin).unwrap(),
            json!({"begin": {"route_id":"r","claim_key":"k","now_ms":5,"lease_ms":9,"max_attempts":3}})
        );
        assert_eq!(
            serde_json::to_value(Command::Release {
                claim_key: "k".into()
            })
            .unwrap(),
            json!({"release": {"claim_key":"k"}})
        );
        let settled: Command = serde_json::from_value(json!({"settled": {"claim_key":"k","facts":{
            "tx_sig":"s","payer":"p","fee_lamports":10001,"house":false,"settled_ms":7}}}))
        .unwrap();
        assert!(matches!(settled, Command::Settled { facts, .. } if facts.fee_lamports == 10_001));
        assert!(serde_json::from_value::<Command>(json!({"steal": {}})).is_err());
        assert!(serde_json::from_value::<Command>(json!({"op": "begin"})).is_err());
        assert_eq!(
            serde_json::to_value(Decision::InProgress { retry_after_ms: 4 }).unwrap(),
            json!({"in_progress": {"retry_after_ms": 4}})
        );
        assert_eq!(
            serde_json::to_value(Decision::Fresh).unwrap(),
            json!("fresh")
        );
        let back: Decision = serde_json::from_value(json!({"redeliver": {"facts": {
            "tx_sig":"s","payer":"p","fee_lamports":0,"house":false,"settled_ms":7},
            "row": {"table":"t","network":"n","price_units":1,"ts_ms":2,"columns":[["op","pack"],["n",3],["z",null]]},
            "first_delivery":null}}))
        .unwrap();
        let Decision::Redeliver { row: Some(row), .. } = back else {
            panic!("a re-delivery with its row");
        };
        assert_eq!(
            row.columns,
            vec![
                (
                    "op".to_owned(),
                    crate::engine::LedgerValue::Text("pack".into())
                ),
                ("n".to_owned(), crate::engine::LedgerValue::Int(3)),
                ("z".to_owned(), crate::engine::LedgerValue::Null),
            ]
        );
        assert_eq!(
            serde_json::to_value(Command::Bind {
                binding: "r\nk".into()
            })
            .unwrap(),
            json!({"bind": {"binding":"r\nk"}})
        );
        assert_eq!(key_object("abc"), "key:abc");
        assert_eq!(wallet_object("W"), "wallet:W");
        assert_eq!(challenge_object("id"), "mpp:id");
        assert_eq!(
            serde_json::to_value(Command::ChallengeUse {
                tx_hash: "0x1".into(),
                now_ms: 3
            })
            .unwrap(),
            json!({"challenge_use": {"tx_hash":"0x1","now_ms":3}})
        );
    }
}
