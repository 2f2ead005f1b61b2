//! Envelope context-composition-envelope/1: free validation of the raw body bytes into a
//! [`Request`], in the published order — body (R-1), envelope version (R-2), declared format
//! (R-3), record presence (R-4), per-format parse (R-5), stated-counts shape, caller (R-6).
//!
//! Invariants: the format is the declared one, never sniffed; unknown top-level members are
//! counted and dropped (their values are never kept); a duplicated known member is ambiguous
//! (duplicated `record` → R-4, any other → R-1); no refusal carries any part of the body.

use super::adapters;
use super::metrics::Stated;
use super::record::{js_stringify, Format, SessionRecord};
use super::Refusal;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

pub const ENVELOPE_VERSION: &str = "context-composition-envelope/1";
pub const KNOWN_MEMBERS: [&str; 7] = [
    "envelope_version",
    "declared_format_id",
    "declared_format_version",
    "record",
    "harness_stated_counts",
    "criteria_ack",
    "caller",
];

/// A validated submission. Holds the adapted record for measurement; never rendered.
#[derive(Debug, Clone)]
pub struct Request {
    pub caller: Option<String>,
    pub format: Format,
    pub record: SessionRecord,
    pub stated: Option<HarnessStatedCounts>,
    pub unknown_members: usize,
    pub body_bytes: usize,
}

/// `harness_stated_counts` as validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessStatedCounts {
    pub per_message: Option<Vec<Option<u64>>>,
    pub total: Option<u64>,
}

impl Request {
    /// The stated figures M12 compares: the envelope's harness_stated_counts members when given,
    /// else the record's own (generic-message-list `stated_tokens` / `stated_total`).
    pub fn stated(&self) -> Stated {
        let mut s = Stated::default();
        let harness = self.stated.clone().unwrap_or_default();
        if let Some(p) = harness.per_message {
            s.per_message = Some(p);
            s.per_message_source = Some("harness_stated_counts");
        } else if self
            .record
            .messages
            .iter()
            .any(|m| m.stated_tokens.is_some())
        {
            s.per_message = Some(
                self.record
                    .messages
                    .iter()
                    .map(|m| m.stated_tokens)
                    .collect(),
            );
            s.per_message_source = Some("record");
        }
        if let Some(t) = harness.total {
            s.total = Some(t);
            s.total_source = Some("harness_stated_counts");
        } else if let Some(t) = self.record.stated_total {
            s.total = Some(t);
            s.total_source = Some("record");
        }
        s
    }
}

/// Top-level members in body order, duplicates kept.
struct Members(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = access.next_key::<String>()? {
                    out.push((key, access.next_value::<Value>()?));
                }
                Ok(Members(out))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

fn stated_counts(v: &Value) -> Result<HarnessStatedCounts, Refusal> {
    let members = v.as_object().ok_or(Refusal::StatedCountsInvalid)?;
    if js_stringify(v).len() > super::STATED_COUNTS_CAP {
        return Err(Refusal::StatedCountsInvalid);
    }
    let mut out = HarnessStatedCounts::default();
    for (k, v) in members {
        match (k.as_str(), v) {
            ("per_message", Value::Array(items)) => {
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    list.push(match item {
                        Value::Null => None,
                        other => Some(
                            adapters::safe_non_negative_integer(other)
                                .ok_or(Refusal::StatedCountsInvalid)?,
                        ),
                    });
                }
                out.per_message = Some(list);
            }
            ("total", v) => {
                out.total = Some(
                    adapters::safe_non_negative_integer(v).ok_or(Refusal::StatedCountsInvalid)?,
                )
            }
            _ => return Err(Refusal::StatedCountsInvalid),
        }
    }
    Ok(out)
}

