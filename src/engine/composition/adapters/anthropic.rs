//! anthropic-messages adapter: the object form (`{messages, system?, tools?}`, which includes a full
//! Messages API request — other request members are not part of the record) or a bare message
//! array.
//!
//! Rules (published as interpretation notes): `tools[]` is the schema pseudo-message (compact JSON
//! of each entry); a top-level `system` is message 0 with role `system` (a string is one text
//! block, an array is one block per element); each message is `{role: string, content: string |
//! array of objects}`; a string content is one `text` block. Block text by type: text → `text`;
//! thinking → `thinking`; redacted_thinking → `data`; compaction → `content`; image → `source.data`
//! (base64) / `source.url` / `source.file_id`, a media block; document → `source.data` / `source.url`
//! / `source.file_id` / nested `source.content` texts joined by LF, a media block when the source is
//! base64; search_result → its `content[].text` joined by LF; tool_use, server_tool_use,
//! mcp_tool_use → compact JSON of `input`; tool_result and mcp_tool_result → string content as one
//! block, array content as one block per element (each kind `tool_result`, text as its element
//! type gives it, image elements media), absent or empty content as one empty block; every other
//! `*_tool_result` type → compact JSON of `content`; any other type → no text (C-UNK), its kind
//! kept raw so P-OTHER fires beside the role's class (which wins by precedence).

use super::{optional_string, DoesNotParse};
use crate::engine::composition::record::{
    js_stringify, Block, Format, Level, Message, SessionRecord,
};
use serde_json::{Map, Value};

pub fn adapt(record: &Value) -> Result<SessionRecord, DoesNotParse> {
    let (messages_value, system, tools) = match record {
        Value::Array(ms) => (ms, None, None),
        Value::Object(o) => match o.get("messages") {
            Some(Value::Array(ms)) => (ms, o.get("system"), o.get("tools")),
            _ => return Err(DoesNotParse),
        },
        _ => return Err(DoesNotParse),
    };
    let schema = match tools {
        None | Some(Value::Null) => None,
        Some(Value::Array(ts)) => Some(
            ts.iter()
                .map(|t| Block {
                    text: Some(js_stringify(t)),
                    in_schema: true,
                    ..Block::default()
                })
                .collect(),
        ),
        Some(_) => return Err(DoesNotParse),
    };
    let mut messages = Vec::with_capacity(messages_value.len() + 1);
    match system {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => messages.push(Message {
            blocks: vec![Block {
                role_raw: Some("system".to_owned()),
                kind_raw: Some("text".to_owned()),
                text: Some(s.clone()),
                ..Block::default()
            }],
            stated_tokens: None,
        }),
        Some(Value::Array(parts)) => {
            let mut blocks = Vec::new();
            for p in parts {
                adapt_block(
                    &mut blocks,
                    &Some("system".to_owned()),
                    p.as_object().ok_or(DoesNotParse)?,
                )?;
            }
            messages.push(Message {
                blocks,
                stated_tokens: None,
            });
        }
        Some(_) => return Err(DoesNotParse),
    }
    for m in messages_value {
        let m = m.as_object().ok_or(DoesNotParse)?;
        let role = match m.get("role") {
            Some(Value::String(r)) => Some(r.clone()),
            _ => return Err(DoesNotParse),
        };
        let mut blocks = Vec::new();
        match m.get("content") {
            Some(Value::String(s)) => blocks.push(Block {
                role_raw: role.clone(),
                kind_raw: Some("text".to_owned()),
                text: Some(s.clone()),
                ..Block::default()
            }),
            Some(Value::Array(parts)) => {
                for p in parts {
                    adapt_block(&mut blocks, &role, p.as_object().ok_or(DoesNotParse)?)?;
                }
            }
            _ => return Err(DoesNotParse),
        }
        messages.push(Message {
            blocks,
            stated_tokens: None,
        });
    }
    Ok(SessionRecord {
        format: Format::AnthropicMessages,
        schema,
        messages,
        agents: None,
        level: Level::L0,
        stated_total: None,
    })
}

fn str_at<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a str> {
    v.and_then(|v| v.get(key)).and_then(Value::as_str)
}

/// Text of a text-bearing element list (search_result content, document content): the `text`
/// members of its elements joined by LF.
fn joined_texts(items: &[Value]) -> String {
    items
        .iter()
        .filter_map(|i| i.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Text and media flag of a source-bearing block (image, document).
fn source_text(block: &Map<String, Value>) -> (Option<String>, bool) {
    let source = block.get("source");
    let base64 = str_at(source, "type") == Some("base64");
    for key in ["data", "url", "file_id"] {
        if let Some(s) = str_at(source, key) {
            return (Some(s.to_owned()), base64);
        }
    }
    match source.and_then(|s| s.get("content")) {
        Some(Value::String(s)) => (Some(s.clone()), false),
        Some(Value::Array(items)) => (Some(joined_texts(items)), false),
        _ => (None, false),
    }
}

fn adapt_block(
    out: &mut Vec<Block>,
    role: &Option<String>,
    block: &Map<String, Value>,
) -> Result<(), DoesNotParse> {
    let kind = optional_string(block, "type")?;
    let block_of = |text: Option<String>, media: bool| Block {
        role_raw: role.clone(),
        kind_raw: kind.clone(),
        text,
        media,
        ..Block::default()
    };
    let string_member = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_owned);
    match kind.as_deref() {
        Some("text") => out.push(block_of(string_member("text"), false)),
        Some("thinking") => out.push(block_of(string_member("thinking"), false)),
        Some("redacted_thinking") => out.push(block_of(string_member("data"), false)),
        Some("compaction") => out.push(block_of(string_member("content"), false)),
        Some("image") => {
            let (text, _) = source_text(block);
            out.push(block_of(text, true));
        }
        Some("document") => {
            let (text, media) = source_text(block);
            out.push(block_of(text, media));
        }
        Some("search_result") => {
            let text = match block.get("content") {
                Some(Value::Array(items)) => Some(joined_texts(items)),
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            };
            out.push(block_of(text, false));
        }
        Some("tool_use" | "server_tool_use" | "mcp_tool_use") => {
            out.push(block_of(block.get("input").map(js_stringify), false))
        }
        Some("tool_result" | "mcp_tool_result") => match block.get("content") {
            Some(Value::String(s)) => out.push(block_of(Some(s.clone()), false)),
            Some(Value::Array(items)) if !items.is_empty() => {
                for item in items {
                    let item = item.as_object().ok_or(DoesNotParse)?;
                    let (text, media) = match item.get("type").and_then(Value::as_str) {
                        Some("text") => (
                            item.get("text").and_then(Value::as_str).map(str::to_owned),
                            false,
                        ),
                        Some("image") => (source_text(item).0, true),
                        Some("document") => source_text(item),
                        Some("search_result") => match item.get("content") {
                            Some(Value::Array(xs)) => (Some(joined_texts(xs)), false),
                            _ => (None, false),
                        },
                        _ => (None, false),
                    };
                    out.push(block_of(text, media));
                }
            }
            None | Some(Value::Null) | Some(Value::Array(_)) => {
                out.push(block_of(Some(String::new()), false))
            }
            Some(_) => out.push(block_of(None, false)),
        },
        Some(t) if t.ends_with("_tool_result") => {
            out.push(block_of(block.get("content").map(js_stringify), false))
        }
        _ => out.push(block_of(None, false)),
    }
    Ok(())
}
