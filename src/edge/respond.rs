//! Response building: JSON bodies, signed reports, closed error bodies. Every error body is the
//! static message plus numbers; `404` is the static text `NOT COVERED`.

use crate::edge::error::EdgeError;
use crate::engine::sign::ReportSigner;
use crate::engine::ClosedError;
use serde_json::{Map, Value};
use worker::{Headers, Response, Result};

fn base_headers(content_type: &str) -> Headers {
    let h = Headers::new();
    let _ = h.set("content-type", content_type);
    let _ = h.set("cache-control", "no-store");
    let _ = h.set("x-content-type-options", "nosniff");
    h
}

/// A JSON response with the given status.
pub fn json(status: u16, value: &Value) -> Result<Response> {
    let body = serde_json::to_vec(value).map_err(|_| worker::Error::RustError(String::new()))?;
    Ok(Response::from_bytes(body)?
        .with_status(status)
        .with_headers(base_headers("application/json; charset=utf-8")))
}

/// Signs `report` and answers it with `status`. The body is the report's JCS form with the
/// signature in its sorted place ([`ReportSigner::signed_body`]): serialised once, for signing
/// and for the wire.
pub fn signed(status: u16, report: Map<String, Value>, signer: &ReportSigner) -> Result<Response> {
    Ok(Response::from_bytes(signer.signed_body(report))?
        .with_status(status)
        .with_headers(base_headers("application/json; charset=utf-8")))
}

/// Answers `report` byte for byte as the engine built it, with the signature detached into the
/// `Report-Signature` header (base64 of the `{alg, key_id, sig}` JSON) over the same JCS bytes. Used
/// where a published output schema is closed (context-budget-pack's `additionalProperties: false`).
pub fn signed_detached(
    status: u16,
    report: Map<String, Value>,
    signer: &ReportSigner,
) -> Result<Response> {
    use base64::{engine::general_purpose::STANDARD, Engine as _};
    let mut signed = report.clone();
    signer.sign(&mut signed);
    let signature = signed
        .get(crate::engine::sign::SIGNATURE_MEMBER)
        .cloned()
        .unwrap_or(Value::Null);
    let mut response = json(status, &Value::Object(report))?;
    response
        .headers_mut()
        .set("report-signature", &STANDARD.encode(signature.to_string()))?;
    Ok(response)
}

/// The static 404 for anything the route table does not hold.
pub fn not_covered() -> Result<Response> {
    Ok(Response::from_bytes(b"NOT COVERED".to_vec())?
        .with_status(404)
        .with_headers(base_headers("text/plain; charset=utf-8")))
}

/// 405 with `Allow`: a path the table routes on another method only.
pub fn not_allowed(allow: &str) -> Result<Response> {
    let headers = base_headers("text/plain; charset=utf-8");
    headers.set("allow", allow)?;
    Ok(Response::from_bytes(b"METHOD NOT ALLOWED".to_vec())?
        .with_status(405)
        .with_headers(headers))
}

/// The closed JSON body of a refusal: `{code, message, <figures>}` and, when the request carried a
/// payment header that was not looked at, `payment: "not verified, not consumed"`.
pub fn refusal_body(err: &dyn ClosedError, payment_untouched: bool) -> Value {
    let mut body = Map::new();
    body.insert("code".into(), Value::from(err.code()));
    body.insert("message".into(), Value::from(err.message()));
    for (name, n) in err.figures() {
        body.insert(name.into(), Value::from(n));
    }
    if payment_untouched {
        body.insert("payment".into(), Value::from("not verified, not consumed"));
    }
    Value::Object(body)
}

/// Answers a closed refusal.
pub fn refusal(err: &dyn ClosedError, payment_untouched: bool) -> Result<Response> {
    if err.code() == EdgeError::NotCovered.code() {
        return not_covered();
    }
    json(err.status(), &refusal_body(err, payment_untouched))
}
