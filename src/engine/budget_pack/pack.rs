//! The selection: one greedy pass over one ranking, exactly as the contract describes it and as
//! ARCHITECTURE §8 reads it.
//!
//! - Ranking: required candidates first, then higher `priority` first, then `id` in UTF-16
//!   code-unit order (JavaScript `<`). Ids are unique, so the ranking is a total order.
//! - A candidate whose `sourceId` names no source is `source_missing`; one whose span is reversed
//!   (start > end), runs past its source (offsets in UTF-16 code units) or starts or ends between
//!   the two halves of a surrogate pair is `invalid_span`. An empty span (start = end) is valid.
//! - Required candidates are all-or-nothing: when `reservedUnits` plus the costs of every valid
//!   required candidate exceed `budgetUnits`, nothing is packed and every valid candidate is
//!   excluded as `required_set_over_budget` (broken ones keep their own reason). Required
//!   candidates are never deduplicated.
//! - Optional candidates are tried in ranking order; with `deduplicate`, one whose exact slice text
//!   (UTF-16, no normalisation) equals an already selected text is `duplicate_text` with
//!   `duplicateOf` = the earliest selected candidate with that text (checked before the budget);
//!   otherwise it is selected when `usedUnits + costUnits ≤ budgetUnits`, else excluded as `budget`
//!   and the pass continues with the next one.
//! - `usedUnits` = `reservedUnits` + the costs of the selected candidates.

use super::{Candidate, Request};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Why a candidate was not selected (the contract's `excluded[].reason` enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    InvalidSpan,
    SourceMissing,
    DuplicateText,
    Budget,
    RequiredSetOverBudget,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::InvalidSpan => "invalid_span",
            Reason::SourceMissing => "source_missing",
            Reason::DuplicateText => "duplicate_text",
            Reason::Budget => "budget",
            Reason::RequiredSetOverBudget => "required_set_over_budget",
        }
    }
}

/// One selected candidate: its index in `candidates` and the UTF-16 slice it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    pub candidate: usize,
    pub text: Vec<u16>,
}

/// One excluded candidate: its index, the reason and, for `duplicate_text`, the index of the
/// selected candidate it duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Excluded {
    pub candidate: usize,
    pub reason: Reason,
    pub duplicate_of: Option<usize>,
}

/// The outcome of one packing pass (both lists in ranking order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packing {
    pub ranking: Vec<usize>,
    pub selected: Vec<Selected>,
    pub excluded: Vec<Excluded>,
    pub used_units: u64,
    pub required_set_over_budget: bool,
}

/// Compares two candidates by the ranking.
pub fn rank_order(a: &Candidate, b: &Candidate) -> Ordering {
    b.required
        .cmp(&a.required)
        .then(b.priority.cmp(&a.priority))
        .then_with(|| a.id.encode_utf16().cmp(b.id.encode_utf16()))
}

/// The candidates' indices in ranking order.
pub fn ranking(candidates: &[Candidate]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| rank_order(&candidates[a], &candidates[b]));
    order
}

fn splits_surrogate_pair(text: &[u16], offset: usize) -> bool {
    offset > 0
        && offset < text.len()
        && (0xD800..=0xDBFF).contains(&text[offset - 1])
        && (0xDC00..=0xDFFF).contains(&text[offset])
}

/// The candidate's slice of its source, or why it has none.
pub fn resolve<'a>(req: &'a Request, candidate: &Candidate) -> Result<&'a [u16], Reason> {
    let source = req
        .sources
        .iter()
        .find(|s| s.id == candidate.source_id)
        .ok_or(Reason::SourceMissing)?;
    let (start, end) = (candidate.start as usize, candidate.end as usize);
    let text = source.text.as_slice();
    if start > end
        || end > text.len()
        || splits_surrogate_pair(text, start)
        || splits_surrogate_pair(text, end)
    {
        return Err(Reason::InvalidSpan);
    }
    Ok(&text[start..end])
}

/// Runs the selection over a validated request.
pub fn pack(req: &Request) -> Packing {
    let ranking = ranking(&req.candidates);
    let slices: Vec<Result<&[u16], Reason>> =
        req.candidates.iter().map(|c| resolve(req, c)).collect();
    let budget = u64::from(req.budget_units);
    let required_total: u64 = u64::from(req.reserved_units)
        + req
            .candidates
            .iter()
            .zip(&slices)
            .filter(|(c, slice)| c.required && slice.is_ok())
            .map(|(c, _)| u64::from(c.cost_units))
            .sum::<u64>();
    let any_valid_required = req
        .candidates
        .iter()
        .zip(&slices)
        .any(|(c, slice)| c.required && slice.is_ok());
    let required_set_over_budget = any_valid_required && required_total > budget;

    let mut selected: Vec<Selected> = Vec::new();
    let mut excluded: Vec<Excluded> = Vec::new();
    // First selected candidate for each selected text.
    let mut first_with_text: BTreeMap<&[u16], usize> = BTreeMap::new();
    let mut used_units = u64::from(req.reserved_units);
    for &index in &ranking {
        let candidate = &req.candidates[index];
        let exclude = |reason, duplicate_of| Excluded {
            candidate: index,
            reason,
            duplicate_of,
        };
        let slice = match slices[index] {
            Err(reason) => {
                excluded.push(exclude(reason, None));
                continue;
            }
            Ok(slice) => slice,
        };
        if required_set_over_budget {
            excluded.push(exclude(Reason::RequiredSetOverBudget, None));
            continue;
        }
        if !candidate.required && req.deduplicate {
            if let Some(&first) = first_with_text.get(slice) {
                excluded.push(exclude(Reason::DuplicateText, Some(first)));
                continue;
            }
        }
        let cost = u64::from(candidate.cost_units);
        // Required candidates fit by the all-or-nothing check above.
        if candidate.required || used_units + cost <= budget {
            used_units += cost;
            first_with_text.entry(slice).or_insert(index);
            selected.push(Selected {
                candidate: index,
                text: slice.to_vec(),
            });
        } else {
            excluded.push(exclude(Reason::Budget, None));
        }
    }
    Packing {
        ranking,
        selected,
        excluded,
        used_units,
        required_set_over_budget,
    }
}
