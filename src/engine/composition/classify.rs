//! Two-axis classification of one block, EM-1 sizing, the M10 blob census and the R-1 raw-export
//! test. Every test is a mechanical predicate over the block's raw labels and its NFC text.
//!
//! Invariants: the P axis and the C axis are independent; on each axis every test is evaluated,
//! the winner is the first firing class in the published precedence, and a block where more than
//! one class fires is a conflict with its winner and losers recorded. The residual classes (P-UNK,
//! C-TEXT) fire only when nothing else does. Figures are exact integers.

use super::record::Block;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Axis P classes in precedence order.
pub const P_CLASSES: [&str; 10] = [
    "P-TDEF", "P-CMPT", "P-TCALL", "P-TRES", "P-RETR", "P-SYS", "P-USER", "P-ASST", "P-OTHER",
    "P-UNK",
];
pub const P_TDEF: usize = 0;
pub const P_CMPT: usize = 1;
pub const P_TCALL: usize = 2;
pub const P_TRES: usize = 3;
pub const P_RETR: usize = 4;
pub const P_SYS: usize = 5;
pub const P_USER: usize = 6;
pub const P_ASST: usize = 7;
pub const P_OTHER: usize = 8;
pub const P_UNK: usize = 9;
/// Structural classes: unreachable from a bare role list.
pub const P_STRUCTURAL: [usize; 5] = [P_TDEF, P_CMPT, P_TCALL, P_TRES, P_RETR];

/// Axis C classes in precedence order.
pub const C_CLASSES: [&str; 7] = [
    "C-EMPTY", "C-UNK", "C-BLOB", "C-RAW", "C-STRUCT", "C-CODE", "C-TEXT",
];
pub const C_EMPTY: usize = 0;
pub const C_UNK: usize = 1;
pub const C_BLOB: usize = 2;
pub const C_RAW: usize = 3;
pub const C_STRUCT: usize = 4;
pub const C_CODE: usize = 5;
pub const C_TEXT: usize = 6;

/// Kind labels per P class (published). Kinds in `NEUTRAL_KINDS` carry no provenance (no test
/// fires on them). Kinds in no list make P-OTHER fire.
pub const KIND_LISTS: [(usize, &[&str]); 8] = [
    (P_TDEF, &["tool_definition", "tool_schema"]),
    (P_CMPT, &["compaction", "summary", "summary_message"]),
    (
        P_TCALL,
        &[
            "tool_use",
            "server_tool_use",
            "mcp_tool_use",
            "tool_call",
            "tool_call_message",
            "function_call",
        ],
    ),
    (
        P_TRES,
        &[
            "tool_result",
            "mcp_tool_result",
            "code_execution_tool_result",
            "bash_code_execution_tool_result",
            "text_editor_code_execution_tool_result",
            "tool_search_tool_result",
            "tool_return",
            "tool_return_message",
            "function_result",
        ],
    ),
    (
        P_RETR,
        &[
            "search_result",
            "document",
            "web_search_tool_result",
            "web_fetch_tool_result",
            "retrieval",
        ],
    ),
    (P_SYS, &["system_message"]),
    (P_USER, &["user_message"]),
    (
        P_ASST,
        &[
            "assistant_message",
            "reasoning",
            "reasoning_message",
            "hidden_reasoning_message",
            "omitted_reasoning",
            "redacted_reasoning",
            "thinking",
            "redacted_thinking",
        ],
    ),
];
pub const NEUTRAL_KINDS: [&str; 4] = ["text", "message", "image", "container_upload"];
/// Role labels per P class (published).
pub const ROLE_LISTS: [(usize, &[&str]); 4] = [
    (P_TRES, &["tool", "function"]),
    (P_SYS, &["system", "developer"]),
    (P_USER, &["user", "human"]),
    (P_ASST, &["assistant", "model"]),
];

/// The raw-export marker lines (a line exactly equal to one of these).
pub const RAW_MARKERS: [&str; 3] = ["BEGIN EXPORT", "BEGIN RAW", "BEGIN LOG"];

enum KindClass {
    Absent,
    Neutral,
    Class(usize),
    Unlisted,
}

