//! The x402 facilitator's HTTP client: `GET /supported` (the fee payer, cached), `POST /verify`
//! and `POST /settle` (timed), each carrying the facilitator's authentication headers when
//! secrets for them are configured. Also the plain JSON POST used for each rail's chain RPC (never
//! authenticated: the credentials are the facilitator's alone).
//!
//! Nothing here logs a request, an answer or a credential; every failure is a closed
//! `PaymentError` (a 401/403 from the facilitator is `FacilitatorAuthRejected`).

use crate::engine::payment::{fee_payer_from_supported, PaymentError};
use serde_json::Value;
use std::cell::RefCell;
use worker::{
    wasm_bindgen::JsValue, Date, Env, Fetch, Headers, Method, Request, RequestInit, Response,
    Result,
};

/// How long the facilitator's fee payer is cached.
const FEE_PAYER_TTL_MS: u64 = 10 * 60 * 1000;
/// Largest facilitator (or RPC) answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

thread_local! {
    static FEE_PAYER: RefCell<Option<(String, String, u64)>> = const { RefCell::new(None) };
}

/// The configured facilitator: its base URL (no trailing slash) and its credentials, if any.
#[derive(Debug, Clone)]
pub struct Facilitator {
    pub url: String,
    auth: crate::edge::payment::facilitator_auth::Credentials,
}

impl Facilitator {
    /// From `FACILITATOR_URL` and the optional credential secrets.
    pub fn from_env(env: &Env) -> std::result::Result<Self, PaymentError> {
        let url = env
            .var("FACILITATOR_URL")
            .map(|v| v.to_string().trim_end_matches('/').to_owned())
            .map_err(|_| PaymentError::ConfigInvalid)?;
        let auth = crate::edge::payment::facilitator_auth::Credentials::from_env(env)?;
        Ok(Facilitator { url, auth })
    }

    fn headers(&self, method: &str, path: &str) -> std::result::Result<Headers, PaymentError> {
        let headers = Headers::new();
        let set = |name: &str, value: &str| {
            headers
                .set(name, value)
                .map_err(|_| PaymentError::FacilitatorUnavailable)
        };
        for (name, value) in self.auth.headers(&self.url, method, path, now_ms())? {
            set(name, &value)?;
        }
        Ok(headers)
    }

    /// The fee payer the facilitator names for `network` (cached per facilitator URL).
    pub async fn fee_payer(&self, network: &str) -> std::result::Result<String, PaymentError> {
        let now = now_ms();
        let cached = FEE_PAYER.with(|cell| {
            cell.borrow().as_ref().and_then(|(url, payer, at)| {
                (*url == self.url && now.saturating_sub(*at) < FEE_PAYER_TTL_MS)
                    .then(|| payer.clone())
            })
        });
        if let Some(payer) = cached {
            return Ok(payer);
        }
        let body = self.supported().await?;
        let payer =
            fee_payer_from_supported(&body, network).ok_or(PaymentError::FacilitatorUnavailable)?;
        FEE_PAYER.with(|cell| *cell.borrow_mut() = Some((self.url.clone(), payer.clone(), now)));
        Ok(payer)
    }

    /// `GET /supported`, uncached (readiness asks it afresh).
    pub async fn supported(&self) -> std::result::Result<Vec<u8>, PaymentError> {
        let headers = self.headers("GET", "/supported")?;
        let mut init = RequestInit::new();
        init.with_method(Method::Get).with_headers(headers);
        let request = Request::new_with_init(&format!("{}/supported", self.url), &init)
            .map_err(|_| PaymentError::FacilitatorUnavailable)?;
        read_answer(Fetch::Request(request).send().await).await
    }

    /// `POST /verify` (retried once on a transport failure: it changes nothing).
    pub async fn verify(&self, body: &Value) -> std::result::Result<Vec<u8>, PaymentError> {
        match self.post("/verify", body).await {
            Err(PaymentError::FacilitatorUnavailable) => self.post("/verify", body).await,
            first => first,
        }
    }

    /// `POST /settle`, waiting at most `timeout_ms` for the whole answer. `Err(Some(e))`: refused
    /// before anything was submitted (credentials rejected); `Err(None)`: a transport failure or a
    /// timeout (the caller decides what that means; for `/settle` it is uncertainty).
    pub async fn settle_within(
        &self,
        body: &Value,
        timeout_ms: u64,
    ) -> std::result::Result<Vec<u8>, Option<PaymentError>> {
        use futures_util::future::{select, Either};
        let answer = std::pin::pin!(self.post("/settle", body));
        let timer = std::pin::pin!(worker::Delay::from(std::time::Duration::from_millis(
            timeout_ms
        )));
        match select(answer, timer).await {
            Either::Left((Ok(bytes), _)) => Ok(bytes),
            Either::Left((Err(PaymentError::FacilitatorAuthRejected), _)) => {
                Err(Some(PaymentError::FacilitatorAuthRejected))
            }
            _ => Err(None),
        }
    }

    async fn post(&self, path: &str, body: &Value) -> std::result::Result<Vec<u8>, PaymentError> {
        let headers = self.headers("POST", path)?;
        post_json_with(&format!("{}{path}", self.url), body, headers).await
    }
}

fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// A plain JSON POST (a chain's RPC): no credentials.
pub async fn post_json(url: &str, body: &Value) -> std::result::Result<Vec<u8>, PaymentError> {
    post_json_with(url, body, Headers::new()).await
}

/// A chain node's JSON-RPC answer (Solana, or an EVM network), or None on any failure.
pub(crate) async fn rpc_call(rpc_url: &str, body: &Value) -> Option<Vec<u8>> {
    post_json(rpc_url, body).await.ok()
}

async fn post_json_with(
    url: &str,
    body: &Value,
    headers: Headers,
) -> std::result::Result<Vec<u8>, PaymentError> {
    headers
        .set("content-type", "application/json")
        .map_err(|_| PaymentError::FacilitatorUnavailable)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(JsValue::from_str(&body.to_string())));
    let request =
        Request::new_with_init(url, &init).map_err(|_| PaymentError::FacilitatorUnavailable)?;
    read_answer(Fetch::Request(request).send().await).await
}

/// The answer's bytes; a 401/403 is the facilitator refusing our credentials.
async fn read_answer(answer: Result<Response>) -> std::result::Result<Vec<u8>, PaymentError> {
    let mut response = answer.map_err(|_| PaymentError::FacilitatorUnavailable)?;
    if matches!(response.status_code(), 401 | 403) {
        return Err(PaymentError::FacilitatorAuthRejected);
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|_| PaymentError::FacilitatorUnavailable)?;
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(PaymentError::FacilitatorUnavailable);
    }
    Ok(bytes)
}
