//! The pure core. Nothing here performs I/O, reads a clock or draws randomness: the edge passes
//! `now` (milliseconds since the Unix epoch) and key material in, and gets typed reports or a closed
//! refusal back. The same input always yields the same bytes.

pub mod allowance;
pub mod budget_pack;
pub mod composition;
pub mod mcp;
pub mod payment;
pub mod sign;
pub mod time;
pub mod token_efficiency;
pub mod token_opt;
pub mod wallet;
/// JSON as JavaScript reads and writes it: its own package (src/engine/jsjson), re-exported here.
pub use context_meter_jsjson as jsjson;
/// cl100k_base tokenization: its own package (src/engine/tokenizer), re-exported here.
pub use context_meter_tokenizer as tokenizer;

/// A closed refusal: every error that can reach a client implements this. The message is a static
/// string; the only variable content is numbers (caps, lengths, counts, rule ids) in `figures`.
/// No implementation may carry or render any part of a submission.
pub trait ClosedError {
    /// Stable machine code, e.g. `CAP-EXCEEDED:body_bytes` or `malformed_body`.
    fn code(&self) -> &'static str;
    /// HTTP status the edge answers with.
    fn status(&self) -> u16;
    /// Static human sentence.
    fn message(&self) -> &'static str;
    /// Numeric facts only (name, value).
    fn figures(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// Defines `ALL` for a closed refusal enum whose variants carry only numbers: every variant once
/// (numbers zero). The same list feeds an exhaustive match, so a variant left out does not compile.
macro_rules! every_variant {
    ($enum:ident: $($variant:ident $({ $($field:ident),+ })?),+ $(,)?) => {
        /// Every variant once (figures zero), for the served code lists.
        pub const ALL: [$enum; [$(stringify!($variant)),+].len()] =
            [$($enum::$variant $({ $($field: 0),+ })?),+];

        /// Never called: its exhaustive match is what keeps `ALL` complete.
        #[allow(dead_code)]
        fn every_variant_is_in_all(value: $enum) {
            match value {
                $($enum::$variant { .. } => {}),+
            }
        }
    };
}
pub(crate) use every_variant;

/// A value of one ledger column (D1 stores integers and text; nothing else is ever written).
/// Serialized as the bare JSON value (a payment's record holds its row until D1 confirms it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerValue {
    Int(i64),
    Text(String),
    Null,
}

impl serde::Serialize for LedgerValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            LedgerValue::Int(n) => serializer.serialize_i64(*n),
            LedgerValue::Text(s) => serializer.serialize_str(s),
            LedgerValue::Null => serializer.serialize_unit(),
        }
    }
}

impl<'de> serde::Deserialize<'de> for LedgerValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LedgerVisitor)
    }
}

/// Reads a ledger value from an integer, a string or null (one small visitor, whatever the
/// deserializer: the guard's wire, its storage).
struct LedgerVisitor;

impl serde::de::Visitor<'_> for LedgerVisitor {
    type Value = LedgerValue;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an integer, a string or null")
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<LedgerValue, E> {
        Ok(LedgerValue::Int(n))
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<LedgerValue, E> {
        i64::try_from(n)
            .map(LedgerValue::Int)
            .map_err(|_| E::custom("ledger integer"))
    }

    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<LedgerValue, E> {
        // serde-wasm-bindgen hands JavaScript numbers over as f64; a ledger integer is exact.
        let exact = n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0;
        exact
            .then_some(LedgerValue::Int(n as i64))
            .ok_or_else(|| E::custom("ledger integer"))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<LedgerValue, E> {
        Ok(LedgerValue::Text(s.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, s: String) -> Result<LedgerValue, E> {
        Ok(LedgerValue::Text(s))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<LedgerValue, E> {
        Ok(LedgerValue::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<LedgerValue, E> {
        Ok(LedgerValue::Null)
    }
}

/// What a paid op hands the edge after it ran.
///
/// `status` is 200 for a delivered result, 422 for a could-not-measure shape (delivered unpaid).
/// `chargeable` is true only when the payer receives the paid substance; the edge settles the payment
/// only then. `report` is unsigned; the edge signs it. `ledger` holds the family-specific closed
/// ledger columns (column name, value): counts, sizes, op, verdict line — never submitted content.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub status: u16,
    pub chargeable: bool,
    pub report: serde_json::Map<String, serde_json::Value>,
    pub ledger: Vec<(&'static str, LedgerValue)>,
}

impl Delivery {
    /// A delivered, chargeable result (200): the paid substance reached the payer.
    pub fn delivered(
        report: serde_json::Map<String, serde_json::Value>,
        ledger: Vec<(&'static str, LedgerValue)>,
    ) -> Delivery {
        Delivery {
            status: 200,
            chargeable: true,
            report,
            ledger,
        }
    }
}

pub mod base58;

impl<E: ClosedError + 'static> From<E> for Box<dyn ClosedError> {
    fn from(err: E) -> Self {
        Box::new(err)
    }
}
