//! `GET /ready`: can this deployment take money now? Free, no secrets, cached per isolate for
//! [`CACHE_MS`]. Per rail: configured, the facilitator's `/supported` lists our scheme and network,
//! the chain's RPC answers (and is the chain configured); then D1, the Durable Objects and the
//! signing key. 200 when every configured rail can take money and the shared pieces answer, else
//! 503. Every check's result is a closed code; nothing from the environment is echoed but the
//! public network ids.

use crate::edge::error::Refused;
use crate::edge::payment::facilitator::{post_json, Facilitator};
use crate::edge::{config, guard, respond};
use crate::engine::payment::facilitator::supports_network;
use crate::engine::payment::mpp::chain::{chain_id_request, read_chain_id};
use serde_json::{json, Value};
use std::cell::RefCell;
use worker::{Date, Env, Response};

/// How long one readiness answer is reused in an isolate.
pub const CACHE_MS: u64 = 10_000;

thread_local! {
    static CACHED: RefCell<Option<(u64, u16, Value)>> = const { RefCell::new(None) };
}

/// One check's closed outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Ok,
    NotConfigured,
    ConfigInvalid,
    FacilitatorUnavailable,
    SchemeUnsupported,
    RpcUnavailable,
    ChainMismatch,
    Unavailable,
}

impl Check {
    fn code(self) -> &'static str {
        match self {
            Check::Ok => "ok",
            Check::NotConfigured => "not_configured",
            Check::ConfigInvalid => "config_invalid",
            Check::FacilitatorUnavailable => "facilitator_unavailable",
            Check::SchemeUnsupported => "scheme_unsupported",
            Check::RpcUnavailable => "rpc_unavailable",
            Check::ChainMismatch => "chain_mismatch",
            Check::Unavailable => "unavailable",
        }
    }
}

/// The facilitator's `/supported` for `network`.
async fn facilitator_check(facilitator: &Facilitator, network: &str) -> Check {
    match facilitator.supported().await {
        Ok(body) if supports_network(&body, network) => Check::Ok,
        Ok(_) => Check::SchemeUnsupported,
        Err(_) => Check::FacilitatorUnavailable,
    }
}

/// An EVM-style node at `url` on chain `chain_id` (`eth_chainId`).
async fn evm_rpc_check(url: Option<String>, chain_id: u64) -> Check {
    let Some(url) = url else {
        return Check::NotConfigured;
    };
    match post_json(&url, &chain_id_request()).await.ok() {
        Some(body) => match read_chain_id(&body) {
            Some(id) if id == chain_id => Check::Ok,
            Some(_) => Check::ChainMismatch,
            None => Check::RpcUnavailable,
        },
        None => Check::RpcUnavailable,
    }
}

/// A Solana node at `url` (`getHealth`).
async fn solana_rpc_check(url: Option<String>) -> Check {
    let Some(url) = url else {
        return Check::NotConfigured;
    };
    let health = json!({"jsonrpc": "2.0", "id": 1, "method": "getHealth"});
    let answered = post_json(&url, &health)
        .await
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| v.get("result").and_then(Value::as_str) == Some("ok"));
    if answered {
        Check::Ok
    } else {
        Check::RpcUnavailable
    }
}

/// A rail's checks as served, and whether it can take money.
fn rail(network: &str, checks: &[(&str, Check)]) -> (Value, bool) {
    let ready = checks.iter().all(|(_, c)| *c == Check::Ok);
    let mut entry = json!({"network": network, "ready": ready});
    for (name, check) in checks {
        entry[*name] = Value::from(check.code());
    }
    (entry, ready)
}

/// The x402 rails: Solana, then each EVM network offered.
async fn x402_rails(env: &Env) -> (Vec<Value>, bool) {
    let network = config::var(env, "NETWORK");
    let facilitator = Facilitator::from_env(env);
    let (Some(network), Ok(facilitator)) = (network, facilitator) else {
        let (entry, _) = rail("solana", &[("configured", Check::ConfigInvalid)]);
        return (vec![entry], false);
    };
    let mut rails = Vec::new();
    let mut all = true;
    let solana = [
        ("configured", Check::Ok),
        (
            "facilitator",
            facilitator_check(&facilitator, &network).await,
        ),
        (
            "rpc",
            solana_rpc_check(config::var(env, "SOLANA_RPC_URL")).await,
        ),
    ];
    let (entry, ready) = rail(&network, &solana);
    rails.push(entry);
    all &= ready;
    let offers = match crate::edge::payment::evm::load_offers(env) {
        Ok(offers) => offers,
        Err(_) => {
            rails.push(rail("eip155", &[("configured", Check::ConfigInvalid)]).0);
            return (rails, false);
        }
    };
    let evm_facilitator = crate::edge::payment::evm::evm_facilitator(env, &facilitator);
    for offer in offers {
        let id = offer.chain_id;
        let url = config::var(env, &format!("EVM_{id}_RPC_URL"));
        let checks = [
            ("configured", Check::Ok),
            (
                "facilitator",
                facilitator_check(&evm_facilitator, &offer.network).await,
            ),
            ("rpc", evm_rpc_check(url, id).await),
        ];
        let (entry, ready) = rail(&offer.network, &checks);
        rails.push(entry);
        all &= ready;
    }
    (rails, all)
}

