//! token-efficiency/v1's integration tests, one binary (`cargo test --test token_efficiency`):
//! the pinned corpus, the pre-check's verdict against the paid op's, and receipt properties.

mod corpus;
mod precheck_verdict;
mod properties;
