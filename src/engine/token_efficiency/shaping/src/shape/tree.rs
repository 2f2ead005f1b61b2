//! The canonical text as an arena of atoms (brackets, commas, `"key":`, scalar literals) with the
//! tree of values over them, built by one scan of compact canonical JSON; and what the tree tells
//! without editing: paths, keep protection, the protected spans S-4 must not cut.

use super::{Document, KeepPath, Kind, Node, NONE};
use crate::jsjson::lexeme::{char_count, plain_run_seeing_high};
use crate::jsjson::number::push_integer;
use crate::ops::S3_CAP_CHARS;
use std::collections::{HashMap, HashSet};

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
pub(super) fn literal_char_len(content: &[u8]) -> usize {
    match content[0] {
        b'\\' if content[1] == b'u' => 6,
        b'\\' => 2,
        b if b < 0x80 => 1,
        b if b < 0xE0 => 2,
        b if b < 0xF0 => 3,
        _ => 4,
    }
}

/// Characters of a canonical literal's content (an escape is one character, a lone surrogate one),
/// given `escape_bytes`, the bytes its escapes hold beyond one each (`\\u` escapes are six, others
/// two), which the builder's scan for the literal's end has already summed: its UTF-8 lead bytes
/// ([`char_count`]: sixteen bytes at a time on wasm32) less those bytes (an escape's bytes are
/// ASCII, so each one is a lead byte). `high` is `false` only when no byte is non-ASCII, and then
/// the bytes are not looked at again.
fn literal_chars_given_escapes(content: &str, escape_bytes: usize, high: bool) -> usize {
    let lead_bytes = if high {
        char_count(content)
    } else {
        content.len()
    };
    lead_bytes - escape_bytes
}

/// Bytes of a canonical literal's content that hold its first `n` characters. Runs of eight ASCII
/// bytes without a backslash are eight characters and are taken whole (S-3 walks 2,000 characters
/// into every long string); any other byte starts one character, stepped over alone.
pub(super) fn literal_prefix_bytes(content: &[u8], n: usize) -> usize {
    const WORD: usize = 8;
    // Most long strings are plain ASCII: their first `n` characters are their first `n` bytes.
    let wanted = n.min(content.len());
    if plain_run_seeing_high(&content[..wanted]) == (wanted, false) {
        return wanted;
    }
    let (mut i, mut taken) = (0, 0);
    while i < content.len() && taken < n {
        if n - taken >= WORD {
            if let Some(word) = content.get(i..i + WORD) {
                if word.iter().all(|&b| b < 0x80 && b != b'\\') {
                    i += WORD;
                    taken += WORD;
                    continue;
                }
            }
        }
        i += literal_char_len(&content[i..]);
        taken += 1;
    }
    i
}

