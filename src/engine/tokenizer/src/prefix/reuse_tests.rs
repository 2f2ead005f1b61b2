//! The reuse of a submitted text's prefix analysis for an edited one (`reuse.rs`) against fresh
//! analyses: random edits of random atom texts, long pieces kept across the edit, and stretches
//! that are not what their caller claims.

use super::analysis::Analysis;
use super::reuse::{self, Same};
use super::search::Tokenized;
use super::tests::{brute_force, random_text};
use crate::{count, split};
use context_meter_test_rng::Lcg;

/// A random edit of `atoms` (deleted runs, replaced and inserted atoms, as S-1..S-3 make): the
/// edited text and the stretches it shares with the original.
fn edited(rng: &mut Lcg, atoms: &[String]) -> (String, Vec<Same>) {
    let (mut new, mut same) = (String::new(), Vec::<Same>::new());
    let mut i = 0;
    while i < atoms.len() {
        match rng.below(12) {
            0 => i += 1 + rng.below(4),
            1 => {
                let n = 1 + rng.below(3);
                new.push_str(&random_text(rng, n));
            }
            _ => {
                let (at, to, len) = (
                    atoms[..i].iter().map(String::len).sum(),
                    new.len(),
                    atoms[i].len(),
                );
                match same.last_mut() {
                    Some(last) if last.from + last.len == at && last.to + last.len == to => {
                        last.len += len
                    }
                    _ => same.push(Same { from: at, to, len }),
                }
                new.push_str(&atoms[i]);
                i += 1;
            }
        }
    }
    (new, same)
}

#[test]
fn reused_analyses_of_edited_texts_equal_fresh_ones() {
    let mut rng = Lcg(31);
    let mut handed_over = 0;
    for round in 0..300 {
        let len = 5 + rng.below(60);
        let atoms: Vec<String> = (0..len).map(|_| random_text(&mut rng, 1)).collect();
        let old = atoms.concat();
        let (new, same) = edited(&mut rng, &atoms);
        let whole = Analysis::with_segment(&new, usize::MAX);
        for segment in [1, 2, 5, 13] {
            let original = Analysis::with_segment(&old, segment);
            let (reused, handovers) = reuse::reuse_counting(&original, &old, &new, &same, segment)
                .expect("stretches as claimed");
            handed_over += handovers;
            assert_eq!(reused.total(), count(&new), "{old:?} -> {new:?}");
            for cut in 0..=new.len() {
                let (a, b) = (reused.safe_boundary(cut), whole.safe_boundary(cut));
                assert_eq!(
                    reused.boundary(a),
                    whole.boundary(b),
                    "round {round} {old:?} -> {new:?} cut {cut} segment {segment}"
                );
                for budget in [0, 3, 10] {
                    assert_eq!(
                        reused.lower_bound_fits(cut, budget),
                        whole.tokens_before(b) <= budget,
                    );
                }
            }
            if !new.is_empty() && round % 10 == 0 {
                let tokenized = Tokenized::with_segment(&old, segment)
                    .edited_with_segment(&new, &same, segment);
                let max = new.chars().count() - 1;
                for budget in [2, 7, 15] {
                    let suffix = |l: usize| format!("[…{l}]");
                    let got = tokenized
                        .largest_fitting_prefix(0, max, budget, suffix)
                        .map(|fit| fit.chars);
                    assert_eq!(got, brute_force(&new, 0, max, budget, suffix));
                }
            }
        }
    }
    assert!(
        handed_over > 1000,
        "edits that hand over to the old analysis: {handed_over}"
    );
}

#[test]
fn reused_long_pieces_search_like_fresh_ones() {
    // A long letter run and a long dash run, each shifted by an edit before it, and an edit after.
    let atoms = [
        "The quick, 1 {\"a\":2} and ".to_owned(),
        "ab".repeat(700),
        " then 3 more: ".to_owned(),
        "-".repeat(1500),
        " end of text\n".to_owned(),
    ];
    let old = atoms.concat();
    let new = [
        &atoms[0][..7],
        "{\"x\":1}",
        &atoms[1],
        &atoms[2][5..],
        &atoms[3],
        "é",
        &atoms[4],
    ]
    .concat();
    let len: Vec<usize> = atoms.iter().map(String::len).collect();
    let same = [
        Same {
            from: 0,
            to: 0,
            len: 7,
        },
        Same {
            from: len[0],
            to: 14,
            len: len[1],
        },
        Same {
            from: len[0] + len[1] + 5,
            to: 14 + len[1],
            len: len[2] - 5 + len[3],
        },
        Same {
            from: len[0] + len[1] + len[2] + len[3],
            to: 14 + len[1] + len[2] - 5 + len[3] + "é".len(),
            len: len[4],
        },
    ];
    let original = Tokenized::with_segment(&old, 64);
    let tokenized = original.edited_with_segment(&new, &same, 64);
    assert_eq!(
        tokenized.analysis.long_pieces.len(),
        2,
        "both long pieces carried over"
    );
    assert!(tokenized.analysis.long_pieces.iter().all(|(start, long)| {
        let piece = &new.as_bytes()[*start
            ..*start
                + long
                    .ids
                    .iter()
                    .map(|&id| crate::tables::token_bytes(id).len())
                    .sum::<usize>()];
        split::run_kind(piece).is_some()
    }));
    assert_eq!(tokenized.count(), count(&new));
    let max = new.chars().count() - 1;
    for budget in [40, 300, 500, 700] {
        let suffix = |l: usize| format!("[…truncated: {l}]");
        let got = tokenized
            .largest_fitting_prefix(0, max, budget, suffix)
            .map(|fit| fit.chars);
        assert_eq!(
            got,
            brute_force(&new, 0, max, budget, suffix),
            "budget {budget}"
        );
    }
}

#[test]
fn stretches_not_as_claimed_are_refused() {
    let old = "The quick brown fox";
    let new = "The quick red fox";
    let original = Analysis::with_segment(old, 1);
    let claims: [&[Same]; 5] = [
        // Past the end of the address space.
        &[Same {
            from: 1,
            to: 1,
            len: usize::MAX,
        }],
        // Unequal bytes.
        &[Same {
            from: 0,
            to: 0,
            len: 12,
        }],
        // Out of range.
        &[Same {
            from: 15,
            to: 13,
            len: 5,
        }],
        // Out of order.
        &[
            Same {
                from: 15,
                to: 13,
                len: 4,
            },
            Same {
                from: 0,
                to: 0,
                len: 10,
            },
        ],
        // Overlapping.
        &[
            Same {
                from: 0,
                to: 0,
                len: 10,
            },
            Same {
                from: 5,
                to: 5,
                len: 2,
            },
        ],
    ];
    for same in claims {
        assert!(
            reuse::reuse(&original, old, new, same, 1).is_none(),
            "{same:?}"
        );
    }
    let fine = [
        Same {
            from: 0,
            to: 0,
            len: 10,
        },
        Same {
            from: 15,
            to: 13,
            len: 4,
        },
    ];
    let reused = reuse::reuse(&original, old, new, &fine, 1).expect("as claimed");
    assert_eq!(reused.total(), count(new));
}
