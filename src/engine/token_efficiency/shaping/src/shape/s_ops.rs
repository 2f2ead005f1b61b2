//! S-1 (repeated array entries), S-2 (empty fields, cascading) and S-3 (strings over the cap), each
//! a walk of the tree that edits the live text through [`super::edit`].

use super::tree::literal_prefix_bytes;
use super::{Document, Kind, NONE};
use crate::census::fingerprint;
use crate::ops::{marker, Op, S3_CAP_CHARS};

/// A fingerprint of a text's first and last 16 bytes (of the whole text when it is at most 32
/// bytes): equal texts give equal ones, at a cost that does not grow with the text.
fn ends_fingerprint(text: &[u8]) -> u64 {
    const ENDS: usize = 16;
    if text.len() <= 2 * ENDS {
        return fingerprint(text);
    }
    fingerprint(&text[..ENDS]) ^ fingerprint(&text[text.len() - ENDS..]).rotate_left(32)
}

impl Document<'_> {
    /// S-1: pre-order; an array is deduplicated before its surviving entries are visited. Entries
    /// are compared by their original text, which is their current text: nothing inside an array is
    /// edited before the array itself is deduplicated.
    pub(super) fn s1(&mut self, node: usize) {
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

    /// Which entries repeat the text of an earlier entry. Entries are sorted by (length, a
    /// fingerprint of their ends, index) first — integers only, and the ends are at most 32 bytes
    /// of each entry —, then within runs with equal keys by (fingerprint of the whole text, index),
    /// and only runs equal on that too are compared byte by byte, sorted by (text, index): each run
    /// of equal texts keeps its first entry. (Equal texts have equal keys, so a collision costs
    /// time, never exactness; most entries differ in length or ends and are never hashed whole.)
    pub(super) fn duplicates(&self, children: &[usize]) -> Vec<bool> {
        let text_of = |i: usize| self.original_value_text(children[i]);
        let mut order: Vec<(usize, u64, usize)> = (0..children.len())
            .map(|i| {
                let text = text_of(i);
                (text.len(), ends_fingerprint(text), i)
            })
            .collect();
        order.sort_unstable();
        let mut duplicate = vec![false; children.len()];
        for run in order.chunk_by_mut(|a, b| a.0 == b.0 && a.1 == b.1) {
            if run.len() < 2 {
                continue;
            }
            for entry in run.iter_mut() {
                entry.1 = fingerprint(text_of(entry.2));
            }
            run.sort_unstable();
            for same in run.chunk_by_mut(|a, b| a.1 == b.1) {
                if same.len() < 2 {
                    continue;
                }
                same.sort_unstable_by(|&(_, _, a), &(_, _, b)| {
                    text_of(a).cmp(text_of(b)).then(a.cmp(&b))
                });
                for pair in same.windows(2) {
                    duplicate[pair[1].2] = text_of(pair[0].2) == text_of(pair[1].2);
                }
            }
        }
        duplicate
    }

    pub(super) fn is_live(&self, node: usize) -> bool {
        self.is_live_atom(self.nodes[node].last_atom)
    }

    pub(super) fn is_empty_value(&self, node: usize) -> bool {
        let n = &self.nodes[node];
        match n.kind {
            Kind::Null => true,
            Kind::Str => self.atom_text(n.last_atom) == "\"\"",
            Kind::Array | Kind::Object => n.live_children == 0,
            Kind::Scalar => false,
        }
    }

    /// S-2: post-order in key order; fields only, emptiness cascades.
    pub(super) fn s2(&mut self, node: usize) {
        let kind = self.nodes[node].kind;
        if !matches!(kind, Kind::Array | Kind::Object) {
            return;
        }
        let mut next = self.nodes[node].first_child;
        // This object's path, written at its first removal and extended for each.
        let mut node_path: Option<String> = None;
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
                let parent_path = node_path.get_or_insert_with(|| self.path(node));
                let path = self.child_path(parent_path, child);
                self.remove_child(child, Op::S2, path, None);
            }
        }
    }

    /// S-3: document order; string fields and array elements over the cap, never the root.
    pub(super) fn s3(&mut self, node: usize) {
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
}
