//! The mechanical operations S-1..S-4 of token-efficiency/v1 and their drop receipt.
//!
//! The canonical text is held as a sequence of atoms (brackets, commas, `"key":`, scalar literals) in
//! document order; removing an array entry or an object field kills a contiguous run of live atoms,
//! and truncating a string replaces one atom. Nothing is ever re-serialised from scratch.
//!
//! Whole-payload counts after every application are exact without re-tokenizing the whole payload:
//! the published tokenizer splits text into pieces with a regular expression and counts each piece
//! alone, and a piece never spans a boundary between a letter and a following ASCII non-letter, or
//! between a number and a following ASCII non-digit (such a "safe cut" splits the text into two
//! halves whose counts add up; see [`tokenizer::is_piece_start`]). So an application changes the count by
//! `count(window before) − count(window after)`, where the window reaches from the nearest safe cut
//! before the edit to the nearest safe cut after it. The chain of counts is checked against full
//! counts at the end (the reconciliation self-check); any disagreement fails closed.
//!
//! Invariants: operations run in the order S-1, S-2, S-3, S-4, each whole, each only if the payload is
//! still over the effective budget; S-4 at most once, last; the root value is neither a field nor an
//! array element; exhaustion returns the submitted canonical form with an empty receipt.

use super::census::{self, fingerprint};
use crate::engine::json_lexeme::plain_run;
use crate::engine::tokenizer::{self, Tokenized};
use std::collections::{HashMap, HashSet};

/// Strings longer than this many characters are truncated by S-3.
pub const S3_CAP_CHARS: usize = 2000;

/// The truncation marker of S-3 and S-4 (`op` is `"S-3"` or `"S-4"`).
pub fn marker(removed_chars: usize, op: &str) -> String {
    format!("[…truncated: {removed_chars} chars removed under token-efficiency/v1 {op}]")
}

/// Which operation set the payload admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpSet {
    Json,
    TextOnly,
}

impl OpSet {
    pub fn label(self) -> &'static str {
        match self {
            OpSet::Json => "json",
            OpSet::TextOnly => "text-only",
        }
    }
}

/// The operations, in published order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    S1,
    S2,
    S3,
    S4,
}

impl Op {
    pub fn id(self) -> &'static str {
        match self {
            Op::S1 => "S-1",
            Op::S2 => "S-2",
            Op::S3 => "S-3",
            Op::S4 => "S-4",
        }
    }
}

/// One receipt entry: whole-payload counts immediately before and after one application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptEntry {
    pub op: Op,
    pub path: String,
    /// S-1 only: the removed entry's index at removal.
    pub index: Option<usize>,
    pub chars_before: u64,
    pub chars_after: u64,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

impl ReceiptEntry {
    pub fn delta_tokens(&self) -> i64 {
        self.tokens_before as i64 - self.tokens_after as i64
    }
    pub fn delta_chars(&self) -> i64 {
        self.chars_before as i64 - self.chars_after as i64
    }
}

/// Why a payload could not be brought within budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exhaustion {
    /// Outermost keep-protected fields present after S-1..S-3.
    pub protected_fields: u64,
    /// Sum over those fields' `"key":value` spans, each counted alone.
    pub protected_tokens: u64,
    pub protected_chars: u64,
    /// The shortest prefix S-4 may keep (end of the last protected span), and its count.
    pub floor_chars: u64,
    pub floor_tokens: u64,
}

/// The result of the budget op before it is rendered.
#[derive(Debug, Clone)]
pub struct Shaping {
    pub submitted_tokens: u64,
    pub submitted_chars: u64,
    pub shaped_text: String,
    pub shaped_tokens: u64,
    pub shaped_chars: u64,
    pub receipt: Vec<ReceiptEntry>,
    pub exhaustion: Option<Exhaustion>,
}

impl Shaping {
    /// Applications per operation, in S-1..S-4 order.
    pub fn applications(&self) -> [u64; 4] {
        let mut counts = [0u64; 4];
        for entry in &self.receipt {
            counts[entry.op as usize] += 1;
        }
        counts
    }
}

/// The reconciliation self-check failed: the engine must not deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreconciled;

const NONE: usize = usize::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Scalar,
    Str,
    Array,
    Object,
}

/// One value of the canonical text, in a single arena: no per-node allocation, no copied text.
#[derive(Debug)]
struct Node {
    kind: Kind,
    parent: usize,
    /// The member's `"key":` atom, when this node is an object member (also its first atom).
    key_atom: usize,
    /// Position among the parent's live children (fixed once the parent array is deduplicated).
    pos: usize,
    /// First atom of the node's span: its `"key":` atom for a member, else its first value atom.
    span_first: usize,
    /// First atom of the value itself (after any `"key":`).
    value_first: usize,
    last_atom: usize,
    /// The comma atom written before this child (every child but the first), else [`NONE`].
    comma_atom: usize,
    /// Children in document order: the first, then each one's next sibling.
    first_child: usize,
    next_sibling: usize,
    live_children: usize,
    prev_live: usize,
    next_live: usize,
    protected: bool,
    contains_protected: bool,
    /// String nodes over the S-3 cap: the character count of the value (else 0).
    long_chars: usize,
}

/// The canonical text as atoms (spans of it), with the tree over them.
struct Document<'t> {
    text: &'t str,
    atom_start: Vec<usize>,
    atom_end: Vec<usize>,
    replaced: HashMap<usize, String>,
    /// Per atom, whether it is in the live text; empty until the first edit (all live).
    live: Vec<bool>,
    /// Union-find links to the nearest live atom at or before / at or after an index (offset by 1).
    left: Vec<usize>,
    right: Vec<usize>,
    nodes: Vec<Node>,
    any_protected: bool,
    tokens: u64,
    chars: u64,
    receipt: Vec<ReceiptEntry>,
}

/// A field's keep path: its object keys joined with `.`, array positions skipped.
#[derive(Debug, Clone)]
enum KeepPath {
    /// No enclosing field (the root and elements of root-level arrays).
    NoField,
    Field(String),
    /// Holds a lone surrogate (no keep entry can name it) or no keep set is in use.
    Unmatchable,
}

