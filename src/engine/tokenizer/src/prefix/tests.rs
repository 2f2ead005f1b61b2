//! The prefix machinery against brute force: safe boundaries, joined counts, healed merges and
//! searches (inside long pieces, after a jump, inside whitespace) on seeded random texts.

use super::analysis::{count_joined, lookahead_before, Analysis, SEGMENT};
use super::chars::{char_boundary, char_boundary_near_end};
use super::long_piece::{longest_run_token, LongPiece, MAX_TOKEN_BYTES};
use super::run_bound::RunBound;
use super::search::Tokenized;
use crate::{bpe, count, largest_fitting_prefix, split};
use context_meter_test_rng::Lcg;

pub(super) fn brute_force(
    text: &str,
    floor: usize,
    max: usize,
    budget: usize,
    suffix: impl Fn(usize) -> String,
) -> Option<usize> {
    let cuts: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let max = max.min(cuts.len() - 1);
    (floor..=max)
        .rev()
        .find(|&l| count(&format!("{}{}", &text[..cuts[l]], suffix(l))) <= budget)
}

/// Every segment size the searches are checked with: one checkpoint per piece, a few pieces
/// per segment, and the production size (one segment for these short texts).
const SEGMENTS: [usize; 3] = [1, 13, SEGMENT];

/// [`largest_fitting_prefix`] with checkpoints every `segment` bytes.
fn search(
    text: &str,
    floor: usize,
    max: usize,
    budget: usize,
    suffix: impl FnMut(usize) -> String,
    segment: usize,
) -> Option<usize> {
    Tokenized::with_segment(text, segment)
        .largest_fitting_prefix(floor, max, budget, suffix)
        .map(|fit| fit.chars)
}

/// Asserts that the search over `text` with checkpoints every `segment` bytes finds what
/// [`brute_force`] finds, for cuts from `floor` to the last code point but one (`what` names
/// the case); returns that answer.
fn search_equals_brute_force(
    text: &str,
    floor: usize,
    budget: usize,
    suffix: impl Fn(usize) -> String,
    segment: usize,
    what: &str,
) -> Option<usize> {
    let max = text.chars().count() - 1;
    let expected = brute_force(text, floor, max, budget, &suffix);
    let got = search(text, floor, max, budget, &suffix, segment);
    assert_eq!(got, expected, "{what} budget {budget} segment {segment}");
    expected
}

pub(super) fn random_text(rng: &mut Lcg, len: usize) -> String {
    let atoms = [
        "a",
        "b",
        "The",
        " quick",
        "'s",
        "'LL",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\t",
        "1",
        "23",
        "{",
        "}",
        "\"",
        ":",
        ",",
        "é",
        "中",
        "\u{FEFF}",
        "\u{85}",
        "👩‍👩‍👧",
        "e\u{301}",
        "[",
        "…",
        "x",
        "S-4",
    ];
    (0..len).map(|_| atoms[rng.below(atoms.len())]).collect()
}

#[test]
fn safe_boundaries_do_not_depend_on_the_segment_size() {
    let mut rng = Lcg(17);
    let mut segmented = 0;
    for _ in 0..200 {
        let len = rng.below(50);
        let text = random_text(&mut rng, len);
        let whole = Analysis::with_segment(&text, usize::MAX);
        for segment in [1, 2, 5, 13] {
            let analysis = Analysis::with_segment(&text, segment);
            assert_eq!(analysis.total(), count(&text), "{text:?}");
            segmented += usize::from(analysis.checkpoints.len() > 2);
            for cut in 0..=text.len() {
                let (a, b) = (analysis.safe_boundary(cut), whole.safe_boundary(cut));
                assert_eq!(
                    analysis.boundary(a),
                    whole.boundary(b),
                    "{text:?} cut {cut} segment {segment}"
                );
                for budget in [0, 3, 10] {
                    assert_eq!(
                        analysis.lower_bound_fits(cut, budget),
                        whole.tokens_before(b) <= budget,
                        "{text:?} cut {cut} segment {segment} budget {budget}"
                    );
                }
            }
        }
    }
    assert!(segmented > 300, "texts of several segments: {segmented}");
}