fn kind_class(kind: Option<&str>) -> KindClass {
    match kind {
        None | Some("") => KindClass::Absent,
        Some(k) if NEUTRAL_KINDS.contains(&k) => KindClass::Neutral,
        Some(k) => KIND_LISTS
            .iter()
            .find(|(_, list)| list.contains(&k))
            .map_or(KindClass::Unlisted, |(c, _)| KindClass::Class(*c)),
    }
}

fn role_class(role: Option<&str>) -> Option<Option<usize>> {
    match role {
        None | Some("") => None,
        Some(r) => Some(
            ROLE_LISTS
                .iter()
                .find(|(_, list)| list.contains(&r))
                .map(|(c, _)| *c),
        ),
    }
}

/// Classes that fire on axis P, as a bit set over `P_CLASSES` indices.
pub fn p_fired(b: &Block) -> u16 {
    let mut fired = 0u16;
    let kind = kind_class(b.kind_raw.as_deref());
    let role = role_class(b.role_raw.as_deref());
    if b.in_schema {
        fired |= 1 << P_TDEF;
    }
    if b.compaction {
        fired |= 1 << P_CMPT;
    }
    if b.has_args {
        fired |= 1 << P_TCALL;
    }
    if let KindClass::Class(c) = kind {
        fired |= 1 << c;
    }
    // The role test runs whatever the kind says: precedence alone picks the winner, and a block
    // whose role and kind name different classes is a conflict.
    if let Some(Some(c)) = role {
        fired |= 1 << c;
    }
    if matches!(kind, KindClass::Unlisted) || matches!(role, Some(None)) {
        fired |= 1 << P_OTHER;
    }
    if fired == 0 {
        fired = 1 << P_UNK;
    }
    fired
}

/// Winner (lowest index) of a fired set.
pub fn winner(fired: u16) -> usize {
    fired.trailing_zeros() as usize
}

/// NFC form of `s` (borrowed when already NFC by the quick check).
pub fn nfc(s: &str) -> std::borrow::Cow<'_, str> {
    if is_nfc_quick(s.chars()) == IsNormalized::Yes {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(s.nfc().collect())
    }
}

/// EM-1 estimate of a block of `chars` code points.
pub fn em1_estimate(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// M08 normalisation N(s) of an NFC text: line breaks to LF, trimmed, White_Space runs to one
/// space (case preserved).
pub fn normalise(nfc_text: &str) -> String {
    let mut out = String::with_capacity(nfc_text.len());
    for word in nfc_text
        .split(char::is_whitespace)
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// One alphabet's qualifying base64 segments in one block (M10).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlphabetCensus {
    pub segments: u64,
    /// Characters of the segments, padding included (base64 characters are ASCII: one code point
    /// each).
    pub characters: u64,
    pub decoded_bytes: u64,
}

/// One block's base64 census (M10): each alphabet counted separately, plus the characters covered
/// by a qualifying segment of either (the C-BLOB test's figure).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    pub standard: AlphabetCensus,
    pub url_safe: AlphabetCensus,
    /// Characters inside at least one qualifying segment; a character inside a standard and a
    /// URL-safe segment is counted once.
    pub covered_characters: u64,
}