pub fn parse(body: &[u8]) -> Result<Request, Refusal> {
    if body.len() > super::BODY_CAP {
        return Err(Refusal::BodyOverCap {
            body_bytes: body.len() as u64,
        });
    }
    let text = std::str::from_utf8(body).map_err(|_| Refusal::MalformedBody)?;
    let members: Members = serde_json::from_str(text).map_err(|_| Refusal::MalformedBody)?;
    let mut seen = [0usize; KNOWN_MEMBERS.len()];
    let mut unknown_members = 0;
    for (k, _) in &members.0 {
        match KNOWN_MEMBERS.iter().position(|m| m == k) {
            Some(i) => seen[i] += 1,
            None => unknown_members += 1,
        }
    }
    let duplicated_other = seen
        .iter()
        .enumerate()
        .any(|(i, n)| *n > 1 && KNOWN_MEMBERS[i] != "record");
    if duplicated_other {
        return Err(Refusal::MalformedBody);
    }
    let get = |name: &str| members.0.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    if get("envelope_version").and_then(Value::as_str) != Some(ENVELOPE_VERSION) {
        return Err(Refusal::EnvelopeVersionNotSupported);
    }
    let format = get("declared_format_id")
        .and_then(Value::as_str)
        .and_then(Format::from_id)
        .ok_or(Refusal::FormatNotAccepted)?;
    let record_count = members.0.iter().filter(|(k, _)| k == "record").count();
    let record = match get("record") {
        Some(v) if !v.is_null() && record_count == 1 => v,
        _ => return Err(Refusal::RecordRequired),
    };
    let record =
        adapters::adapt(format, record).map_err(|_| Refusal::RecordDoesNotParseAsDeclaredFormat)?;
    let stated = match get("harness_stated_counts") {
        None | Some(Value::Null) => None,
        Some(v) => Some(stated_counts(v)?),
    };
    let caller = match get("caller") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if crate::engine::wallet::is_wallet_address(s) => Some(s.clone()),
        Some(_) => return Err(Refusal::CallerInvalid),
    };
    Ok(Request {
        caller,
        format,
        record,
        stated,
        unknown_members,
        body_bytes: body.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(extra: &str) -> Vec<u8> {
        format!(
            r#"{{"envelope_version":"{ENVELOPE_VERSION}","declared_format_id":"generic-message-list","record":{{"messages":[{{"role":"user","text":"hi"}}]}}{extra}}}"#
        )
        .into_bytes()
    }

    #[test]
    fn json_that_javascript_would_accept_but_binary64_cannot_hold_is_malformed() {
        // Recorded as an interpretation note: these never reach measurement.
        assert_eq!(
            parse(&body(r#","x":1e400"#)).unwrap_err(),
            Refusal::MalformedBody
        );
        assert_eq!(
            parse(&body(r#","x":"\ud800""#)).unwrap_err(),
            Refusal::MalformedBody
        );
    }

    #[test]
    fn unknown_members_are_counted_and_dropped() {
        let req = parse(&body(r#","a":1,"b":{"c":"secret"}"#)).unwrap();
        assert_eq!(req.unknown_members, 2);
        assert!(!format!("{req:?}").contains("secret"));
    }

    #[test]
    fn stated_counts_at_the_32_and_53_bit_edges_are_kept_exactly() {
        for n in [4_294_967_295u64, 4_294_967_296, 9_007_199_254_740_991] {
            let req = parse(&body(&format!(
                r#","harness_stated_counts":{{"per_message":[{n},null],"total":{n}}}"#
            )))
            .unwrap();
            let stated = req.stated.unwrap();
            assert_eq!(stated.per_message, Some(vec![Some(n), None]));
            assert_eq!(stated.total, Some(n));
        }
        for over in [
            "9007199254740992",
            "18446744073709551616",
            "18446744078004518912",
        ] {
            assert_eq!(
                parse(&body(&format!(
                    r#","harness_stated_counts":{{"total":{over}}}"#
                )))
                .unwrap_err(),
                Refusal::StatedCountsInvalid,
                "{over}"
            );
        }
    }

    #[test]
    fn over_cap_is_refused_before_parsing() {
        let big = vec![b' '; super::super::BODY_CAP + 1];
        assert_eq!(
            parse(&big).unwrap_err(),
            Refusal::BodyOverCap {
                body_bytes: big.len() as u64
            }
        );
    }
}
