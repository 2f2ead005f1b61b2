//! context-budget-pack's integration tests, one binary (`cargo test --test budget_pack`); each
//! module is one concern, so `cargo test --test budget_pack refusals::` runs just that one.

mod corpus;
mod properties;
mod refusals;
