//! letta-af adapter: the current AgentFileSchema (`agents[].messages[]`, top-level `tools[]`), the
//! legacy single-agent v1 schema (a top-level `messages[]`), and the double-encoded file (a JSON
//! string whose value is the document, decoded once).
//!
//! Rules (published as interpretation notes): several agents are all taken, agent by agent in file
//! order, their messages concatenated — none is dropped; each content part is a block whose kind is
//! the message's `message_type` when present, else the part's `type`; each `tool_calls` entry is a
//! `tool_call` block (text = `function.arguments` when a string, else the entry as compact JSON);
//! each `tool_returns` entry is a `tool_return` block (text = `func_response` when a string, else
//! none); top-level `tools[]` entries are the schema pseudo-message (compact JSON of each entry); a
//! text part holding a JSON object `{type:"system_alert"}` whose `message` contains "prior messages
//! have been hidden" is a compaction marker. Level L2 always.

use super::{optional_string, schema_block, DoesNotParse};
use crate::engine::composition::record::{
    js_stringify, Block, Format, Level, Message, SessionRecord,
};
use serde_json::{Map, Value};

pub fn adapt(record: &Value) -> Result<SessionRecord, DoesNotParse> {
    let decoded;
    let document = match record {
        Value::String(s) => {
            decoded = serde_json::from_str::<Value>(s).map_err(|_| DoesNotParse)?;
            &decoded
        }
        other => other,
    };
    let doc = document.as_object().ok_or(DoesNotParse)?;
    let (message_lists, agents): (Vec<&Vec<Value>>, Option<usize>) = match doc.get("agents") {
        Some(Value::Array(agents)) => {
            let mut lists = Vec::with_capacity(agents.len());
            for agent in agents {
                let agent = agent.as_object().ok_or(DoesNotParse)?;
                match agent.get("messages") {
                    Some(Value::Array(ms)) => lists.push(ms),
                    None | Some(Value::Null) => {}
                    Some(_) => return Err(DoesNotParse),
                }
            }
            (lists, Some(agents.len()))
        }
        Some(_) => return Err(DoesNotParse),
        None => match doc.get("messages") {
            Some(Value::Array(ms)) => (vec![ms], Some(1)),
            _ => return Err(DoesNotParse),
        },
    };
    let schema = match doc.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Array(tools)) => Some(tools.iter().map(schema_block).collect()),
        Some(_) => return Err(DoesNotParse),
    };
    let mut messages = Vec::new();
    for list in message_lists {
        for m in list {
            messages.push(adapt_message(m.as_object().ok_or(DoesNotParse)?)?);
        }
    }
    Ok(SessionRecord {
        format: Format::LettaAf,
        schema,
        messages,
        agents,
        level: Level::L2,
        stated_total: None,
    })
}

fn adapt_message(m: &Map<String, Value>) -> Result<Message, DoesNotParse> {
    let role = optional_string(m, "role")?;
    let message_type = optional_string(m, "message_type")?;
    let mut blocks = Vec::new();
    let block = |kind: Option<String>, text: Option<String>| Block {
        role_raw: role.clone(),
        kind_raw: kind,
        text,
        ..Block::default()
    };
    match m.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            let mut b = block(
                message_type.clone().or(Some("text".to_owned())),
                Some(s.clone()),
            );
            b.compaction = is_compaction_text(s);
            blocks.push(b);
        }
        Some(Value::Array(parts)) => {
            for part in parts {
                let part = part.as_object().ok_or(DoesNotParse)?;
                let part_type = optional_string(part, "type")?;
                let (text, media) = part_text(part);
                let mut b = block(message_type.clone().or(part_type), text);
                b.media = media;
                b.compaction = b.text.as_deref().is_some_and(is_compaction_text);
                blocks.push(b);
            }
        }
        Some(_) => return Err(DoesNotParse),
    }
    for call in entries(m, "tool_calls")? {
        let text = match call.get("function").and_then(|f| f.get("arguments")) {
            Some(Value::String(args)) => args.clone(),
            _ => js_stringify(&Value::Object(call.clone())),
        };
        blocks.push(block(Some("tool_call".to_owned()), Some(text)));
    }
    for ret in entries(m, "tool_returns")? {
        let text = match ret.get("func_response") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        blocks.push(block(Some("tool_return".to_owned()), text));
    }
    Ok(Message {
        blocks,
        stated_tokens: None,
    })
}

/// `tool_calls` / `tool_returns`: absent, null, or an array of objects.
fn entries<'a>(
    m: &'a Map<String, Value>,
    key: &str,
) -> Result<Vec<&'a Map<String, Value>>, DoesNotParse> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_object().ok_or(DoesNotParse))
            .collect(),
        Some(_) => Err(DoesNotParse),
    }
}

/// Text of a content part: `text`, else `reasoning`, else an image's base64 `source.data`
/// (a media part), else none.
fn part_text(part: &Map<String, Value>) -> (Option<String>, bool) {
    if let Some(Value::String(t)) = part.get("text") {
        return (Some(t.clone()), false);
    }
    if let Some(Value::String(t)) = part.get("reasoning") {
        return (Some(t.clone()), false);
    }
    if part.get("type").and_then(Value::as_str) == Some("image") {
        if let Some(Value::String(d)) = part.get("source").and_then(|s| s.get("data")) {
            return (Some(d.clone()), true);
        }
    }
    (None, false)
}

/// Letta's compaction marker: a JSON object text `{"type":"system_alert","message":"…prior messages
/// have been hidden…"}`.
pub fn is_compaction_text(text: &str) -> bool {
    if !text.contains("system_alert") {
        return false;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => {
            o.get("type").and_then(Value::as_str) == Some("system_alert")
                && o.get("message")
                    .and_then(Value::as_str)
                    .is_some_and(|m| m.contains("prior messages have been hidden"))
        }
        _ => false,
    }
}
