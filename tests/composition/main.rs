//! context-composition's integration tests, one binary (`cargo test --test composition`): the
//! pinned corpus, and the real records of the optional ../shared samples.

mod corpus;
mod samples;