/// The canonical text of a JSON string literal's content read back as Rust text, with each lone
/// surrogate left as its six-character escape (`\ud800`), as receipt paths spell it; `None` when a
/// lone surrogate is present and `keep_lone` is false.
fn literal_text(content: &str, keep_lone: bool) -> Option<String> {
    if !content.contains('\\') {
        return Some(content.to_owned());
    }
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = &rest[at..];
        let (c, len) = match escape.as_bytes()[1] {
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'/' => ('/', 2),
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            _ => {
                let unit = u32::from_str_radix(&escape[2..6], 16).ok()?;
                match char::from_u32(unit) {
                    Some(c) => (c, 6),
                    None if keep_lone => {
                        out.push_str(&escape[..6]);
                        rest = &escape[6..];
                        continue;
                    }
                    None => return None,
                }
            }
        };
        out.push(c);
        rest = &escape[len..];
    }
    out.push_str(rest);
    Some(out)
}

/// Byte length of the escape or character at the start of a canonical literal's content.
fn literal_char_len(content: &[u8]) -> usize {
    match content[0] {
        b'\\' if content[1] == b'u' => 6,
        b'\\' => 2,
        b if b < 0x80 => 1,
        b if b < 0xE0 => 2,
        b if b < 0xF0 => 3,
        _ => 4,
    }
}

/// Characters of a canonical literal's content (an escape is one character, a lone surrogate one):
/// its UTF-8 lead bytes, less the extra bytes of each escape (`\u` escapes are six, others two;
/// an escape's bytes are ASCII, so each one is a lead byte).
fn literal_chars(content: &[u8]) -> usize {
    let leads = content.iter().filter(|&&b| (b as i8) >= -0x40).count();
    let mut extra = 0;
    let mut i = 0;
    while let Some(at) = content[i..].iter().position(|&b| b == b'\\') {
        let len = literal_char_len(&content[i + at..]);
        extra += len - 1;
        i += at + len;
    }
    leads - extra
}

/// Bytes of a canonical literal's content that hold its first `n` characters.
fn literal_prefix_bytes(content: &[u8], n: usize) -> usize {
    let (mut i, mut taken) = (0, 0);
    while i < content.len() && taken < n {
        i += literal_char_len(&content[i..]);
        taken += 1;
    }
    i
}

/// Builds the arena by scanning the canonical text (compact `JSON.stringify` output: no
/// whitespace, every literal already in canonical spelling).
struct Builder<'t, 'k> {
    doc: Document<'t>,
    keep: &'k HashSet<String>,
    pos: usize,
}

impl Builder<'_, '_> {
    fn atom(&mut self, start: usize, end: usize) -> usize {
        self.doc.atom_start.push(start);
        self.doc.atom_end.push(end);
        self.pos = end;
        self.doc.atom_start.len() - 1
    }

    fn byte(&self) -> Option<u8> {
        self.doc.text.as_bytes().get(self.pos).copied()
    }

    /// End (past the closing quote) of the string literal starting at `start`.
    fn string_end(&self, start: usize) -> Option<usize> {
        let bytes = self.doc.text.as_bytes();
        let mut i = start + 1;
        loop {
            i += plain_run(&bytes[i..]);
            match bytes.get(i)? {
                b'"' => return Some(i + 1),
                b'\\' => i += if bytes.get(i + 1)? == &b'u' { 6 } else { 2 },
                _ => return None,
            }
        }
    }

    /// Adds the value at the cursor as a node; `keep_path` is the field's keep path,
    /// `inherited` the protection of its ancestors.
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        parent: usize,
        key_atom: usize,
        pos: usize,
        comma_atom: usize,
        keep_path: &KeepPath,
        inherited: bool,
    ) -> Option<usize> {
        let is_member = key_atom != NONE;
        let protected = inherited
            || (is_member && matches!(keep_path, KeepPath::Field(p) if self.keep.contains(p)));
        let id = self.doc.nodes.len();
        let value_first = self.doc.atom_start.len();
        self.doc.nodes.push(Node {
            kind: Kind::Null,
            parent,
            key_atom,
            pos,
            span_first: if is_member { key_atom } else { value_first },
            value_first,
            last_atom: 0,
            comma_atom,
            first_child: NONE,
            next_sibling: NONE,
            live_children: 0,
            prev_live: NONE,
            next_live: NONE,
            protected,
            contains_protected: false,
            long_chars: 0,
        });
        let start = self.pos;
        let (kind, last_atom) = match self.byte()? {
            open @ (b'[' | b'{') => {
                let close = if open == b'[' { b']' } else { b'}' };
                self.atom(start, start + 1);
                let mut previous = NONE;
                let mut count = 0usize;
                while self.byte()? != close {
                    let comma = if count > 0 {
                        if self.byte()? != b',' {
                            return None;
                        }
                        self.atom(self.pos, self.pos + 1)
                    } else {
                        NONE
                    };
                    let child = if open == b'[' {
                        self.node(id, NONE, count, comma, keep_path, protected)?
                    } else {
                        let key_start = self.pos;
                        let key_end = self.string_end(key_start)?;
                        if self.doc.text.as_bytes().get(key_end) != Some(&b':') {
                            return None;
                        }
                        let key = self.atom(key_start, key_end + 1);
                        let child_keep = if self.keep.is_empty() {
                            KeepPath::Unmatchable
                        } else {
                            match (
                                literal_text(&self.doc.text[key_start + 1..key_end - 1], false),
                                keep_path,
                            ) {
                                (Some(name), KeepPath::NoField) => KeepPath::Field(name),
                                (Some(name), KeepPath::Field(parent_path)) => {
                                    KeepPath::Field(format!("{parent_path}.{name}"))
                                }
                                _ => KeepPath::Unmatchable,
                            }
                        };
                        self.node(id, key, count, comma, &child_keep, protected)?
                    };
                    if previous == NONE {
                        self.doc.nodes[id].first_child = child;
                    } else {
                        self.doc.nodes[previous].next_sibling = child;
                        self.doc.nodes[previous].next_live = child;
                        self.doc.nodes[child].prev_live = previous;
                    }
                    previous = child;
                    count += 1;
                }
                let last = self.atom(self.pos, self.pos + 1);
                self.doc.nodes[id].live_children = count;
                let kind = if open == b'[' {
                    Kind::Array
                } else {
                    Kind::Object
                };
                (kind, last)
            }
            b'"' => {
                let end = self.string_end(start)?;
                let atom = self.atom(start, end);
                let content = &self.doc.text.as_bytes()[start + 1..end - 1];
                if content.len() > S3_CAP_CHARS {
                    self.doc.nodes[id].long_chars = literal_chars(content);
                }
                (Kind::Str, atom)
            }
            _ => {
                let bytes = self.doc.text.as_bytes();
                let mut end = start;
                while end < bytes.len() && !matches!(bytes[end], b',' | b']' | b'}') {
                    end += 1;
                }
                if end == start {
                    return None;
                }
                let kind = if &bytes[start..end] == b"null" {
                    Kind::Null
                } else {
                    Kind::Scalar
                };
                (kind, self.atom(start, end))
            }
        };
        let node = &mut self.doc.nodes[id];
        node.kind = kind;
        node.last_atom = last_atom;
        if protected && parent != NONE {
            self.doc.any_protected = true;
            let mut up = parent;
            while up != NONE && !self.doc.nodes[up].contains_protected {
                self.doc.nodes[up].contains_protected = true;
                up = self.doc.nodes[up].parent;
            }
        }
        Some(id)
    }
}