/// The count pass's checkpoint after a kept long whitespace piece scans only from its own start
/// (`lookahead_before_counted`): every checkpoint's lookahead is [`lookahead_before`] of the
/// piece before it, scanned whole, with each kind of whitespace run and what may follow it.
#[test]
fn checkpoints_after_long_whitespace_runs_look_as_far_as_their_pieces() {
    let mut checked = 0;
    for run in [" ", "\t", "\u{3000}", " \n", "\r\n"] {
        for tail in ["", "x", " x", "\n y", "  ", "\u{3000}\u{3000}z", "\t\t-"] {
            let text = format!("{}{tail}", run.repeat(3000 / run.len()));
            let bytes = text.as_bytes();
            let starts: Vec<usize> = split::pieces(&text).map(|piece| piece.start).collect();
            for segment in [1, 64, SEGMENT] {
                let analysis = Analysis::with_segment(&text, segment);
                assert_eq!(analysis.total(), count(&text), "{run:?} {tail:?}");
                for at in &analysis.checkpoints {
                    let previous = starts.iter().rev().find(|&&s| s < at.start);
                    let plain = previous.map_or(0, |&p| lookahead_before(bytes, p, at.start));
                    assert_eq!(
                        at.lookahead_before, plain,
                        "{run:?} {tail:?} at {}",
                        at.start
                    );
                    checked += usize::from(previous.is_some_and(|&p| at.start - p > 1024));
                }
            }
        }
    }
    // Checkpoints right after a long whitespace piece (the shortcut's case).
    assert!(checked >= 40, "{checked}");
}

/// `Tokenized::tokens_before` answers at every piece start (and the end) what the pieces before
/// it count, whatever the segment size, and nothing at any other byte; at a safe cut it is the
/// count of the text before it.
#[test]
fn tokens_before_a_piece_start_are_the_counts_before_it() {
    let mut rng = Lcg(29);
    let (mut starts, mut safe) = (0, 0);
    for _ in 0..150 {
        let len = rng.below(60);
        let text = random_text(&mut rng, len);
        let mut before = vec![None; text.len() + 1];
        let mut tokens = 0;
        for piece in split::pieces(&text) {
            before[piece.start] = Some(tokens);
            tokens += count(&text[piece.clone()]);
        }
        before[text.len()] = Some(tokens);
        for segment in [1, 3, 16, SEGMENT] {
            let tokenized = Tokenized::with_segment(&text, segment);
            for (at, expected) in before.iter().enumerate() {
                assert_eq!(tokenized.tokens_before(at), *expected, "{text:?} at {at}");
                let cut = |c: (Option<char>, Option<char>)| match c {
                    (Some(x), Some(y)) => crate::is_piece_start(x, y),
                    _ => true,
                };
                if text.is_char_boundary(at)
                    && cut((text[..at].chars().next_back(), text[at..].chars().next()))
                {
                    assert_eq!(expected, &Some(count(&text[..at])), "{text:?} at {at}");
                    safe += 1;
                }
                starts += usize::from(expected.is_some());
            }
        }
    }
    assert!(starts > 2000 && safe > 1000, "{starts} {safe}");
}

/// `Tokenized::count_with_suffix` is the count of the joined text at every cut, also inside a
/// long piece (healed from its kept merge); `long_piece_within` finds exactly the long pieces.
#[test]
fn counts_with_a_suffix_equal_counts_of_the_joined_text() {
    let mut rng = Lcg(31);
    let mut inside_long = 0;
    for round in 0..12 {
        let run = ["a", "M", "-", "x"][round % 4].repeat(1100 + rng.below(300));
        let text = format!(
            "{}\"{run}\"{}",
            random_text(&mut rng, 20),
            random_text(&mut rng, 20)
        );
        let tokenized = Tokenized::with_segment(&text, [64, SEGMENT][round % 2]);
        // The run's piece may start before its quote (punctuation merges with punctuation).
        let (before_run, after_run) = (text.find('"').unwrap(), text.rfind('"').unwrap());
        assert!(tokenized.long_piece_within(0, after_run), "{round}");
        assert!(
            !tokenized.long_piece_within(after_run + 1, text.len()),
            "{round}"
        );
        let suffix = random_text(&mut rng, 6) + "[…truncated: 9 chars removed]";
        for cut in (0..=text.len())
            .filter(|&c| text.is_char_boundary(c))
            .step_by(7)
        {
            let expected = count(&(text[..cut].to_owned() + &suffix));
            assert_eq!(
                tokenized.count_with_suffix(cut, &suffix),
                Some(expected),
                "cut {cut}"
            );
            inside_long += usize::from(cut > before_run + 1100 && cut < after_run);
        }
    }
    assert!(inside_long > 100, "{inside_long}");
}

