//! The payment-guard Durable Object: one object per claim key (SHA-256 of a payment's transaction
//! message), holding one record of payment facts only (claim key, route, Idempotency-Key, state,
//! times, settlement facts). Each request reads the record, applies one pure transition from
//! `engine::payment::guard` and writes the result; no other await happens in between, so the
//! runtime's input gate makes every read-modify-write atomic.
//!
//! Protocol (JSON over the stub's fetch, internal only):
//! `{"op":"claim","claim_key","route_id","idempotency_key","now_ms"}` →
//!   `{"decision":"fresh"|"resume"|"replay"|"in_progress"|"bound_elsewhere","facts"?}`;
//! `{"op":"settled","facts":{..}}`, `{"op":"delivered","now_ms"}`, `{"op":"release"}` →
//!   `{"ok":true}` or `{"ok":false,"error":"missing"|"wrong_state"}`.

use crate::engine::payment::guard::{self, ClaimDecision, GuardRecord, SettledFacts};
use serde::{Deserialize, Serialize};
// The durable_object macro expands to wasm_bindgen paths; bring the crate's name into scope.
use worker::wasm_bindgen;
use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

/// wrangler.toml binding name of the guard's namespace.
pub const BINDING: &str = "PAYMENT_GUARD";
const RECORD: &str = "record";

/// A command sent to the guard.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Command {
    Claim {
        claim_key: String,
        route_id: String,
        idempotency_key: String,
        now_ms: u64,
    },
    Settled {
        facts: SettledFacts,
    },
    Delivered {
        now_ms: u64,
    },
    Release,
}

/// The guard's answer to a claim.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimAnswer {
    pub decision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<SettledFacts>,
}

/// The guard's answer to a transition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TransitionAnswer {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[durable_object]
pub struct PaymentGuard {
    state: State,
    #[allow(dead_code)]
    env: Env,
}

impl PaymentGuard {
    async fn record(&self) -> Result<Option<GuardRecord>> {
        self.state.storage().get::<GuardRecord>(RECORD).await
    }

    async fn store(&self, record: Option<GuardRecord>) -> Result<()> {
        match record {
            Some(record) => self.state.storage().put(RECORD, record).await,
            None => self.state.storage().delete(RECORD).await.map(|_| ()),
        }
    }

    async fn transition(
        &self,
        next: std::result::Result<GuardRecord, guard::TransitionError>,
    ) -> Result<Response> {
        let answer = match next {
            Ok(record) => {
                self.store(Some(record)).await?;
                TransitionAnswer {
                    ok: true,
                    error: None,
                }
            }
            Err(error) => TransitionAnswer {
                ok: false,
                error: Some(
                    match error {
                        guard::TransitionError::Missing => "missing",
                        guard::TransitionError::WrongState => "wrong_state",
                    }
                    .to_owned(),
                ),
            },
        };
        Response::from_json(&answer)
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
        let existing = self.record().await?;
        match command {
            Command::Claim {
                claim_key,
                route_id,
                idempotency_key,
                now_ms,
            } => {
                let (decision, record) = guard::claim(
                    existing.as_ref(),
                    &claim_key,
                    &route_id,
                    &idempotency_key,
                    now_ms,
                );
                if record.is_some() {
                    self.store(record).await?;
                }
                let (name, facts) = match decision {
                    ClaimDecision::Fresh => ("fresh", None),
                    ClaimDecision::Resume(facts) => ("resume", Some(facts)),
                    ClaimDecision::Replay => ("replay", None),
                    ClaimDecision::InProgress => ("in_progress", None),
                    ClaimDecision::BoundElsewhere => ("bound_elsewhere", None),
                };
                Response::from_json(&ClaimAnswer {
                    decision: name.to_owned(),
                    facts,
                })
            }
            Command::Settled { facts } => {
                self.transition(guard::settle(existing.as_ref(), facts))
                    .await
            }
            Command::Delivered { now_ms } => {
                self.transition(guard::deliver(existing.as_ref(), now_ms))
                    .await
            }
            Command::Release => {
                self.store(guard::release(existing.as_ref())).await?;
                Response::from_json(&TransitionAnswer {
                    ok: true,
                    error: None,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn commands_have_the_documented_wire_shape() {
        let claim = Command::Claim {
            claim_key: "k".into(),
            route_id: "r".into(),
            idempotency_key: "i".into(),
            now_ms: 5,
        };
        assert_eq!(
            serde_json::to_value(&claim).unwrap(),
            json!({"op":"claim","claim_key":"k","route_id":"r","idempotency_key":"i","now_ms":5})
        );
        assert_eq!(
            serde_json::to_value(Command::Release).unwrap(),
            json!({"op":"release"})
        );
        assert_eq!(
            serde_json::to_value(Command::Delivered { now_ms: 9 }).unwrap(),
            json!({"op":"delivered","now_ms":9})
        );
        let settled: Command = serde_json::from_value(json!({"op":"settled","facts":{
            "tx_sig":"s","payer":"p","fee_lamports":10001,"house":false,"settled_ms":7}}))
        .unwrap();
        assert!(matches!(settled, Command::Settled { facts } if facts.fee_lamports == 10_001));
        assert!(serde_json::from_value::<Command>(json!({"op":"steal"})).is_err());
        let answer = ClaimAnswer {
            decision: "fresh".into(),
            facts: None,
        };
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"decision":"fresh"})
        );
    }
}