impl<'t> Document<'t> {
    /// The tree over `canonical`, or `None` if it is not compact canonical JSON.
    fn build(canonical: &'t str, keep: &HashSet<String>) -> Option<Document<'t>> {
        // Reserved once for ordinary JSON (an atom every few bytes, a node every few atoms) so the
        // arena is not copied while it grows; denser text still grows as usual.
        let doc = Document {
            text: canonical,
            atom_start: Vec::with_capacity(canonical.len() / 4 + 8),
            atom_end: Vec::with_capacity(canonical.len() / 4 + 8),
            replaced: HashMap::new(),
            live: Vec::new(),
            left: Vec::new(),
            right: Vec::new(),
            nodes: Vec::with_capacity(canonical.len() / 16 + 8),
            any_protected: false,
            tokens: 0,
            chars: 0,
            receipt: Vec::new(),
        };
        let mut builder = Builder { doc, keep, pos: 0 };
        builder.node(NONE, NONE, 0, NONE, &KeepPath::NoField, false)?;
        if builder.pos != canonical.len() {
            return None;
        }
        Some(builder.doc)
    }

    fn atom_text(&self, atom: usize) -> &str {
        // Most runs replace nothing (only S-3 does): skip hashing the index then.
        let replaced = (!self.replaced.is_empty())
            .then(|| self.replaced.get(&atom))
            .flatten();
        match replaced {
            Some(text) => text,
            None => &self.text[self.atom_start[atom]..self.atom_end[atom]],
        }
    }

    /// The node's original canonical serialisation (its value, without any `"key":`).
    fn original_value_text(&self, node: usize) -> &'t [u8] {
        let n = &self.nodes[node];
        &self.text.as_bytes()[self.atom_start[n.value_first]..self.atom_end[n.last_atom]]
    }

    fn children(&self, node: usize) -> Vec<usize> {
        let mut children = Vec::with_capacity(self.nodes[node].live_children);
        let mut child = self.nodes[node].first_child;
        while child != NONE {
            children.push(child);
            child = self.nodes[child].next_sibling;
        }
        children
    }

    /// Whether atom `atom` is still in the live text.
    fn is_live_atom(&self, atom: usize) -> bool {
        self.live.is_empty() || self.live[atom]
    }

    /// The liveness flags and union-find links, made at the first edit (most payloads that need
    /// only S-4 are never edited before it).
    fn track_liveness(&mut self) {
        if self.live.is_empty() {
            let atoms = self.atom_start.len();
            self.live = vec![true; atoms];
            self.left = (0..=atoms).collect();
            self.right = (0..=atoms + 1).collect();
        }
    }

    /// Nearest live atom at or before `atom` (None before the first).
    fn live_at_or_before(&mut self, atom: usize) -> Option<usize> {
        // left[i + 1] links index i; left[0] is the sentinel "none".
        let mut i = atom + 1;
        while self.left[i] != i {
            i = self.left[i];
        }
        let root = i;
        let mut j = atom + 1;
        while self.left[j] != root {
            let next = self.left[j];
            self.left[j] = root;
            j = next;
        }
        (root > 0).then(|| root - 1)
    }

    /// Nearest live atom at or after `atom` (None past the last).
    fn live_at_or_after(&mut self, atom: usize) -> Option<usize> {
        let end = self.live.len();
        let mut i = atom.min(end);
        while self.right[i] != i {
            i = self.right[i];
        }
        let root = i;
        let mut j = atom.min(end);
        while self.right[j] != root {
            let next = self.right[j];
            self.right[j] = root;
            j = next;
        }
        (root < end).then_some(root)
    }

    fn kill_atom(&mut self, atom: usize) {
        self.live[atom] = false;
        self.left[atom + 1] = atom;
        self.right[atom] = atom + 1;
    }

    /// Live text before an edit that starts `head` bytes into atom `first` (`head` is the atom's
    /// unchanged beginning), back to the nearest safe cut (or the start of the text).
    fn left_context(&mut self, first: usize, head: &str) -> String {
        let mut collected: Vec<char> = Vec::new();
        let mut cursor = if first == 0 {
            None
        } else {
            self.live_at_or_before(first - 1)
        };
        let mut piece = head.to_owned();
        loop {
            for c in piece.chars().rev() {
                if let Some(&after) = collected.last() {
                    if tokenizer::is_piece_start(c, after) {
                        return collected.iter().rev().collect();
                    }
                }
                collected.push(c);
            }
            let Some(atom) = cursor else { break };
            piece = self.atom_text(atom).to_owned();
            cursor = if atom == 0 {
                None
            } else {
                self.live_at_or_before(atom - 1)
            };
        }
        collected.iter().rev().collect()
    }