#[test]
fn joined_counts_equal_counts_of_the_joined_text() {
    let mut rng = Lcg(7);
    for _ in 0..300 {
        let (head_len, tail_len) = (rng.below(40), rng.below(6));
        let head = random_text(&mut rng, head_len);
        let tail = random_text(&mut rng, tail_len);
        assert_eq!(
            count_joined(&head, &tail),
            count(&format!("{head}{tail}")),
            "{head:?}+{tail:?}"
        );
    }
}

#[test]
fn prefix_search_equals_brute_force_with_an_s4_marker() {
    let mut rng = Lcg(42);
    let mut found = 0;
    for _ in 0..250 {
        let len = 1 + rng.below(60);
        let text = random_text(&mut rng, len);
        let total = text.chars().count();
        let floor = rng.below(total / 2 + 1);
        let max = total - 1 + rng.below(3);
        let budget = rng.below(count(&text) + 30);
        let marker = |l: usize| {
            format!(
                "[…truncated: {} chars removed under token-efficiency/v1 S-4]",
                total - l
            )
        };
        let expected = brute_force(&text, floor, max, budget, marker);
        let segment = SEGMENTS[rng.below(SEGMENTS.len())];
        let fit = Tokenized::with_segment(&text, segment)
            .largest_fitting_prefix(floor, max, budget, marker);
        let got = fit.map(|fit| fit.chars);
        assert_eq!(
            got, expected,
            "{text:?} floor {floor} max {max} budget {budget} segment {segment}"
        );
        if let Some(fit) = fit {
            let bytes = text
                .char_indices()
                .nth(fit.chars)
                .map_or(text.len(), |c| c.0);
            assert_eq!(
                fit.bytes, bytes,
                "{text:?}: byte cut of {} chars",
                fit.chars
            );
            let joined = format!("{}{}", &text[..fit.bytes], marker(fit.chars));
            assert_eq!(fit.tokens, count(&joined), "{text:?}: joined count");
        }
        found += usize::from(got.is_some());
    }
    assert!(
        found > 50,
        "the random cases must exercise fitting prefixes ({found})"
    );
}

const ALPHABETS: [&[&str]; 10] = [
    &["a"],
    &["a", "b"],
    &["e", "t", "a", "o", "i", "n", "s", "h", "r", "d", "l", "u"],
    &["q", "w", "x", "z", "j", "k", "v", "y", "A", "Q", "Z"],
    &["é", "ü", "ß", "ñ", "a", "e"],
    &["中", "文", "字", "日", "本", "語", "한", "국"],
    &["="],
    &["-", "=", "*", "#", "!", "?", ".", "/"],
    &["😀", "👍", "🏽", "\u{200d}", "❤", "\u{fe0f}", "→", "★"],
    &["\u{e000}", "\u{10fffd}", "\u{1d400}", "\u{20a0}", "}", "{"],
];

#[test]
fn healed_prefix_counts_equal_direct_merges_at_every_cut() {
    let mut rng = Lcg(99);
    for alphabet in ALPHABETS {
        // One piece meets every extra (the run memo is keyed by both).
        let len = 1500 + rng.below(800);
        let word = rng.text(alphabet, len);
        let piece = word.as_bytes();
        let long = crate::cache::with(|caches| LongPiece::new(piece, split::Run::Letters, caches));
        for extra in ["", "=", "xy", "\r\n"] {
            let mut direct = Vec::new();
            for (cut, _) in word.char_indices().skip(1).step_by(3) {
                direct.clear();
                bpe::merge(&[&piece[..cut], extra.as_bytes()].concat(), &mut direct);
                let healed = long.prefix_count(piece, cut, extra.as_bytes());
                assert_eq!(
                    healed,
                    direct.len(),
                    "{alphabet:?} cut {cut} extra {extra:?}"
                );
            }
        }
    }
}

#[test]
fn prefix_search_inside_a_long_piece_equals_brute_force() {
    let mut rng = Lcg(5);
    for alphabet in ALPHABETS {
        let len = 1200 + rng.below(600);
        let word = rng.text(alphabet, len);
        let text = format!("{{\"k\": \"{word}\"}}\n");
        let total = text.chars().count();
        let marker = |l: usize| format!("[…truncated: {} chars removed]", total - l);
        for _ in 0..3 {
            let budget = 10 + rng.below(count(&text));
            let floor = rng.below(5);
            let segment = SEGMENTS[rng.below(SEGMENTS.len())];
            let what = format!("{alphabet:?}");
            search_equals_brute_force(&text, floor, budget, marker, segment, &what);
        }
        for tail in ["x", "\n\n=", "= \n", "1"] {
            let suffix = |l: usize| format!("{tail}{}", total - l);
            let budget = count(&text) / 2;
            let segment = SEGMENTS[rng.below(SEGMENTS.len())];
            let what = format!("{alphabet:?} tail {tail:?}");
            search_equals_brute_force(&text, 0, budget, suffix, segment, &what);
        }
    }
}

