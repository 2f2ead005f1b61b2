//! SHA-512 through the runtime's WebCrypto (`crypto.subtle.digest`, native code in workerd), for the
//! benchmark route's `digest-native` op (compiled in with `bench-routes` only): it times what the
//! Ed25519 challenge hash of a signed report (the whole report, up to a whole shaped payload) would
//! cost natively against the wasm `sha2` crate the signer uses. Measured in workerd (issue 31,
//! docs/benchmarks.md): 0.62-1.05x of wasm's time on whole signed bodies (133-264 KB, most often
//! about 0.83x), about even at 64 KB messages and slower below (each call crosses into JavaScript
//! and awaits a promise, about 5 µs), so signing stays in wasm.
//!
//! Invariants: the digest is SHA-512 of exactly the bytes given (WebCrypto copies them when called,
//! before anything else can touch the wasm memory they live in); `None` on any failure of the call
//! or its promise, never a panic, and nothing of the bytes is kept or logged.

use worker::js_sys::{Promise, Uint8Array};
use worker::wasm_bindgen::prelude::*;
use worker::wasm_bindgen::{self, JsValue};
use worker::wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    /// `crypto.subtle.digest(algorithm, data)`.
    #[wasm_bindgen(catch, js_namespace = ["crypto", "subtle"], js_name = digest)]
    fn subtle_digest(algorithm: &str, data: &[u8]) -> Result<Promise, JsValue>;
}

/// SHA-512 of `bytes` from WebCrypto, or `None` should the runtime refuse or fail the digest.
pub async fn native(bytes: &[u8]) -> Option<[u8; 64]> {
    let promise = subtle_digest("SHA-512", bytes).ok()?;
    let buffer = JsFuture::from(promise).await.ok()?;
    let view = Uint8Array::new(&buffer);
    let mut digest = [0u8; 64];
    if view.length() as usize != digest.len() {
        return None;
    }
    view.copy_to(&mut digest);
    Some(digest)
}