/// What the scan for a string literal's end learns of its content on the way.
struct ContentSeen {
    /// Bytes its escapes hold beyond one each.
    escape_bytes: usize,
    /// Whether any byte looked at has its high bit set.
    high: bool,
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
        self.string_end_seeing_content(start).map(|(end, _)| end)
    }

    /// [`Self::string_end`], also telling what [`literal_chars_given_escapes`] needs of the
    /// literal's content: the bytes its escapes hold beyond one each, and whether any byte looked
    /// at has its high bit set (`false`: the content is ASCII; `true` may be said of ASCII too).
    fn string_end_seeing_content(&self, start: usize) -> Option<(usize, ContentSeen)> {
        let bytes = self.doc.text.as_bytes();
        let mut i = start + 1;
        let mut seen = ContentSeen {
            escape_bytes: 0,
            high: false,
        };
        loop {
            let (run, high) = plain_run_seeing_high(&bytes[i..]);
            seen.high |= high;
            i += run;
            match bytes.get(i)? {
                b'"' => return Some((i + 1, seen)),
                b'\\' => {
                    let len = if bytes.get(i + 1)? == &b'u' { 6 } else { 2 };
                    seen.escape_bytes += len - 1;
                    i += len;
                }
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
                let (end, seen) = self.string_end_seeing_content(start)?;
                let atom = self.atom(start, end);
                let content = &self.doc.text[start + 1..end - 1];
                if content.len() > S3_CAP_CHARS {
                    self.doc.nodes[id].long_chars =
                        literal_chars_given_escapes(content, seen.escape_bytes, seen.high);
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
    pub(super) fn build(canonical: &'t str, keep: &HashSet<String>) -> Option<Document<'t>> {
        // Reserved once for ordinary JSON (an atom every few bytes, a node every few atoms) so the
        // arena is not copied while it grows; denser text still grows as usual.
        let doc = Document {
            text: canonical,
            atom_start: Vec::with_capacity(canonical.len() / 4 + 8),
            atom_end: Vec::with_capacity(canonical.len() / 4 + 8),
            replaced: HashMap::default(),
            rewritten: Vec::new(),
            known: Vec::new(),
            submitted: None,
            live: Vec::new(),
            changed: Vec::new(),
            window: String::new(),
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

    /// The text atom `atom` was rewritten to, if it was.
    pub(super) fn rewrite_of(&self, atom: usize) -> Option<&String> {
        if self.rewritten.get(atom).copied().unwrap_or(false) {
            self.replaced.get(&atom)
        } else {
            None
        }
    }

    pub(super) fn atom_text(&self, atom: usize) -> &str {
        // Only the atoms S-3 rewrote are looked up (a flag first, then the map).
        match self.rewrite_of(atom) {
            Some(text) => text,
            None => &self.text[self.atom_start[atom]..self.atom_end[atom]],
        }
    }

    /// The node's original canonical serialisation (its value, without any `"key":`).
    pub(super) fn original_value_text(&self, node: usize) -> &'t [u8] {
        let n = &self.nodes[node];
        &self.text.as_bytes()[self.atom_start[n.value_first]..self.atom_end[n.last_atom]]
    }

    pub(super) fn children(&self, node: usize) -> Vec<usize> {
        let mut children = Vec::with_capacity(self.nodes[node].live_children);
        let mut child = self.nodes[node].first_child;
        while child != NONE {
            children.push(child);
            child = self.nodes[child].next_sibling;
        }
        children
    }

    /// The receipt path of `node`: keys joined with `.`, positions as `[n]`, written into one
    /// string (a key is read back from its literal only when it holds an escape).
    pub(super) fn path(&self, node: usize) -> String {
        let mut segments: Vec<usize> = Vec::with_capacity(8);
        let mut cursor = node;
        while self.nodes[cursor].parent != NONE {
            segments.push(cursor);
            cursor = self.nodes[cursor].parent;
        }
        let mut path = String::new();
        for &id in segments.iter().rev() {
            self.push_path_segment(&mut path, id);
        }
        path
    }

    /// The receipt path of `child`, given its parent's path (S-2 removes many children of one
    /// object: the parent's path is written once, not walked again for each).
    pub(super) fn child_path(&self, parent_path: &str, child: usize) -> String {
        let mut path = String::with_capacity(parent_path.len() + 24);
        path.push_str(parent_path);
        self.push_path_segment(&mut path, child);
        path
    }

    /// Appends node `id`'s segment to the path of its parent: `.key` (no dot for a member of the
    /// root object), or `[n]` for an array element.
    fn push_path_segment(&self, path: &mut String, id: usize) {
        let segment = &self.nodes[id];
        if segment.key_atom != NONE {
            if !path.is_empty() || segment.parent != 0 {
                path.push('.');
            }
            let literal =
                &self.text[self.atom_start[segment.key_atom]..self.atom_end[segment.key_atom] - 1];
            let content = &literal[1..literal.len() - 1];
            if content.contains('\\') {
                let name = literal_text(content, true).expect("canonical escapes are well formed");
                path.push_str(&name);
            } else {
                path.push_str(content);
            }
        } else {
            path.push('[');
            push_integer(path, segment.pos as u64);
            path.push(']');
        }
    }

    /// The end offset (in characters) of the last protected field's span in the live text, and
    /// the outermost protected spans.
    pub(super) fn protected_spans(&self) -> (usize, Vec<(usize, usize)>) {
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
                chars += char_count(self.atom_text(atom));
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