/// Runs of one unit far longer than the budget: the search fails hundreds of probes in a row
/// and jumps to the piece's bound ([`Analysis::long_piece_jump`]); small budgets put the
/// answer near that bound (runs of "L" merge into tokens as long as the longest they hold).
#[test]
fn prefix_search_after_a_long_piece_jump_equals_brute_force() {
    let units = ["L", "a", "-", "=", " ", "ab", "é", " \t", "!?"];
    let shapes = ["{}", "x {}", "{}\n", "{{\"k\":\"{}\"}}"];
    let tails = ["[…truncated: {} chars]", "", "=== {}", "LL{}", " \n"];
    let mut rng = Lcg(17);
    for (i, unit) in units.iter().enumerate() {
        let run = unit.repeat(1400 / unit.len());
        let text = shapes[i % shapes.len()].replacen("{}", &run, 1);
        let total = text.chars().count();
        let tail = tails[i % tails.len()];
        let suffix = |l: usize| tail.replacen("{}", &(total - l).to_string(), 1);
        for budget in [1, 3 + rng.below(20), 40 + rng.below(40)] {
            let floor = rng.below(3);
            let segment = SEGMENTS[rng.below(SEGMENTS.len())];
            let what = format!("unit {unit:?}");
            search_equals_brute_force(&text, floor, budget, suffix, segment, &what);
        }
    }
    // Runs whose tokens are as long as the longest they hold ("LLLL", "aaaaaaaa"), with
    // budgets large enough that the answer lies just under the bound: a bound any tighter than
    // the proof allows cuts the answer off.
    for (unit, len, budget, tail) in [
        ("L", 6000, 1000, ""),
        ("a", 8000, 700, "[…truncated: {} chars]"),
        // Dashes merge into tokens shorter than the longest dash token: the run bound's case.
        ("-", 3000, 30, "[…truncated: {} chars]"),
    ] {
        let text = format!("x{}", unit.repeat(len));
        let total = text.chars().count();
        let suffix = |l: usize| tail.replacen("{}", &(total - l).to_string(), 1);
        let what = format!("unit {unit:?}");
        let expected = search_equals_brute_force(&text, 0, budget, suffix, SEGMENT, &what);
        // (Dashes average fewer bytes a token than the longest dash token: no such floor.)
        assert!(
            expected.is_some_and(|chars| unit == "-" || chars * 10 > len * 6),
            "{expected:?}"
        );
    }
}

#[test]
fn prefix_search_inside_long_whitespace_equals_brute_force() {
    let mut rng = Lcg(11);
    let runs: [&[&str]; 6] = [
        &[" "],
        &[" ", "\t"],
        &[" ", " ", " ", "\n"],
        &["\n"],
        &[" ", "\r\n", "\u{3000}", "\u{a0}"],
        &["\t", "\u{2028}", " "],
    ];
    let shapes = ["{{\"k\": \"a{}b\"}}", "x{}", "{}", "\n{}\n", "a\n{} z"];
    let tails = [
        "[…truncated: {} chars]",
        "",
        " ",
        "  ",
        "\n",
        "\n\n ",
        " x{}",
        "x",
        "  \n{}",
        "{}",
    ];
    for (i, run) in runs.iter().enumerate() {
        for (j, shape) in shapes.iter().enumerate() {
            let len = 1100 + rng.below(500);
            let ws = rng.text(run, len);
            let text = shape.replacen("{}", &ws, 1);
            let total = text.chars().count();
            let tail = tails[(i * shapes.len() + j) % tails.len()];
            let suffix = |l: usize| tail.replacen("{}", &(total - l).to_string(), 1);
            for _ in 0..2 {
                let budget = rng.below(count(&text) + 3);
                let floor = rng.below(3);
                let segment = SEGMENTS[rng.below(SEGMENTS.len())];
                let what = format!("run {i} shape {j} tail {tail:?}");
                search_equals_brute_force(&text, floor, budget, suffix, segment, &what);
            }
        }
    }
}

