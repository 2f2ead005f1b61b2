//! Per-format adapters: each turns the submitted `record` value into a [`SessionRecord`] or
//! answers [`DoesNotParse`] (refusal R-5). The format is the declared one; an adapter never
//! tries another format. Adapters copy text into blocks for measurement; none renders anything.

pub mod anthropic;
pub mod generic;
pub mod letta;

use super::record::{js_stringify, Block, Format, SessionRecord};
use serde_json::Value;

/// The record does not parse as the declared format. Carries nothing about the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoesNotParse;

/// Adapt `record` under the declared `format`.
pub fn adapt(format: Format, record: &Value) -> Result<SessionRecord, DoesNotParse> {
    match format {
        Format::LettaAf => letta::adapt(record),
        Format::AnthropicMessages => anthropic::adapt(record),
        Format::GenericMessageList => generic::adapt(record),
    }
}

/// One tool-schema entry as a block of the schema pseudo-message: a string as it stands, any other
/// value as `JSON.stringify` writes it.
pub(crate) fn schema_block(entry: &Value) -> Block {
    Block {
        text: Some(match entry {
            Value::String(s) => s.clone(),
            other => js_stringify(other),
        }),
        in_schema: true,
        ..Block::default()
    }
}

/// A string member, `None` when absent or null; any other type does not parse.
pub(crate) fn optional_string(
    obj: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<String>, DoesNotParse> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(DoesNotParse),
    }
}

/// A JSON number that is a safe non-negative integer (JavaScript `Number.isSafeInteger(n) && n >= 0`).
pub(crate) fn safe_non_negative_integer(v: &Value) -> Option<u64> {
    let n = v.as_number()?;
    if let Some(u) = n.as_u64() {
        return (u <= 9_007_199_254_740_991).then_some(u);
    }
    let f = n.as_f64()?;
    (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= 9_007_199_254_740_991.0)
        .then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn safe_integers_at_the_32_and_53_bit_edges_never_wrap() {
        for (text, want) in [
            ("4294967295", Some(4_294_967_295)),
            ("4294967296", Some(4_294_967_296)),
            ("4294967296.0", Some(4_294_967_296)),
            ("42949672960e-1", Some(4_294_967_296)),
            ("9007199254740991", Some(9_007_199_254_740_991)),
            ("9007199254740992", None),
            ("9007199254740993", None),
            ("18446744073709551615", None),
            ("18446744073709551616", None),
            ("18446744078004518912", None),
            ("1e300", None),
            ("-1", None),
            ("-0", Some(0)),
            ("4294967296.5", None),
        ] {
            assert_eq!(safe_non_negative_integer(&number(text)), want, "{text}");
        }
    }
}
