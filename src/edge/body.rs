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

/// Why a body was not read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// Over the cap: `seen` is the declared length, or the bytes read when the cap was passed.
    TooLarge { seen: u64 },
    /// The stream failed.
    Failed(EdgeError),
}

/// Reads the whole body, stopping as soon as it exceeds `cap` bytes.
pub async fn read_capped(req: &mut Request, cap: usize) -> Result<Vec<u8>, Unread> {
    let declared = req
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(seen) = declared.filter(|n| *n > cap as u64) {
        return Err(Unread::TooLarge { seen });
    }
    let mut stream = match req.stream() {
        Ok(s) => s,
        // No body at all reads as empty; the family parser refuses it.
        Err(_) => return Ok(Vec::new()),
    };
    let mut body = Vec::with_capacity(declared.map_or(0, |n| n as usize));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| Unread::Failed(EdgeError::BodyUnreadable))?;
        if body.len() + chunk.len() > cap {
            return Err(Unread::TooLarge {
                seen: (body.len() + chunk.len()) as u64,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