#[test]
fn counts_split_at_sync_points_whatever_the_head() {
    let mut rng = Lcg(23);
    let mut checked = 0;
    for _ in 0..400 {
        let (head_len, tail_len) = (rng.below(12), 1 + rng.below(12));
        let head = random_text(&mut rng, head_len);
        let tail = random_text(&mut rng, tail_len);
        for q in 1..tail.len() {
            if tail.is_char_boundary(q) && split::is_sync_point(tail.as_bytes(), q) {
                assert_eq!(
                    count(&format!("{head}{tail}")),
                    count(&format!("{head}{}", &tail[..q])) + count(&tail[q..]),
                    "{head:?}+{tail:?} at {q}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "sync points exercised: {checked}");
}

#[test]
fn boundaries_near_the_end_equal_boundaries_from_the_start() {
    let mut rng = Lcg(3);
    for len in [0, 1, 5, 70, 300] {
        let text = random_text(&mut rng, len);
        let total = text.chars().count();
        for n in (0..total + 3).rev().take(140) {
            assert_eq!(
                char_boundary_near_end(&text, n),
                char_boundary(&text, n),
                "{text:?} n {n}"
            );
        }
    }
}

#[test]
fn prefix_search_without_suffix_and_empty_text() {
    assert_eq!(
        largest_fitting_prefix("", 0, 0, 0, |_| String::new()),
        Some(0)
    );
    assert_eq!(
        largest_fitting_prefix("abc", 2, 1, 9, |_| String::new()),
        None
    );
    assert_eq!(
        largest_fitting_prefix("The quick brown", 0, 14, 2, |_| String::new()),
        Some(9)
    );
}

#[test]
fn searches_short_of_the_end_equal_searches_up_to_the_last_code_point_but_one() {
    let mut rng = Lcg(53);
    let mut found = 0;
    for round in 0..400 {
        let len = 1 + rng.below(40);
        let text = random_text(&mut rng, len);
        let chars = text.chars().count();
        let tokenized = Tokenized::with_segment(&text, 1 + rng.below(8));
        let floor = rng.below(chars.min(4));
        let budget = 2 + rng.below(16);
        let suffix = |l: usize| format!("[…{}]", chars - l);
        let whole = tokenized.largest_fitting_prefix(floor, chars - 1, budget, suffix);
        let short = tokenized.largest_fitting_prefix_short_of_end(floor, chars, budget, suffix);
        assert_eq!(
            short, whole,
            "round {round} {text:?} floor {floor} budget {budget}"
        );
        assert_eq!(
            whole.map(|fit| fit.chars),
            brute_force(&text, floor, chars - 1, budget, suffix)
        );
        found += usize::from(whole.is_some());
    }
    assert!(found > 100, "searches that fit: {found}");
    assert_eq!(
        Tokenized::new("").largest_fitting_prefix_short_of_end(0, 0, 5, |_| String::new()),
        None
    );
}

/// The run bound must cover every merge of a run: the merge of `b` repeated n times is itself a
/// walk of valid pairs over n bytes, so `most_bytes` of its token count is at least n. And it
/// must be tighter than the longest token where merges are shorter (a run of "-").
#[test]
fn run_bounds_cover_every_merge_of_a_run() {
    for byte in [b'-', b'a', b' ', b'=', b'L', b'0', b'.'] {
        let bound = RunBound::of(byte, MAX_TOKEN_BYTES);
        let longest = (1..=128)
            .filter(|&l| crate::tables::rank_of(&vec![byte; l]).is_some())
            .max()
            .unwrap();
        for n in (1..600).chain([1500, 4000, 9001]) {
            let mut ids = Vec::new();
            bpe::merge(&vec![byte; n], &mut ids);
            assert!(bound.most_bytes(ids.len()) >= n, "{byte} {n}");
            assert!(bound.most_bytes(ids.len()) <= ids.len() * longest);
        }
    }
    let dashes = RunBound::of(b'-', MAX_TOKEN_BYTES);
    assert!(
        dashes.most_bytes(1000) < 1000 * 80,
        "{}",
        dashes.most_bytes(1000)
    );
}

/// The longest token within a one-byte set, found by rank lookups of the byte repeated, is what
/// the pass over the vocabulary finds, for every byte.
#[test]
fn longest_run_tokens_equal_the_vocabulary_pass() {
    let mut longer_than_one = 0;
    for byte in 0..=255u8 {
        let mut set = [0u64; 4];
        set[usize::from(byte) >> 6] |= 1 << (byte & 63);
        let expected = crate::tables::longest_token_within(&set);
        assert_eq!(longest_run_token(byte), expected, "byte {byte}");
        longer_than_one += usize::from(expected > 1);
    }
    assert!(longer_than_one > 20, "{longer_than_one}");
}
