//! The levers against the reference, case by case.

use super::*;

fn chunk(id: &str, category: &str, score: f64, text: &str) -> Chunk {
    Chunk {
        id: id.into(),
        category: category.into(),
        score,
        text: text.into(),
    }
}

#[test]
fn top_k_overflow_lowers_recall_honestly() {
    let chunks: Vec<Chunk> = (0..5)
        .map(|i| chunk(&i.to_string(), "a", 0.5 + i as f64 / 10.0, "t"))
        .collect();
    let out = c9_filter(&chunks, &[], None);
    assert_eq!(out.selected, vec![4, 3, 2]);
    assert_eq!(out.recall(), 0.6);
    assert_eq!(out.signal, Signal::Ok);
}

#[test]
fn lexical_terms_fold_marks_and_case() {
    assert_eq!(
        lexical_terms("Café CAFE a ÉCOLE x2"),
        vec!["cafe", "ecole", "x2"]
    );
}

#[test]
fn the_hard_cap_holds_where_the_reference_two_block_branch_overruns() {
    let blocks = vec!["abc".to_owned(), "defgh".to_owned()];
    let out = truncate_turn(&blocks, 5);
    assert!(js_length(&out.blocks.join("\n")) <= 5);
    assert_eq!(out.blocks, vec!["".to_owned(), "def…".to_owned()]);
}

#[test]
fn slicing_never_splits_a_surrogate_pair() {
    assert_eq!(fit_budget("a😀bc", 3), "a…");
}

#[test]
fn estimate_is_a_ceiling_of_chars_over_four() {
    assert_eq!(
        (estimate(0.0), estimate(1.0), estimate(4.0), estimate(5.0)),
        (0.0, 1.0, 1.0, 2.0)
    );
}