    /// Live text after atom `last`, up to the nearest safe cut (or the end of the text).
    fn right_context(&mut self, last: usize) -> String {
        let mut collected = String::new();
        let mut previous: Option<char> = None;
        let mut cursor = self.live_at_or_after(last + 1);
        'atoms: while let Some(atom) = cursor {
            for c in self.atom_text(atom).chars() {
                if let Some(before) = previous {
                    if tokenizer::is_piece_start(before, c) {
                        break 'atoms;
                    }
                }
                collected.push(c);
                previous = Some(c);
            }
            cursor = self.live_at_or_after(atom + 1);
        }
        collected
    }

    /// Kills every live atom in `first..=last`, returning their text.
    fn kill_range(&mut self, first: usize, last: usize) -> String {
        let mut removed = String::new();
        let mut cursor = self.live_at_or_after(first);
        while let Some(atom) = cursor.filter(|&a| a <= last) {
            removed.push_str(self.atom_text(atom));
            self.kill_atom(atom);
            cursor = self.live_at_or_after(atom + 1);
        }
        removed
    }

    /// Applies one edit of the live text and records its receipt entry: either the live atoms
    /// `first..=last` removed, or (with `replacement`) atom `first` rewritten, where the new text
    /// keeps the atom's first `head` bytes (only the rest is counted as changed).
    fn apply(
        &mut self,
        entry: (Op, String, Option<usize>),
        first: usize,
        last: usize,
        replacement: Option<(usize, String)>,
    ) {
        let (op, path, index) = entry;
        self.track_liveness();
        let (left, removed, inserted) = match replacement {
            Some((head, text)) => {
                let old = self.atom_text(first).to_owned();
                let left = self.left_context(first, &old[..head]);
                let inserted = text[head..].to_owned();
                self.replaced.insert(first, text);
                (left, old[head..].to_owned(), inserted)
            }
            None => {
                let left = self.left_context(first, "");
                (left, self.kill_range(first, last), String::new())
            }
        };
        let right = self.right_context(last);
        let before_window = format!("{left}{removed}{right}");
        let after_window = format!("{left}{inserted}{right}");
        let tokens_before = self.tokens;
        let chars_before = self.chars;
        let tokens_after = (tokens_before + tokenizer::count(&after_window) as u64)
            .saturating_sub(tokenizer::count(&before_window) as u64);
        let chars_after =
            chars_before + inserted.chars().count() as u64 - removed.chars().count() as u64;
        self.tokens = tokens_after;
        self.chars = chars_after;
        self.receipt.push(ReceiptEntry {
            op,
            path,
            index,
            chars_before,
            chars_after,
            tokens_before,
            tokens_after,
        });
    }

    /// Removes a child from its container (one receipt application), with the comma that goes with
    /// it: its own when a live sibling precedes it, else the next live sibling's.
    fn remove_child(&mut self, child: usize, op: Op, path: String, index: Option<usize>) {
        let node = &self.nodes[child];
        let (prev, next, parent) = (node.prev_live, node.next_live, node.parent);
        let (mut first, mut last) = (node.span_first, node.last_atom);
        if prev != NONE {
            first = node.comma_atom;
        } else if next != NONE {
            last = self.nodes[next].comma_atom;
        }
        debug_assert!(first != NONE && last != NONE, "a later sibling has a comma");
        if prev != NONE {
            self.nodes[prev].next_live = next;
        }
        if next != NONE {
            self.nodes[next].prev_live = prev;
        }
        self.nodes[parent].live_children -= 1;
        self.apply((op, path, index), first, last, None);
    }

    fn path(&self, node: usize) -> String {
        let mut segments: Vec<&Node> = Vec::new();
        let mut cursor = node;
        while self.nodes[cursor].parent != NONE {
            segments.push(&self.nodes[cursor]);
            cursor = self.nodes[cursor].parent;
        }
        let mut path = String::new();
        for segment in segments.iter().rev() {
            if segment.key_atom != NONE {
                if !path.is_empty() || segment.parent != 0 {
                    path.push('.');
                }
                let literal = &self.text
                    [self.atom_start[segment.key_atom]..self.atom_end[segment.key_atom] - 1];
                let name = literal_text(&literal[1..literal.len() - 1], true)
                    .expect("canonical escapes are well formed");
                path.push_str(&name);
            } else {
                path.push_str(&format!("[{}]", segment.pos));
            }
        }
        path
    }

    /// S-1: pre-order; an array is deduplicated before its surviving entries are visited. Entries
    /// are compared by their original text, which is their current text: nothing inside an array is
    /// edited before the array itself is deduplicated.
    fn s1(&mut self, node: usize) {
        if self.nodes[node].kind == Kind::Array && self.nodes[node].live_children > 1 {
            let children = self.children(node);
            let duplicate = self.duplicates(&children);
            let mut kept = 0usize;
            let mut array_path: Option<String> = None;
            for (i, &child) in children.iter().enumerate() {
                if duplicate[i] {
                    let path = array_path.get_or_insert_with(|| self.path(node)).clone();
                    self.remove_child(child, Op::S1, path, Some(kept));
                } else {
                    self.nodes[child].pos = kept;
                    kept += 1;
                }
            }
        }
        let mut child = self.nodes[node].first_child;
        while child != NONE {
            if self.is_live(child) {
                self.s1(child);
            }
            child = self.nodes[child].next_sibling;
        }
    }

    /// Which entries repeat the text of an earlier entry. Entries are sorted by (length,
    /// fingerprint, index) first — integers only — and only runs with equal length and fingerprint
    /// are compared byte by byte, sorted by (text, index): each run of equal texts keeps its first
    /// entry. (Equal texts have equal keys, so a fingerprint collision costs time, never exactness.)
    fn duplicates(&self, children: &[usize]) -> Vec<bool> {
        let text_of = |i: usize| self.original_value_text(children[i]);
        let mut order: Vec<(usize, u64, usize)> = (0..children.len())
            .map(|i| {
                let text = text_of(i);
                (text.len(), fingerprint(text), i)
            })
            .collect();
        order.sort_unstable();
        let mut duplicate = vec![false; children.len()];
        for run in order.chunk_by_mut(|a, b| a.0 == b.0 && a.1 == b.1) {
            if run.len() < 2 {
                continue;
            }
            run.sort_unstable_by(|&(_, _, a), &(_, _, b)| {
                text_of(a).cmp(text_of(b)).then(a.cmp(&b))
            });
            for pair in run.windows(2) {
                duplicate[pair[1].2] = text_of(pair[0].2) == text_of(pair[1].2);
            }
        }
        duplicate
    }

    fn is_live(&self, node: usize) -> bool {
        self.is_live_atom(self.nodes[node].last_atom)
    }

    fn is_empty_value(&self, node: usize) -> bool {
        let n = &self.nodes[node];
        match n.kind {
            Kind::Null => true,
            Kind::Str => self.atom_text(n.last_atom) == "\"\"",
            Kind::Array | Kind::Object => n.live_children == 0,
            Kind::Scalar => false,
        }
    }

    /// S-2: post-order in key order; fields only, emptiness cascades.
    fn s2(&mut self, node: usize) {
        let kind = self.nodes[node].kind;
        if !matches!(kind, Kind::Array | Kind::Object) {
            return;
        }
        let mut next = self.nodes[node].first_child;
        while next != NONE {
            let child = next;
            next = self.nodes[child].next_sibling;
            if !self.is_live(child) {
                continue;
            }
            self.s2(child);
            let c = &self.nodes[child];
            if kind == Kind::Object
                && !c.protected
                && !c.contains_protected
                && self.is_empty_value(child)
            {
                let path = self.path(child);
                self.remove_child(child, Op::S2, path, None);
            }
        }
    }

    /// S-3: document order; string fields and array elements over the cap, never the root.
    fn s3(&mut self, node: usize) {
        let n = &self.nodes[node];
        match n.kind {
            Kind::Str if n.parent != NONE && !n.protected && n.long_chars > S3_CAP_CHARS => {
                let atom = n.last_atom;
                let removed_chars = n.long_chars - S3_CAP_CHARS;
                let literal = self.atom_text(atom);
                // The opening quote and the first 2,000 characters stay as they are.
                let head = 1 + literal_prefix_bytes(&literal.as_bytes()[1..], S3_CAP_CHARS);
                let mut truncated = String::with_capacity(head + 80);
                truncated.push_str(&literal[..head]);
                truncated.push_str(&marker(removed_chars, "S-3"));
                truncated.push('"');
                let path = self.path(node);
                self.apply((Op::S3, path, None), atom, atom, Some((head, truncated)));
            }
            Kind::Array | Kind::Object => {
                let mut child = n.first_child;
                while child != NONE {
                    if self.is_live(child) {
                        self.s3(child);
                    }
                    child = self.nodes[child].next_sibling;
                }
            }
            _ => {}
        }
    }

    /// The live text (when anything was edited).
    fn live_text(&self) -> String {
        let mut text = String::with_capacity(self.text.len());
        for atom in 0..self.atom_start.len() {
            if self.is_live_atom(atom) {
                text.push_str(self.atom_text(atom));
            }
        }
        text
    }

    /// The end offset (in characters) of the last protected field's span in the live text, and
    /// the outermost protected spans.
    fn protected_spans(&self) -> (usize, Vec<(usize, usize)>) {
        if !self.any_protected {
            return (0, Vec::new());
        }
        let mut chars = 0usize;
        let atoms = self.atom_start.len();
        let mut end_chars = vec![0usize; atoms];
        let mut start_chars = vec![0usize; atoms];
        for atom in 0..atoms {
            if self.is_live_atom(atom) {
                start_chars[atom] = chars;
                chars += self.atom_text(atom).chars().count();
                end_chars[atom] = chars;
            }
        }
        let mut floor = 0usize;
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for node in &self.nodes {
            if node.key_atom != NONE && node.protected && self.is_live_atom(node.span_first) {
                let (start, end) = (start_chars[node.span_first], end_chars[node.last_atom]);
                floor = floor.max(end);
                if spans.last().is_none_or(|&(_, prev_end)| start >= prev_end) {
                    spans.push((start, end));
                }
            }
        }
        (floor, spans)
    }
}

