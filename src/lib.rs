//! context-meter: mechanical, model-free context operations for AI agents, sold per call over x402.
//!
//! `engine` is the functional core: pure, deterministic Rust with no I/O, no clock and no randomness,
//! tested on the host. `edge` is the imperative shell: the only code that touches Request/Response,
//! D1, Durable Objects, secrets and fetch.

pub mod edge;
pub mod engine;
