//! Request body intake: Content-Type check and byte-capped reading. The cap is enforced while the
//! stream is read (and up front from Content-Length), so an over-cap body is never buffered whole
//! and never parsed.

use crate::edge::error::EdgeError;
use futures_util::StreamExt;
use worker::Request;

/// True when the Content-Type is `application/json` (parameters such as charset allowed).
pub fn is_json_content_type(req: &Request) -> bool {
    req.headers()
        .get("content-type")
        .ok()
        .flatten()
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
        .unwrap_or(false)
}

/// Reads the whole body, refusing with 413 as soon as it exceeds `cap` bytes.
pub async fn read_capped(req: &mut Request, cap: usize) -> Result<Vec<u8>, EdgeError> {
    let too_large = EdgeError::BodyTooLarge { cap: cap as u64 };
    let declared = req
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap as u64) {
        return Err(too_large);
    }
    let mut stream = match req.stream() {
        Ok(s) => s,
        // No body at all reads as empty; the family parser refuses it.
        Err(_) => return Ok(Vec::new()),
    };
    let mut body = Vec::with_capacity(declared.map_or(0, |n| n as usize));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| EdgeError::BodyUnreadable)?;
        if body.len() + chunk.len() > cap {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