/// The MPP rail (the pack's tempo charge): configured, and its node on the configured chain.
async fn mpp_rail(env: &Env) -> (Value, bool) {
    let chain_id = config::var(env, "TEMPO_CHAIN_ID").and_then(|v| v.trim().parse::<u64>().ok());
    let configured = ["TEMPO_RPC_URL", "TEMPO_CURRENCY", "TEMPO_RECIPIENT"]
        .iter()
        .all(|name| config::var(env, name).is_some());
    let Some(chain_id) = chain_id.filter(|_| configured) else {
        return rail("tempo", &[("configured", Check::NotConfigured)]);
    };
    let checks = [
        ("configured", Check::Ok),
        (
            "rpc",
            evm_rpc_check(config::var(env, "TEMPO_RPC_URL"), chain_id).await,
        ),
    ];
    rail(&format!("eip155:{chain_id}"), &checks)
}

/// D1 answers a query.
async fn d1_check(env: &Env) -> Check {
    let Ok(db) = env.d1("DB") else {
        return Check::NotConfigured;
    };
    match db.prepare("SELECT 1").run().await {
        Ok(result) if result.success() => Check::Ok,
        _ => Check::Unavailable,
    }
}

/// The payment guard answers (a wallet check on an object of its own: it stores nothing), and
/// the allowance namespace is bound.
async fn objects_check(env: &Env) -> Check {
    let probe = guard::Command::WalletCheck {
        now_ms: Date::now().as_millis(),
        max_attempts: 1,
    };
    let guard_ok = guard::call::<guard::TransitionAnswer>(env, "ready:probe", &probe)
        .await
        .is_ok();
    let allowance_ok = env
        .durable_object("ALLOWANCE")
        .is_ok_and(|ns| ns.id_from_name("ready:probe").is_ok());
    if guard_ok && allowance_ok {
        Check::Ok
    } else {
        Check::Unavailable
    }
}

/// Every check, fresh.
async fn assess(env: &Env) -> (u16, Value) {
    let (x402, x402_ready) = x402_rails(env).await;
    let (mpp, mpp_ready) = mpp_rail(env).await;
    let mpp_configured = mpp["configured"] == "ok";
    let d1 = d1_check(env).await;
    let objects = objects_check(env).await;
    let signing = if config::signer(env).is_ok() {
        Check::Ok
    } else {
        Check::Unavailable
    };
    let ready = x402_ready
        && (mpp_ready || !mpp_configured)
        && [d1, objects, signing].iter().all(|c| *c == Check::Ok);
    let body = json!({
        "ready": ready,
        "rails": {"x402": x402, "mpp": mpp},
        "d1": d1.code(),
        "durable_objects": objects.code(),
        "signing_key": signing.code(),
        "cached_for_ms": CACHE_MS,
    });
    (if ready { 200 } else { 503 }, body)
}

/// `GET /ready`: the cached answer while it is fresh, else every check again.
pub async fn check(env: &Env) -> Result<Response, Refused> {
    let now = Date::now().as_millis();
    let cached = CACHED.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|(at, _, _)| now.saturating_sub(*at) < CACHE_MS)
            .map(|(_, status, body)| (*status, body.clone()))
    });
    let (status, body) = match cached {
        Some(answer) => answer,
        None => {
            let (status, body) = assess(env).await;
            CACHED.with(|c| *c.borrow_mut() = Some((now, status, body.clone())));
            (status, body)
        }
    };
    let mut response = respond::json(status, &body)?;
    let _ = response
        .headers_mut()
        .set("cache-control", "max-age=10, must-revalidate");
    Ok(response)
}
