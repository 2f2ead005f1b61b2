//! x402 v2 `exact` on Solana, the pure half: challenge construction, header decoding, Solana v0
//! transaction decoding and the local checks made before any network call.