fn slice_chars(text: &str, start: usize, end: usize) -> &str {
    let (a, _) = tokenizer::char_boundary(text, start);
    let (b, _) = tokenizer::char_boundary(&text[a..], end - start);
    &text[a..a + b]
}

/// What the budget op shapes.
pub struct Submission<'s, 't> {
    /// The canonical form (JSON) or the raw text (text-only), tokenized once.
    pub text: &'s Tokenized<'t>,
    /// Its characters (code points).
    pub chars: u64,
    /// The operation set is "json".
    pub json: bool,
    /// What [`census::untouched_by_s1_to_s3`] says of the text, when the caller already knows
    /// (the request parser's walk takes the census); `None`: the op takes it itself.
    pub untouched: Option<bool>,
}

/// Runs the budget op on `submission`. For the "json" operation set the text must be compact
/// canonical JSON (the tree is read straight from it; anything else fails closed). The submitted
/// character count is the caller's; a wrong one cannot pass the reconciliation, which recounts the
/// shaped text.
///
/// Cost: the submitted text is tokenized once (by the caller). When keep_fields is empty and
/// [`census::untouched_by_s1_to_s3`] shows S-1..S-3 have nothing to act on, no tree is built.
/// Otherwise S-1..S-3 count only the windows
/// around their edits; when they edited anything, the edited text is counted once more, which
/// checks the windowed chain against a full count and (tokenized with its prefix analysis when
/// S-4 must run) serves the S-4 search. S-4 re-tokenizes
/// only locally and reports the exact count of its output.
pub fn shape(
    submission: &Submission<'_, '_>,
    keep: &HashSet<String>,
    budget: u64,
) -> Result<Shaping, Unreconciled> {
    let submitted = submission.text;
    let canonical = submitted.text();
    let submitted_tokens = submitted.count() as u64;
    let submitted_chars = submission.chars;
    let json = submission.json;
    let unchanged = |exhaustion: Option<Exhaustion>| Shaping {
        submitted_tokens,
        submitted_chars,
        shaped_text: canonical.to_owned(),
        shaped_tokens: submitted_tokens,
        shaped_chars: submitted_chars,
        receipt: Vec::new(),
        exhaustion,
    };
    if submitted_tokens <= budget {
        return Ok(unchanged(None));
    }
    // S-1..S-3 on the tree, unless a one-pass census shows they find nothing to act on (text-only
    // payloads have no tree); `edited` holds the live text when they changed anything.
    let (edited, floor, spans, mut receipt, tokens_now, chars_now) = if !json
        || (keep.is_empty()
            && submission
                .untouched
                .unwrap_or_else(|| census::untouched_by_s1_to_s3(canonical)))
    {
        (
            None,
            0,
            Vec::new(),
            Vec::new(),
            submitted_tokens,
            submitted_chars,
        )
    } else {
        let mut doc = Document::build(canonical, keep).ok_or(Unreconciled)?;
        doc.tokens = submitted_tokens;
        doc.chars = submitted_chars;
        doc.s1(0);
        if doc.tokens > budget {
            doc.s2(0);
        }
        if doc.tokens > budget {
            doc.s3(0);
        }
        let edited = (!doc.receipt.is_empty()).then(|| doc.live_text());
        let (floor, spans) = doc.protected_spans();
        (edited, floor, spans, doc.receipt, doc.tokens, doc.chars)
    };
    // The S-4 search needs the edited text tokenized with its prefix analysis; a fit needs only
    // its count.
    let retokenized = edited
        .as_deref()
        .filter(|_| tokens_now > budget)
        .map(Tokenized::new);
    let current = retokenized.as_ref().unwrap_or(submitted);
    let text = edited.as_deref().unwrap_or(current.text());
    // The chain of windowed counts must equal a full count of the text it describes.
    if let Some(edited) = edited.as_deref() {
        let full = retokenized
            .as_ref()
            .map_or_else(|| tokenizer::count(edited), Tokenized::count);
        if full as u64 != tokens_now || edited.chars().count() as u64 != chars_now {
            return Err(Unreconciled);
        }
    }
    let (shaped_text, shaped_tokens, shaped_chars) = if tokens_now <= budget {
        (text.to_owned(), tokens_now, chars_now)
    } else {
        let total = chars_now as usize;
        // The budget is a u64 (up to 2^53); usize is 32 bits in workerd. Saturating is exact: a
        // count is a usize, so `count <= usize::MAX` holds exactly when `count <= budget` does for
        // any budget above it (and here the budget is below the submitted count anyway).
        let fit = current.largest_fitting_prefix(
            floor,
            total - 1,
            usize::try_from(budget).unwrap_or(usize::MAX),
            |l| marker(total - l, "S-4"),
        );
        let Some(fit) = fit else {
            let protected_tokens = spans
                .iter()
                .map(|&(a, b)| tokenizer::count(slice_chars(text, a, b)) as u64)
                .sum();
            let protected_chars = spans.iter().map(|&(a, b)| (b - a) as u64).sum();
            let floor_text = slice_chars(text, 0, floor);
            return Ok(unchanged(Some(Exhaustion {
                protected_fields: spans.len() as u64,
                protected_tokens,
                protected_chars,
                floor_chars: floor as u64,
                floor_tokens: tokenizer::count(floor_text) as u64,
            })));
        };
        let marker = marker(total - fit.chars, "S-4");
        let mut shaped = text[..fit.bytes].to_owned();
        shaped.push_str(&marker);
        let chars = (fit.chars + marker.chars().count()) as u64;
        receipt.push(ReceiptEntry {
            op: Op::S4,
            path: "payload".to_owned(),
            index: None,
            chars_before: chars_now,
            chars_after: chars,
            tokens_before: tokens_now,
            tokens_after: fit.tokens as u64,
        });
        (shaped, fit.tokens as u64, chars)
    };
    let shaping = Shaping {
        submitted_tokens,
        submitted_chars,
        shaped_text,
        shaped_tokens,
        shaped_chars,
        receipt,
        exhaustion: None,
    };
    reconcile(&shaping)?;
    Ok(shaping)
}

