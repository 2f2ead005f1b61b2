//! The mechanical operations S-1..S-4 of token-efficiency/v1 over the canonical text.
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
//!
//! Pieces: the arena over the canonical text ([`tree`]), its edits and their windowed counts
//! ([`edit`]), S-1..S-3 ([`s_ops`]); S-4 and the order of the operations are here.

mod edit;
mod recount;
mod s_ops;
mod shared;
#[cfg(test)]
mod tests;
mod tree;

use crate::census;
use crate::jsjson::char_count;
use crate::ops::{marker, Op};
use crate::receipt::{reconcile, Exhaustion, ReceiptEntry, Shaping, Unreconciled};
use crate::tokenizer::{self, Tokenized};
use std::collections::{HashMap, HashSet};

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
    replaced: HashMap<usize, String, tokenizer::IndexHash>,
    /// Per atom, whether it is in `replaced`; empty until the first rewrite (a flag read per atom
    /// instead of a hash lookup when the live text is walked).
    rewritten: Vec<bool>,
    /// Spans of the submitted text inside rewritten atoms, each between two cuts safe in it, whose
    /// counts S-3's windows took once: `(start, end, tokens)` in document order ([`edit`]).
    known: Vec<(usize, usize, usize)>,
    /// The submitted text's tokenization, when the op has it: counts of its stretches between
    /// safe cuts are read off it ([`Document::submitted_count_between`]) instead of counted again.
    submitted: Option<&'t Tokenized<'t>>,
    /// Per atom, whether it is in the live text; empty until the first edit (all live).
    live: Vec<bool>,
    /// Every atom killed or rewritten, in the order of the edits (an atom may repeat): the live
    /// text and its stretches are written from these alone, the atoms between them being the
    /// submitted text's bytes ([`Document::changed_atoms`]).
    changed: Vec<usize>,
    /// The windows' buffer, kept between edits ([`Document::apply`]).
    window: String,
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
/// around their edits, and the chain is checked: when S-4 must run, against the count of the
/// edited text's prefix analysis for the search (built from the submitted text's over the
/// stretches the edits left alone, [`shared`], re-tokenizing around the edits: a count of the
/// whole edited text that does not use the chain); when they brought it within budget, against a
/// recount of the stretches they changed ([`recount`]). S-4 re-tokenizes only locally and reports
/// the exact count of its output.
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
    let (edited, shared, recounted, floor, spans, mut receipt, tokens_now, chars_now) = if !json
        || (keep.is_empty()
            && submission
                .untouched
                .unwrap_or_else(|| census::untouched_by_s1_to_s3(canonical)))
    {
        (
            None,
            Vec::new(),
            None,
            0,
            Vec::new(),
            Vec::new(),
            submitted_tokens,
            submitted_chars,
        )
    } else {
        let mut doc = Document::build(canonical, keep).ok_or(Unreconciled)?;
        doc.submitted = Some(submitted);
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
        // Within budget now: no S-4 search follows, so the chain is checked over the changed
        // stretches only ([`recount`]).
        let recounted = edited
            .as_deref()
            .filter(|_| doc.tokens <= budget)
            .and_then(|edited| doc.recount_edited(edited, submitted_tokens));
        // An S-4 search follows: what the edited text shares with the submitted one.
        let shared = if edited.is_some() && doc.tokens > budget {
            doc.shared_stretches()
        } else {
            Vec::new()
        };
        let (floor, spans) = doc.protected_spans();
        (
            edited,
            shared,
            recounted,
            floor,
            spans,
            doc.receipt,
            doc.tokens,
            doc.chars,
        )
    };
    // The S-4 search needs the edited text tokenized with its prefix analysis (built from the
    // submitted text's over the stretches the edits left alone); a fit needs only its count.
    let retokenized = edited
        .as_deref()
        .filter(|_| tokens_now > budget)
        .map(|edited| submitted.edited(edited, &shared));
    let current = retokenized.as_ref().unwrap_or(submitted);
    let text = edited.as_deref().unwrap_or(current.text());
    // The chain of windowed counts must equal a count of the text it describes: the count of the
    // S-4 search's analysis, or else the recount over the changed stretches.
    if let Some(edited) = edited.as_deref() {
        let count = retokenized
            .as_ref()
            .map_or(recounted, |full| Some(full.count() as u64));
        // Its characters too: when S-4 follows (its marker states them); else the edited text is
        // the shaped one, whose characters `reconcile` counts against the same figure.
        let chars_differ = tokens_now > budget && char_count(edited) as u64 != chars_now;
        if count != Some(tokens_now) || chars_differ {
            return Err(Unreconciled);
        }
    }
    let (shaped_text, shaped_tokens, shaped_chars) = if tokens_now <= budget {
        // S-1..S-3 fit it (so they edited it): the edited text moves into the result, uncopied.
        drop(retokenized);
        let shaped = edited.unwrap_or_else(|| canonical.to_owned());
        (shaped, tokens_now, chars_now)
    } else {
        let total = chars_now as usize;
        // The budget is a u64 (up to 2^53); usize is 32 bits in workerd. Saturating is exact: a
        // count is a usize, so `count <= usize::MAX` holds exactly when `count <= budget` does for
        // any budget above it (and here the budget is below the submitted count anyway).
        // S-4 cuts at most all code points but the last; the count of them is known (checked
        // against the edited text above, and the shaped text's against its figure by `reconcile`).
        let fit = current.largest_fitting_prefix_short_of_end(
            floor,
            total,
            usize::try_from(budget).unwrap_or(usize::MAX),
            |l| marker(total - l, "S-4"),
        );
        let Some(fit) = fit else {
            let protected_tokens = spans
                .iter()
                .map(|&(a, b)| tokenizer::count(slice_chars(text, a, b)) as u64)
                .sum();
            let protected_chars = spans.iter().map(|&(a, b)| (b - a) as u64).sum();
            // The floor's count is read off the text's tokenization (which is of `text`: the
            // search ran over it), re-tokenizing only from the last piece boundary before it.
            let floor_text = slice_chars(text, 0, floor);
            let floor_tokens = current
                .count_with_suffix(floor_text.len(), "")
                .unwrap_or_else(|| tokenizer::count(floor_text));
            return Ok(unchanged(Some(Exhaustion {
                protected_fields: spans.len() as u64,
                protected_tokens,
                protected_chars,
                floor_chars: floor as u64,
                floor_tokens: floor_tokens as u64,
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
