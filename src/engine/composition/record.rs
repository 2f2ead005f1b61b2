//! The published SessionRecord abstraction every adapter produces, and (re-exported from the JSON
//! layer) the `JSON.stringify` rendering adapters use when a structured payload becomes block text.
//!
//! Invariants: a record is an ordered list of messages, each an ordered list of blocks, plus an
//! optional schema pseudo-message (tool definitions) that precedes every message. A block keeps
//! its raw role/kind labels only to classify them; nothing here is ever rendered into a report.

/// Evidence level of a record (ARCHITECTURE §8): L0 roles only, L1 roles plus structural part types,
/// L2 kinds or a tool-schema section present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    L0,
    L1,
    L2,
}

impl Level {
    pub fn label(self) -> &'static str {
        match self {
            Level::L0 => "L0",
            Level::L1 => "L1",
            Level::L2 => "L2",
        }
    }
}

/// One block: the unit of classification and estimation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Block {
    /// The message's role label as submitted (used for classification only).
    pub role_raw: Option<String>,
    /// The block's kind label as submitted (part type, message_type, generic kind).
    pub kind_raw: Option<String>,
    /// The adapted text; `None` is a non-serialisable payload (C-UNK, C = 0, E = 0).
    pub text: Option<String>,
    /// Block of the schema pseudo-message (tool definitions).
    pub in_schema: bool,
    /// The adapter recognised a compaction marker the kind label does not carry.
    pub compaction: bool,
    /// generic-message-list `has_args: true` (a tool-call payload).
    pub has_args: bool,
    /// A binary media part (image, base64 document): the C-BLOB test fires.
    pub media: bool,
}

/// One message of the record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    pub blocks: Vec<Block>,
    /// generic-message-list `stated_tokens` (the harness's figure carried inside the record).
    pub stated_tokens: Option<u64>,
}

/// Which accepted format a record was declared as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    LettaAf,
    AnthropicMessages,
    GenericMessageList,
}

impl Format {
    pub const ACCEPTED: [Format; 3] = [
        Format::LettaAf,
        Format::AnthropicMessages,
        Format::GenericMessageList,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Format::LettaAf => "letta-af",
            Format::AnthropicMessages => "anthropic-messages",
            Format::GenericMessageList => "generic-message-list",
        }
    }

    pub fn from_id(id: &str) -> Option<Format> {
        Format::ACCEPTED.into_iter().find(|f| f.id() == id)
    }
}

/// The adapted record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub format: Format,
    /// Blocks of the schema pseudo-message, `None` when the record carries no tool-schema section.
    pub schema: Option<Vec<Block>>,
    pub messages: Vec<Message>,
    /// letta-af: number of agents whose messages were taken (all of them, in file order).
    pub agents: Option<usize>,
    pub level: Level,
    /// generic-message-list `stated_total`.
    pub stated_total: Option<u64>,
}

impl SessionRecord {
    /// Every block in report order: schema pseudo-message first, then messages in order.
    /// Yields (message index or None for the schema pseudo-message, block).
    pub fn blocks(&self) -> impl Iterator<Item = (Option<usize>, &Block)> {
        let schema = self.schema.iter().flatten().map(|b| (None, b));
        let messages = self
            .messages
            .iter()
            .enumerate()
            .flat_map(|(i, m)| m.blocks.iter().map(move |b| (Some(i), b)));
        schema.chain(messages)
    }
}

/// `JSON.stringify(value)` exactly as ECMAScript writes it (members in JavaScript property
/// order): the shared writer.
pub use crate::engine::jsjson::js_stringify;