/// The receipt's deltas must telescope to submitted − shaped, for tokens and for characters, and
/// the shaped figures must be the shaped text's own counts. (Token figures reaching this check are
/// full counts: the submitted count, the windowed chain already checked against a full count of the
/// post-S-3 text, and S-4's full count of its joined output.)
pub fn reconcile(shaping: &Shaping) -> Result<(), Unreconciled> {
    let mut tokens = shaping.submitted_tokens;
    let mut chars = shaping.submitted_chars;
    for entry in &shaping.receipt {
        if entry.tokens_before != tokens || entry.chars_before != chars {
            return Err(Unreconciled);
        }
        tokens = entry.tokens_after;
        chars = entry.chars_after;
    }
    let delta_tokens: i64 = shaping.receipt.iter().map(ReceiptEntry::delta_tokens).sum();
    let delta_chars: i64 = shaping.receipt.iter().map(ReceiptEntry::delta_chars).sum();
    let full_chars = shaping.shaped_text.chars().count() as u64;
    let reconciles = tokens == shaping.shaped_tokens
        && chars == shaping.shaped_chars
        && full_chars == shaping.shaped_chars
        && delta_tokens == shaping.submitted_tokens as i64 - shaping.shaped_tokens as i64
        && delta_chars == shaping.submitted_chars as i64 - shaping.shaped_chars as i64;
    if reconciles {
        Ok(())
    } else {
        Err(Unreconciled)
    }
}

#[cfg(test)]
mod tests {
    use super::super::json::{parse, stringify, write_string, JsValue};
    use super::*;

    fn run(payload: &str, budget: u64, keep: &[&str]) -> Shaping {
        let keep: HashSet<String> = keep.iter().map(|s| (*s).to_owned()).collect();
        match parse(payload) {
            Ok(value) => {
                let canonical = stringify(&value);
                let text = Tokenized::new(&canonical);
                let chars = canonical.chars().count() as u64;
                shape(
                    &Submission {
                        text: &text,
                        chars,
                        json: true,
                        untouched: None,
                    },
                    &keep,
                    budget,
                )
                .unwrap()
            }
            Err(_) => {
                let text = Tokenized::new(payload);
                let chars = payload.chars().count() as u64;
                let submission = Submission {
                    text: &text,
                    chars,
                    json: false,
                    untouched: None,
                };
                shape(&submission, &keep, budget).unwrap()
            }
        }
    }

