//! The one JSON layer: JSON as JavaScript reads and writes it, for every family.
//!
//! - [`read`]: the reader (`JSON.parse` semantics over UTF-16, limits on bytes, values and depth,
//!   an [`Observer`] hook for what a family must see while reading); [`is_json`] answers past the
//!   depth limit without recursion.
//! - [`fast_canonical_with`]: `JSON.stringify(JSON.parse(text))` written from the source without a
//!   tree when it can be (the token-efficiency hot path), reporting to an [`Observer`] as it walks.
//! - [`write`]: the writer, over `serde_json::Value` or [`Value`], with a [`KeyOrder`] parameter
//!   (insertion, JavaScript property order, RFC 8785 JCS); one number formatter ([`number`]), one
//!   string escaper ([`escape`]), one array-index test ([`keys`]), one set of lexeme scanners
//!   ([`lexeme`]).
//!
//! - [`unescape`]: a string literal's text and where its `"`, `\\` and control bytes are;
//!   [`unescape_canonical`]: the same, also telling in the same pass whether the text is canonical JSON.
//!
//! Its own package (`context-meter-jsjson`) so the release profile builds these byte loops at
//! opt-level 3 while the rest of the worker is built for size; the canonical walk is instantiated
//! here for a `dyn` [`Observer`] ([`fast_canonical_observed`]) and for none
//! ([`fast_canonical_unobserved`]) so its loop is compiled in this package too.
//!
//! Invariants: pure; the same input gives the same bytes; nothing here keeps or renders input in
//! an error (errors are closed enums).

pub mod canonical;
pub mod escape;
pub mod keys;
pub mod lexeme;
pub mod number;
pub mod observe;
pub mod read;
pub mod syntax;
pub mod unescape;
pub mod unescape_canonical;
pub mod value;
pub mod write;

pub use canonical::{
    fast_canonical, fast_canonical_observed, fast_canonical_of, fast_canonical_unobserved,
    fast_canonical_with, Canonical, Specials,
};
pub use escape::{has_lone_surrogate, js_length, write_js_string, write_utf16_string};
pub use keys::{array_index, array_index_of, KeyOrder};
pub use lexeme::char_count;
pub use number::{js_number, push_js_number};
pub use observe::Observer;
pub use read::{read, read_bytes, Facts, Hazards, Limits, ReadError};
pub use syntax::is_json;
pub use value::{JsString, Value};
pub use write::{js_stringify, to_jcs, to_jcs_with_slot, to_js_compact, to_string, write};
