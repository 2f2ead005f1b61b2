//! token-opt's integration tests, one binary (`cargo test --test token_opt`): the levers op
//! (corpus, numbers, refusals, report, the C9 Unicode rule) and the toon op (TOON conformance, the
//! op end to end, and the ignored release-mode speed check).

mod corpus;
mod numbers;
mod refusals;
mod report;
mod toon_conformance;
mod toon_op;
mod toon_speed;
mod unicode;
