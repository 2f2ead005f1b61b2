//! generic-message-list adapter: `{ messages: [{ role, kind, name, has_args, source, text,
//! stated_tokens }], tool_schemas?, stated_total? }`.
//!
//! Rules (published as interpretation notes): each message is exactly one block; `text: null` (or
//! absent) is a non-serialisable payload (C-UNK, C = 0, E = 0) and `""` is text; `role` and `kind`
//! are strings or null; `has_args` is a boolean or null; `stated_tokens` and `stated_total` are
//! non-negative safe integers or null; `name` and `source` are not used for measurement. Each
//! `tool_schemas[]` entry is one P-TDEF block of the schema pseudo-message (the string itself, or
//! compact JSON of the entry). Level: L2 when a `tool_schemas` array is present or any message
//! carries a non-empty kind; else L1 when any message has `has_args: true` or role `tool`; else L0.

use super::{optional_string, safe_non_negative_integer, schema_block, DoesNotParse};
use crate::engine::composition::record::{Block, Format, Level, Message, SessionRecord};
use serde_json::Value;

fn optional_integer(v: Option<&Value>) -> Result<Option<u64>, DoesNotParse> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => safe_non_negative_integer(v).map(Some).ok_or(DoesNotParse),
    }
}

pub fn adapt(record: &Value) -> Result<SessionRecord, DoesNotParse> {
    let members = record.as_object().ok_or(DoesNotParse)?;
    let list = match members.get("messages") {
        Some(Value::Array(ms)) => ms,
        _ => return Err(DoesNotParse),
    };
    let schema = match members.get("tool_schemas") {
        None | Some(Value::Null) => None,
        Some(Value::Array(ts)) => Some(ts.iter().map(schema_block).collect::<Vec<_>>()),
        Some(_) => return Err(DoesNotParse),
    };
    let stated_total = optional_integer(members.get("stated_total"))?;
    let mut level = if schema.is_some() {
        Level::L2
    } else {
        Level::L0
    };
    let mut messages = Vec::with_capacity(list.len());
    for m in list {
        let m = m.as_object().ok_or(DoesNotParse)?;
        let role = optional_string(m, "role")?;
        let kind = optional_string(m, "kind")?;
        let text = optional_string(m, "text")?;
        let has_args = match m.get("has_args") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(DoesNotParse),
        };
        optional_string(m, "name")?;
        optional_string(m, "source")?;
        let stated_tokens = optional_integer(m.get("stated_tokens"))?;
        if kind.as_deref().is_some_and(|k| !k.is_empty()) {
            level = Level::L2;
        } else if has_args || role.as_deref() == Some("tool") {
            level = level.max(Level::L1);
        }
        messages.push(Message {
            blocks: vec![Block {
                role_raw: role,
                kind_raw: kind,
                text,
                has_args,
                ..Block::default()
            }],
            stated_tokens,
        });
    }
    Ok(SessionRecord {
        format: Format::GenericMessageList,
        schema,
        messages,
        agents: None,
        level,
        stated_total,
    })
}
