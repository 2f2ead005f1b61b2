//! The payment-guard Durable Object: one object per Idempotency-Key (`key:<key>`) holding that
//! key's idempotency record (`engine::payment::idempotency`), and one per paying wallet
//! (`wallet:<address>`) holding only the times of its recent payment attempts. Never one global
//! object. Each request reads the record, applies one pure transition and writes the result; no
//! other await happens in between, so the runtime's input gate makes every read-modify-write
//! atomic. An alarm deletes everything the object holds when its time is up: a key's record (and
//! the pack's keyed fingerprint with it) 24 hours after it was created, a wallet's attempt times
//! one attempt window after the last one.
//!
//! Protocol (JSON over the stub's fetch, internal only):
//! `{"op":"begin","route_id","fingerprint"?,"claim_key","now_ms","lease_ms","max_attempts"}` →
//!   a `Decision` (`{"decision":"fresh"|"resume"|"reconcile"|…, …}`);
//! `{"op":"settling"|"settled"|"uncertain"|"delivered"|"release","claim_key",…}` →
//!   `{"ok":true}` or `{"ok":false,"error":"not_holder"|"wrong_state"}`;
//! `{"op":"wallet_attempt","now_ms","max_attempts"}` → `{"ok":bool,"retry_after_ms"?}`;
//! `{"op":"bind","binding"}` (an EVM authorization's object, `evm:<claim key>`) → `{"ok":true}` when
//!   the authorization is unbound (then bound to `binding`, route and key) or bound to the same call,
//!   else `{"ok":false,"error":"bound_elsewhere"}`.
//! `{"op":"challenge_use","tx_hash","now_ms"}` (MPP, object `mpp:<challenge id>`) → `{"ok":bool}`.
//! The worker's client ([`call`], [`transition`]) is at the end, beside the object it talks to.

use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::idempotency::{
    self, count_attempt, Attempt, KeyRecord, TransitionError, ATTEMPT_WINDOW_MS, RECORD_TTL_MS,
};
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
const RECORD: &str = "record";
const ATTEMPTS: &str = "attempts";
const CALL_BINDING: &str = "binding";
const CHALLENGE_USE: &str = "challenge_use";

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
#[serde(tag = "op", rename_all = "snake_case")]
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
    },
    Release {
        claim_key: String,
    },
    WalletAttempt {
        now_ms: u64,
        max_attempts: u32,
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
    #[allow(dead_code)]
    env: Env,
}

impl PaymentGuard {
    async fn record(&self) -> Result<Option<KeyRecord>> {
        self.state.storage().get::<KeyRecord>(RECORD).await
    }

    async fn transition(
        &self,
        next: std::result::Result<KeyRecord, TransitionError>,
    ) -> Result<Response> {
        let answer = match next {
            Ok(record) => {
                self.state.storage().put(RECORD, record).await?;
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

    async fn wallet_attempt(&self, now_ms: u64, max_attempts: u32) -> Result<Response> {
        let mut attempts = self
            .state
            .storage()
            .get::<Vec<u64>>(ATTEMPTS)
            .await?
            .unwrap_or_default();
        let answer = match count_attempt(&mut attempts, now_ms, max_attempts) {
            Ok(()) => {
                self.state.storage().put(ATTEMPTS, attempts).await?;
                self.state
                    .storage()
                    .set_alarm(Duration::from_millis(ATTEMPT_WINDOW_MS))
                    .await?;
                TransitionAnswer::ok()
            }
            Err(wait) => TransitionAnswer {
                ok: false,
                error: Some("rate_limited".to_owned()),
                retry_after_ms: Some(wait),
            },
        };
        Response::from_json(&answer)
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
        let Ok(command) = req.json::<Command>().await else {
            return Response::error("bad guard command", 400);
        };
        if let Command::WalletAttempt {
            now_ms,
            max_attempts,
        } = command
        {
            return self.wallet_attempt(now_ms, max_attempts).await;
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
                let (decision, record) = idempotency::begin(existing, &attempt);
                if let Some(record) = record {
                    let created = record.created_ms;
                    let new_record = existing.map(|r| r.created_ms) != Some(created);
                    self.state.storage().put(RECORD, record).await?;
                    if new_record {
                        // The record (and the pack's fingerprint in it) goes 24 hours after it began.
                        self.state
                            .storage()
                            .set_alarm(Duration::from_millis(RECORD_TTL_MS))
                            .await?;
                    }
                }
                Response::from_json(&decision)
            }
            Command::Settling {
                claim_key,
                now_ms,
                lease_ms,
            } => {
                self.transition(idempotency::settling(
                    existing, &claim_key, now_ms, lease_ms,
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
            Command::Delivered { claim_key } => {
                self.transition(idempotency::delivered(existing, &claim_key))
                    .await
            }
            Command::Release { claim_key } => {
                if let Some(record) = idempotency::release(existing, &claim_key) {
                    self.state.storage().put(RECORD, record).await?;
                }
                Response::from_json(&TransitionAnswer::ok())
            }
            Command::WalletAttempt { .. } | Command::Bind { .. } | Command::ChallengeUse { .. } => {
                Response::error("unreachable", 500)
            }
        }
    }

    async fn alarm(&self) -> Result<Response> {
        // Time is up: the key's record (fingerprint included) or the wallet's attempt times go.
        self.state.storage().delete_all().await?;
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
    let call = async {
        let stub = env
            .durable_object(BINDING)?
            .id_from_name(object)?
            .get_stub()?;
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(JsValue::from_str(&serde_json::to_string(command)?)));
        let request = Request::new_with_init("https://payment-guard/", &init)?;
        let mut response = stub.fetch_with_request(request).await?;
        response.json::<T>().await
    };
    call.await.map_err(|_| PaymentError::StateUnavailable)
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
            json!({"op":"begin","route_id":"r","claim_key":"k","now_ms":5,"lease_ms":9,"max_attempts":3})
        );
        assert_eq!(
            serde_json::to_value(Command::Release {
                claim_key: "k".into()
            })
            .unwrap(),
            json!({"op":"release","claim_key":"k"})
        );
        let settled: Command =
            serde_json::from_value(json!({"op":"settled","claim_key":"k","facts":{
            "tx_sig":"s","payer":"p","fee_lamports":10001,"house":false,"settled_ms":7}}))
            .unwrap();
        assert!(matches!(settled, Command::Settled { facts, .. } if facts.fee_lamports == 10_001));
        assert!(serde_json::from_value::<Command>(json!({"op":"steal"})).is_err());
        assert_eq!(
            serde_json::to_value(Decision::InProgress { retry_after_ms: 4 }).unwrap(),
            json!({"decision":"in_progress","retry_after_ms":4})
        );
        assert_eq!(
            serde_json::to_value(Decision::Fresh).unwrap(),
            json!({"decision":"fresh"})
        );
        assert_eq!(
            serde_json::to_value(Command::Bind {
                binding: "r\nk".into()
            })
            .unwrap(),
            json!({"op":"bind","binding":"r\nk"})
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
            json!({"op":"challenge_use","tx_hash":"0x1","now_ms":3})
        );
    }
}