impl Census {
    pub fn segments(&self) -> u64 {
        self.standard.segments + self.url_safe.segments
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alphabet {
    Standard,
    UrlSafe,
}

impl Alphabet {
    /// The alphabet's own characters (the ones the other alphabet lacks).
    fn owns(self, c: u8) -> bool {
        match self {
            Alphabet::Standard => matches!(c, b'+' | b'/'),
            Alphabet::UrlSafe => matches!(c, b'-' | b'_'),
        }
    }

    fn holds(self, c: u8) -> bool {
        c.is_ascii_alphanumeric() || self.owns(c)
    }
}

fn b64_value(c: u8) -> u8 {
    match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        _ => 63,
    }
}

/// Decoded byte count when `data` followed by `pads` '=' qualifies: length (padding included)
/// >= 40 and a multiple of 4, strict decode (canonical trailing bits) of >= 30 bytes.
fn qualifying_bytes(data: &[u8], pads: usize) -> Option<u64> {
    let len = data.len() + pads;
    if len < 40 || len % 4 != 0 {
        return None;
    }
    let last = b64_value(data[data.len() - 1]);
    let canonical = match pads {
        1 => last & 0x3 == 0,
        2 => last & 0xF == 0,
        _ => true,
    };
    let decoded = (len / 4 * 3 - pads) as u64;
    (canonical && decoded >= 30).then_some(decoded)
}

/// Census of qualifying base64 segments in an NFC text, the standard (`[A-Za-z0-9+/]`) and URL-safe
/// (`[A-Za-z0-9_-]`) alphabets read separately. Candidates are each alphabet's maximal runs, with
/// at most two directly following `=`. A run counts for its alphabet when it holds one of that
/// alphabet's own characters; a run of letters and digits only counts once, as standard, when it
/// is a maximal run of both alphabets, and is otherwise a piece of the other alphabet's run (it
/// touches that alphabet's own character) and not a run of its own.
pub fn census(text: &str) -> Census {
    let bytes = text.as_bytes();
    let mut out = Census::default();
    let either = |c: u8| Alphabet::Standard.holds(c) || Alphabet::UrlSafe.owns(c);
    let mut i = 0;
    while i < bytes.len() {
        if !either(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && either(bytes[i]) {
            i += 1;
        }
        let run = &bytes[start..i];
        let pads = bytes[i..]
            .iter()
            .take(2)
            .take_while(|&&c| c == b'=')
            .count();
        i += pads;
        let mixes = |a: Alphabet| run.iter().any(|&c| a.owns(c));
        // (alphabet, start, end) of each candidate within `run`.
        let mut candidates: Vec<(Alphabet, usize, usize)> = Vec::new();
        match (mixes(Alphabet::Standard), mixes(Alphabet::UrlSafe)) {
            (_, false) => candidates.push((Alphabet::Standard, 0, run.len())),
            (false, true) => candidates.push((Alphabet::UrlSafe, 0, run.len())),
            (true, true) => {
                for alphabet in [Alphabet::Standard, Alphabet::UrlSafe] {
                    let mut k = 0;
                    while k < run.len() {
                        if !alphabet.holds(run[k]) {
                            k += 1;
                            continue;
                        }
                        let from = k;
                        while k < run.len() && alphabet.holds(run[k]) {
                            k += 1;
                        }
                        if run[from..k].iter().any(|&c| alphabet.owns(c)) {
                            candidates.push((alphabet, from, k));
                        }
                    }
                }
            }
        }
        let mut covered: Vec<(usize, usize)> = Vec::new();
        for (alphabet, from, to) in candidates {
            let pads = if to == run.len() { pads } else { 0 };
            let Some(decoded) = qualifying_bytes(&run[from..to], pads) else {
                continue;
            };
            let tally = match alphabet {
                Alphabet::Standard => &mut out.standard,
                Alphabet::UrlSafe => &mut out.url_safe,
            };
            tally.segments += 1;
            tally.characters += (to - from + pads) as u64;
            tally.decoded_bytes += decoded;
            covered.push((from, to + pads));
        }
        covered.sort_unstable();
        let mut reach = 0;
        for (from, to) in covered {
            let from = from.max(reach);
            if to > from {
                out.covered_characters += (to - from) as u64;
                reach = to;
            }
        }
    }
    out
}

/// Lines of a text with CRLF and lone CR read as LF.
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\n' || b[i] == b'\r' {
            out.push(&text[start..i]);
            if b[i] == b'\r' && i + 1 < b.len() && b[i + 1] == b'\n' {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

fn is_log_line(line: &str) -> bool {
    let b = line.as_bytes();
    let b = if b.first() == Some(&b'[') { &b[1..] } else { b };
    let pattern = b"dddd-dd-ddXdd:dd:dd";
    b.len() >= pattern.len()
        && pattern.iter().zip(b).all(|(p, c)| match p {
            b'd' => c.is_ascii_digit(),
            b'X' => *c == b'T' || *c == b' ',
            other => c == other,
        })
}

/// Top-level shape of a text that parses as JSON: Some(Some(n)) for an object (n distinct keys) or
/// array (n elements), Some(None) for a scalar, None when it does not parse.
pub fn json_container_size(text: &str) -> Option<Option<usize>> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    struct Shape;
    impl<'de> Visitor<'de> for Shape {
        type Value = Option<usize>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("json")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            let mut keys = std::collections::HashSet::new();
            while let Some(k) = a.next_key::<String>()? {
                a.next_value::<IgnoredAny>()?;
                keys.insert(k);
            }
            Ok(Some(keys.len()))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            let mut n = 0;
            while a.next_element::<IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(Some(n))
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    let first = text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .as_bytes()
        .first()?;
    if !matches!(
        first,
        b'{' | b'[' | b'"' | b't' | b'f' | b'n' | b'-' | b'0'..=b'9'
    ) {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let shape = de.deserialize_any(Shape).ok()?;
    de.end().ok()?;
    Some(shape)
}

/// Everything measured about one block.
#[derive(Debug, Clone)]
pub struct BlockFacts {
    pub message: Option<usize>,
    pub p_fired: u16,
    /// Winning class on axis P (index into `P_CLASSES`).
    pub p_class: usize,
    pub c_fired: u16,
    /// Winning class on axis C (index into `C_CLASSES`).
    pub c_class: usize,
    /// Code points of the NFC text (0 when no text).
    pub chars: u64,
    /// UTF-8 bytes of the adapted text as submitted.
    pub bytes: u64,
    /// EM-1 estimate.
    pub estimate: u64,
    pub census: Census,
    /// R-1 raw-export test fired.
    pub raw_export: bool,
    /// N(s) for M08; None for no text or an empty normalisation.
    pub normalised: Option<String>,
}

/// Classify and size one block.
pub fn measure_block(message: Option<usize>, b: &Block) -> BlockFacts {
    let p_fired = p_fired(b);
    let mut facts = BlockFacts {
        message,
        p_fired,
        p_class: winner(p_fired),
        c_fired: 1 << C_UNK,
        c_class: C_UNK,
        chars: 0,
        bytes: 0,
        estimate: 0,
        census: Census::default(),
        raw_export: false,
        normalised: None,
    };
    let Some(raw) = b.text.as_deref() else {
        return facts;
    };
    let text = nfc(raw);
    let chars = text.chars().count() as u64;
    facts.chars = chars;
    facts.bytes = raw.len() as u64;
    facts.estimate = em1_estimate(chars);
    facts.census = census(&text);
    let mut c_fired = 0u16;
    if text.chars().all(char::is_whitespace) {
        c_fired |= 1 << C_EMPTY;
    }
    if b.media || (chars > 0 && 10 * facts.census.covered_characters >= 9 * chars) {
        c_fired |= 1 << C_BLOB;
    }
    let text_lines = lines(&text);
    let marker = text_lines.iter().any(|l| RAW_MARKERS.contains(l));
    // A line of White_Space only is empty, as a block of White_Space only is C-EMPTY.
    let non_empty: Vec<&&str> = text_lines
        .iter()
        .filter(|l| !l.chars().all(char::is_whitespace))
        .collect();
    let log_lines = non_empty.iter().filter(|l| is_log_line(l)).count();
    let log = !non_empty.is_empty() && 5 * log_lines >= 4 * non_empty.len();
    let shape = json_container_size(&text);
    let big_json = matches!(shape, Some(Some(n)) if n >= 10) && chars >= 200;
    if marker || log || big_json {
        c_fired |= 1 << C_RAW;
        facts.raw_export = true;
    }
    if matches!(shape, Some(Some(_))) {
        c_fired |= 1 << C_STRUCT;
    }
    if text_lines
        .iter()
        .any(|l| l.trim_start_matches(' ').starts_with("```"))
    {
        c_fired |= 1 << C_CODE;
    }
    if c_fired == 0 {
        c_fired = 1 << C_TEXT;
    }
    facts.c_fired = c_fired;
    facts.c_class = winner(c_fired);
    let n = normalise(&text);
    if !n.is_empty() {
        facts.normalised = Some(n);
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(role: Option<&str>, kind: Option<&str>, text: Option<&str>) -> Block {
        Block {
            role_raw: role.map(str::to_owned),
            kind_raw: kind.map(str::to_owned),
            text: text.map(str::to_owned),
            ..Block::default()
        }
    }

    #[test]
    fn every_test_runs_and_precedence_picks_the_winner() {
        assert_eq!(
            p_fired(&block(Some("user"), Some("text"), Some("x"))),
            1 << P_USER
        );
        let tool_result = p_fired(&block(Some("user"), Some("tool_result"), None));
        assert_eq!(tool_result, (1 << P_TRES) | (1 << P_USER));
        assert_eq!(winner(tool_result), P_TRES);
        // The role test fires P-USER whatever the kind names: an unlisted kind only adds P-OTHER,
        // a kind of a lower class loses to P-USER.
        let unlisted = p_fired(&block(Some("user"), Some("mystery"), None));
        assert_eq!(unlisted, (1 << P_USER) | (1 << P_OTHER));
        assert_eq!(winner(unlisted), P_USER);
        let lower = p_fired(&block(Some("user"), Some("assistant_message"), None));
        assert_eq!(lower, (1 << P_USER) | (1 << P_ASST));
        assert_eq!(winner(lower), P_USER);
        assert_eq!(p_fired(&block(None, None, Some("x"))), 1 << P_UNK);
        let conflict = p_fired(&block(Some("robot"), Some("tool_use"), None));
        assert_eq!(conflict, (1 << P_TCALL) | (1 << P_OTHER));
        assert_eq!(winner(conflict), P_TCALL);
    }

    fn standard(segments: u64, characters: u64, decoded_bytes: u64) -> AlphabetCensus {
        AlphabetCensus {
            segments,
            characters,
            decoded_bytes,
        }
    }

    #[test]
    fn census_edges() {
        // 40 chars of 'A' decode to 30 bytes: qualifies.
        assert_eq!(census(&"A".repeat(40)).standard, standard(1, 40, 30));
        assert_eq!(census(&"A".repeat(39)), Census::default());
        // 38 + "==" is 40 long, decodes to 28 bytes: does not qualify.
        assert_eq!(census(&format!("{}==", "A".repeat(38))), Census::default());
        // Non-canonical trailing bits with one pad.
        assert_eq!(census(&format!("{}B=", "A".repeat(42))), Census::default());
        assert_eq!(
            census(&format!("{}E=", "A".repeat(42))).standard,
            standard(1, 44, 32)
        );
        let url = census(&format!("{}-_", "A".repeat(42)));
        assert_eq!(url.url_safe, standard(1, 44, 33));
        assert_eq!(url.standard, AlphabetCensus::default());
    }

    #[test]
    fn a_run_mixing_the_alphabets_counts_each_alphabets_maximal_runs() {
        // standard run: 43 x A + '+' (44); URL-safe run: '-' + 43 x B (44); the whole run is neither.
        let text = format!("{}+-{}", "A".repeat(43), "B".repeat(43));
        let c = census(&text);
        assert_eq!(c.standard, standard(1, 44, 33));
        assert_eq!(c.url_safe, standard(1, 44, 33));
        assert_eq!(c.covered_characters, 88);
        // Overlap: standard "+" + 47 x A and URL-safe 47 x A + "-" share the 47 letters.
        let text = format!("+{}-", "A".repeat(47));
        let c = census(&text);
        assert_eq!((c.standard.segments, c.url_safe.segments), (1, 1));
        assert_eq!(c.covered_characters, 49, "shared letters covered once");
        // Letters-and-digits pieces between the other alphabet's characters are not runs of their own.
        let text = format!("{}-{}", "A".repeat(44), "A".repeat(44));
        let c = census(&text);
        assert_eq!(c.standard, AlphabetCensus::default());
        assert_eq!(c.url_safe.segments, 0, "89 characters do not qualify");
        // Padding goes to the pieces that end where the run ends.
        let text = format!("/{}-{}==", "A".repeat(3), "A".repeat(42));
        let c = census(&text);
        assert_eq!(c.url_safe, standard(1, 48, 34));
        assert_eq!(c.standard, AlphabetCensus::default());
    }

    #[test]
    fn normalisation_collapses_unicode_whitespace() {
        assert_eq!(normalise("  a\r\n\u{2003}b\tc "), "a b c");
        assert_eq!(em1_estimate(0), 0);
        assert_eq!(em1_estimate(5), 2);
    }

    #[test]
    fn json_shape() {
        assert_eq!(json_container_size(" {\"a\":1,\"a\":2} "), Some(Some(1)));
        assert_eq!(json_container_size("[1,2,3]"), Some(Some(3)));
        assert_eq!(json_container_size("\"s\""), Some(None));
        assert_eq!(json_container_size("{"), None);
        assert_eq!(json_container_size("hello"), None);
    }
}