    fn ops(s: &Shaping) -> Vec<(&'static str, String, Option<usize>)> {
        s.receipt
            .iter()
            .map(|e| (e.op.id(), e.path.clone(), e.index))
            .collect()
    }

    #[test]
    fn safe_cuts_split_counts_exactly() {
        let samples = [
            r#"{"alpha":[1,22,333,4444],"beta":"Hello, world!","gamma":null,"d":true}"#,
            r#"[{"id":"abc123","n":12345678,"t":"x y z"},{"id":"Zé","v":"日本語です","w":"ok"}]"#,
        ];
        for text in samples {
            let chars: Vec<char> = text.chars().collect();
            let total = tokenizer::count(text);
            for i in 1..chars.len() {
                if tokenizer::is_piece_start(chars[i - 1], chars[i]) {
                    let (a, b): (String, String) =
                        (chars[..i].iter().collect(), chars[i..].iter().collect());
                    assert_eq!(
                        tokenizer::count(&a) + tokenizer::count(&b),
                        total,
                        "cut {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn literal_chars_count_each_escape_as_one_character() {
        let naive = |content: &[u8]| {
            let (mut i, mut chars) = (0, 0);
            while i < content.len() {
                i += literal_char_len(&content[i..]);
                chars += 1;
            }
            chars
        };
        let fragments = [
            "a", "é", "中", "😀", r#"\""#, r"\\", r"\n", r"\u001f", r"\ud800", " ",
        ];
        let mut rng = crate::engine::test_rng::Lcg(11);
        for len in 0..300 {
            let content = rng.text(&fragments, len);
            assert_eq!(
                literal_chars(content.as_bytes()),
                naive(content.as_bytes()),
                "{content}"
            );
        }
    }

    #[test]
    fn fits_runs_nothing() {
        let s = run(r#"{"a":[1,1],"b":null}"#, 1000, &[]);
        assert!(s.receipt.is_empty());
        assert_eq!(s.shaped_text, r#"{"a":[1,1],"b":null}"#);
    }

    #[test]
    fn duplicates_equal_a_pairwise_scan() {
        let atoms = [
            "1",
            "12",
            "\"a\"",
            "\"ab\"",
            "null",
            "[1]",
            "{\"k\":1}",
            "[]",
            "21",
        ];
        let mut rng = crate::engine::test_rng::Lcg(17);
        let mut repeats = 0;
        for _ in 0..200 {
            let mut entries = Vec::new();
            for _ in 0..1 + rng.below(40) {
                let kind = rng.below(3);
                let mut pick = || atoms[rng.below(atoms.len())];
                entries.push(match kind {
                    0 => pick().to_owned(),
                    1 => format!("[{},{}]", pick(), pick()),
                    _ => format!("{{\"a\":{},\"b\":{}}}", pick(), pick()),
                });
            }
            let text = format!("[{}]", entries.join(","));
            let doc = Document::build(&text, &HashSet::new()).expect("canonical");
            let children = doc.children(0);
            let expected: Vec<bool> = (0..entries.len())
                .map(|i| entries[..i].contains(&entries[i]))
                .collect();
            assert_eq!(doc.duplicates(&children), expected, "{text}");
            repeats += expected.iter().filter(|&&d| d).count();
        }
        assert!(
            repeats > 500,
            "the random arrays must hold repeats ({repeats})"
        );
    }

    /// The census's `true` is a proof: on random payloads (nulls, empties, repeats, long strings,
    /// escapes, integer-like and duplicate keys) the tree's S-1..S-3 then edit nothing; and where
    /// the tree edits nothing and no literal is over the cap in bytes, the census says so.
    #[test]
    fn the_census_agrees_with_the_tree() {
        fn value(rng: &mut crate::engine::test_rng::Lcg, depth: usize, unique: &mut u64) -> String {
            let long = "y".repeat(S3_CAP_CHARS + 1 - (rng.below(2)));
            let pick = rng.below(if depth == 0 { 8 } else { 12 });
            match pick {
                0 => "null".to_owned(),
                1 => "\"\"".to_owned(),
                2 => rng.below(3).to_string(),
                3 | 4 => {
                    *unique += 1;
                    unique.to_string()
                }
                5 => "\"a\\\"b\"".to_owned(),
                6 => format!("\"{long}\""),
                7 => ["true", "false", "1.5e300", "[]", "{}"][rng.below(5)].to_owned(),
                8 | 9 => {
                    let items: Vec<String> = (0..rng.below(5))
                        .map(|_| value(rng, depth - 1, unique))
                        .collect();
                    format!("[{}]", items.join(","))
                }
                _ => {
                    let members: Vec<String> = (0..rng.below(5))
                        .map(|_| {
                            let key = ["a", "b", "c", "1", "0", "k\\n"][rng.below(6)];
                            format!("\"{key}\":{}", value(rng, depth - 1, unique))
                        })
                        .collect();
                    format!("{{{}}}", members.join(","))
                }
            }
        }
        let mut rng = crate::engine::test_rng::Lcg(29);
        let (mut proofs, mut edits) = (0, 0);
        for _ in 0..3000 {
            let mut unique = 100;
            let payload = value(&mut rng, 4, &mut unique);
            let canonical = stringify(&parse(&payload).expect("generated JSON"));
            let mut doc = Document::build(&canonical, &HashSet::new()).expect("canonical");
            doc.tokens = tokenizer::count(&canonical) as u64;
            doc.chars = canonical.chars().count() as u64;
            doc.s1(0);
            doc.s2(0);
            doc.s3(0);
            let untouched = census::untouched_by_s1_to_s3(&canonical);
            if untouched {
                assert!(doc.receipt.is_empty(), "{canonical}");
                proofs += 1;
            } else if doc.receipt.is_empty() {
                assert!(canonical.len() > S3_CAP_CHARS, "{canonical}");
            } else {
                edits += 1;
            }
        }
        assert!(
            proofs > 300 && edits > 300,
            "{proofs} proofs, {edits} edits"
        );
    }

    #[test]
    fn s1_dedups_pre_order_with_index_at_removal() {
        let s = run(r#"[[1,1,2,1],3,[1,1,2,1],3,{"x":[4,4]}]"#, 20, &[]);
        let got = ops(&s);
        assert_eq!(
            &got[..5],
            &[
                ("S-1", String::new(), Some(2)),
                ("S-1", String::new(), Some(2)),
                ("S-1", "[0]".to_owned(), Some(1)),
                ("S-1", "[0]".to_owned(), Some(2)),
                ("S-1", "[2].x".to_owned(), Some(1)),
            ]
        );
    }

    #[test]
    fn s2_cascades_children_first_and_respects_keep() {
        let s = run(
            r#"{"a":{"b":null,"c":{"d":[]}},"e":"","k":{"z":null},"f":[null,{}],"g":0}"#,
            20,
            &["k.z"],
        );
        let got: Vec<_> = ops(&s).into_iter().filter(|o| o.0 == "S-2").collect();
        let paths: Vec<&str> = got.iter().map(|o| o.1.as_str()).collect();
        assert_eq!(paths, ["a.b", "a.c.d", "a.c", "a", "e"]);
    }

    #[test]
    fn s3_truncates_long_strings_with_marker() {
        let long = "é".repeat(2001);
        let payload = format!(r#"{{"a":"{long}","b":["{long}"]}}"#);
        let s = run(&payload, 100, &[]);
        assert_eq!(
            ops(&s),
            [
                ("S-3", "a".to_owned(), None),
                ("S-3", "b[0]".to_owned(), None),
                ("S-4", "payload".to_owned(), None)
            ]
        );
        assert_eq!(s.receipt[0].delta_chars(), 1 - 59);
        let s = run(&payload, 1, &["a"]);
        assert!(s.receipt.is_empty());
        assert_eq!(s.exhaustion.unwrap().protected_chars, 2001 + 6);
    }

    #[test]
    fn escaped_keys_and_strings_read_from_the_canonical_text() {
        // Escapes straddle the S-3 cut; a lone surrogate is one character; keys are unescaped in
        // paths except lone surrogates, which keep their escape.
        let value = format!("{}\\n\\ud800\\\"{}", "a".repeat(1998), "b ".repeat(400));
        let payload = format!(r#"{{"k\"\ud83d\t":["{value}"],"\udc00":[[],[]],"z":null}}"#);
        let s = run(&payload, 100, &[]);
        let got = ops(&s);
        assert_eq!(
            &got[..3],
            &[
                ("S-1", "\\udc00".to_owned(), Some(1)),
                ("S-2", "z".to_owned(), None),
                ("S-3", "k\"\\ud83d\t[0]".to_owned(), None),
            ]
        );
        // Oracle: the tree path truncates the UTF-16 value by code points.
        let units: Vec<u16> = match parse(&payload).unwrap() {
            JsValue::Object(members) => match &members[0].1 {
                JsValue::Array(items) => match &items[0] {
                    JsValue::String(units) => units.clone(),
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            },
            _ => unreachable!(),
        };
        let chars = char::decode_utf16(units.iter().copied()).count();
        assert_eq!(chars, 2801);
        let mut truncated: Vec<u16> = Vec::new();
        for r in char::decode_utf16(units.iter().copied()).take(S3_CAP_CHARS) {
            match r {
                Ok(c) => truncated.extend(c.encode_utf16(&mut [0; 2]).iter()),
                Err(e) => truncated.push(e.unpaired_surrogate()),
            }
        }
        truncated.extend(marker(chars - S3_CAP_CHARS, "S-3").encode_utf16());
        let mut literal = String::new();
        write_string(&mut literal, &truncated);
        let submitted = tokenizer::count(&stringify(&parse(&payload).unwrap())) as u64;
        let s = run(&payload, submitted - 10, &[]);
        assert_eq!(s.receipt.last().unwrap().op, Op::S3);
        assert!(s.shaped_text.contains(&literal), "{}", s.shaped_text);
        let marker_chars = marker(801, "S-3").chars().count() as i64;
        // 801 value characters go, 802 of the canonical text (the removed `"` is written `\"`).
        assert_eq!(s.receipt.last().unwrap().delta_chars(), 802 - marker_chars);
    }

    #[test]
    fn s4_text_only_and_root_scalars() {
        let text = "not json at all, just some words here ".repeat(20);
        let s = run(&text, 25, &[]);
        assert_eq!(ops(&s), [("S-4", "payload".to_owned(), None)]);
        assert!(s.shaped_tokens <= 25);
        assert!(run(&text, 5, &[]).exhaustion.is_some());
        let long = format!("\"{}\"", "word ".repeat(1000));
        let s = run(&long, 40, &[]);
        assert_eq!(ops(&s), [("S-4", "payload".to_owned(), None)]);
        assert!(s.shaped_text.ends_with("S-4]"));
    }

    #[test]
    fn reconciliation_fails_closed_on_any_inconsistency() {
        let good = run(r#"{"a":[1,1],"b":null,"c":"words words words"}"#, 12, &[]);
        assert!(!good.receipt.is_empty());
        assert_eq!(reconcile(&good), Ok(()));
        let mut broken = good.clone();
        broken.receipt[0].tokens_after += 1;
        assert_eq!(reconcile(&broken), Err(Unreconciled));
        let mut broken = good.clone();
        broken.shaped_text.push(' ');
        assert_eq!(reconcile(&broken), Err(Unreconciled));
        let mut broken = good;
        broken.shaped_tokens -= 1;
        assert_eq!(reconcile(&broken), Err(Unreconciled));
    }

    #[test]
    fn exhaustion_returns_submission_unchanged() {
        let s = run(
            r#"{"keep":"a b c d e f g h i j k l m n o p","x":1}"#,
            3,
            &["keep"],
        );
        assert!(s.receipt.is_empty());
        assert_eq!(
            s.shaped_text,
            r#"{"keep":"a b c d e f g h i j k l m n o p","x":1}"#
        );
        let e = s.exhaustion.unwrap();
        assert_eq!(e.protected_fields, 1);
        assert_eq!(e.floor_chars, 41);
    }
}
