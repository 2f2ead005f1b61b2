//! The free-tier `Allowance` Durable Object: one object per (family, caller wallet). The decision is
//! made synchronously on the in-memory usage before any await, so concurrent calls from one wallet
//! are decided one at a time, exactly; the usage is then persisted. Stores counts and timestamps only.
//! The worker's client ([`spend`]) is at the end, beside the object it talks to.

use crate::edge::error::EdgeError;
use crate::engine::allowance::{decide, Decision, Limits, Usage};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use worker::{
    durable_object, wasm_bindgen, DurableObject, Env, Method, Request, RequestInit, Response,
    Result, State,
};

const USAGE_KEY: &str = "usage";

/// What the worker asks the object: the time of the call and the limits in force.
#[derive(Debug, Serialize, Deserialize)]
pub struct AllowanceQuery {
    pub now_ms: u64,
    pub limits: Limits,
}

#[durable_object]
pub struct Allowance {
    state: State,
    usage: RefCell<Usage>,
    loaded: Cell<bool>,
}

impl DurableObject for Allowance {
    fn new(state: State, _env: Env) -> Self {
        Allowance {
            state,
            usage: RefCell::new(Usage::default()),
            loaded: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let query: AllowanceQuery = req.json().await?;
        if !self.loaded.get() {
            let stored: Option<Usage> = self.state.storage().get(USAGE_KEY).await.ok().flatten();
            // Another call may have loaded and advanced the usage while this one awaited storage.
            if !self.loaded.get() {
                *self.usage.borrow_mut() = stored.unwrap_or_default();
                self.loaded.set(true);
            }
        }
        let (decision, next) = decide(*self.usage.borrow(), query.now_ms, query.limits);
        if decision.allowed() {
            *self.usage.borrow_mut() = next;
            self.state.storage().put(USAGE_KEY, next).await?;
        }
        Response::from_json::<Decision>(&decision)
    }
}

/// Asks the (family, wallet) object for one free call under `limits`: its decision, or
/// `AllowanceUnavailable` when the object cannot be reached or read.
pub async fn spend(
    env: &Env,
    family_id: &str,
    caller: &str,
    now_ms: u64,
    limits: Limits,
) -> std::result::Result<Decision, EdgeError> {
    let ask = async {
        let stub = env
            .durable_object("ALLOWANCE")?
            .id_from_name(&format!("{family_id}:{caller}"))?
            .get_stub()?;
        let query = serde_json::to_string(&AllowanceQuery { now_ms, limits })?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post).with_body(Some(query.into()));
        let request = Request::new_with_init("https://allowance/", &init)?;
        stub.fetch_with_request(request)
            .await?
            .json::<Decision>()
            .await
    };
    ask.await.map_err(|_| EdgeError::AllowanceUnavailable)
}
