//! An independent replayer for token-efficiency/v1 drop receipts, written from the published
//! criteria (spec/token-efficiency-v1.criteria.json: operations S-1..S-4, the marker template, the
//! receipt fields and the serialisation rule) and the served report fields only — no engine
//! internals. It parses the submitted payload with serde_json, puts object keys in JavaScript's order
//! and writes `JSON.stringify` itself; then it applies each receipt entry to its own tree and checks:
//!
//! - each entry's `chars_before`/`tokens_before` and `chars_after`/`tokens_after` are the counts of
//!   the whole payload before and after that application (tokens through the published tokenizer's
//!   public `count`), so the deltas telescope;
//! - each application is one the criteria allow at that point (S-1 removes a byte-identical later
//!   duplicate in the same array at its index at removal; S-2 an unprotected field whose value is
//!   null, "", [] or {}; S-3 cuts an unprotected non-root string over 2,000 characters to its first
//!   2,000 plus the marker; S-4, last and once, keeps a prefix no shorter than the end of the last
//!   protected span and appends the marker with the total removed);
//! - operations run in the published order, each only while the payload is still over the budget,
//!   each to completion (after S-1 the tree is what the published S-1 pass makes of the tree before
//!   it; after S-2 no removable field is left;
//!   after S-3 no unprotected long string left uncut), and the final text fits;
//! - the replayed text equals the served `shaped_payload` byte for byte; on short texts S-4's cut is
//!   the largest that fits.
//!
//! Payloads the replayer cannot mirror exactly are skipped, never guessed: text serde_json refuses
//! (lone surrogates, numbers beyond a double), numbers JavaScript prints in exponent form, and a
//! receipt path that names more than one node (object keys containing `.` or `[`).

use context_meter::engine::tokenizer;
use serde_json::{Map, Value};

/// S-3's cap and the marker template, from the criteria.
const S3_CAP_CHARS: usize = 2000;

fn marker(removed: usize, op: &str) -> String {
    format!("[…truncated: {removed} chars removed under token-efficiency/v1 {op}]")
}

/// Texts up to this many characters also get S-4's maximality checked (one count per candidate).
const MAXIMALITY_CHARS: usize = 400;

/// What the replay concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// Every entry replayed and the result equals the shaped payload.
    Verified { entries: usize },
    /// The payload is outside what this replayer mirrors exactly (the reason says which part).
    Skipped(&'static str),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

fn render_path(steps: &[Step]) -> String {
    let mut out = String::new();
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Key(k) => {
                if i > 0 {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(n) => out.push_str(&format!("[{n}]")),
        }
    }
    out
}

/// A field is protected when the dot-path of its object keys (array positions skipped), or that
/// of any enclosing field, is a keep path.
fn protected(steps: &[Step], keep: &[String]) -> bool {
    let mut path = String::new();
    for step in steps {
        if let Step::Key(k) = step {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(k);
            if keep.contains(&path) {
                return true;
            }
        }
    }
    false
}

fn is_array_index(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 10
        && key.bytes().all(|b| b.is_ascii_digit())
        && (key == "0" || !key.starts_with('0'))
        && key.parse::<u64>().is_ok_and(|n| n < 4_294_967_295)
}

/// JavaScript's own-key order after `JSON.parse`: array-index keys ascending, then the rest in
/// first-seen order (serde_json's map already keeps first position and last value of a duplicate).
fn js_key_order(value: Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(js_key_order).collect()),
        Value::Object(map) => {
            let mut indices: Vec<(u64, String, Value)> = Vec::new();
            let mut rest: Vec<(String, Value)> = Vec::new();
            for (k, v) in map {
                let v = js_key_order(v);
                if is_array_index(&k) {
                    indices.push((k.parse().unwrap_or(0), k, v));
                } else {
                    rest.push((k, v));
                }
            }
            indices.sort_by_key(|(n, _, _)| *n);
            let mut out = Map::new();
            for (_, k, v) in indices {
                out.insert(k, v);
            }
            for (k, v) in rest {
                out.insert(k, v);
            }
            Value::Object(out)
        }
        other => other,
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `Number.prototype.toString` for the numbers it prints without an exponent; None otherwise.
fn js_number(n: &serde_json::Number) -> Option<String> {
    const EXACT: u64 = 1 << 53;
    if let Some(i) = n.as_i64() {
        if i.unsigned_abs() <= EXACT {
            return Some(i.to_string());
        }
    }
    if let Some(u) = n.as_u64() {
        if u <= EXACT {
            return Some(u.to_string());
        }
    }
    let x = n.as_f64()?;
    if x == 0.0 {
        return Some("0".to_owned());
    }
    // Rust's Display prints the shortest round-tripping digits without an exponent, as JavaScript
    // does for 1e-6 <= |x| < 1e21.
    (1e-6..1e21).contains(&x.abs()).then(|| format!("{x}"))
}

/// Serialiser state: the text, its length in characters, and the end (in characters) of the last
/// protected `"key":value` span written.
struct Writer<'k> {
    text: String,
    chars: usize,
    floor: usize,
    keep: &'k [String],
}

impl Writer<'_> {
    fn push(&mut self, s: &str) {
        self.chars += s.chars().count();
        self.text.push_str(s);
    }

    fn value(&mut self, value: &Value, steps: &mut Vec<Step>) -> Result<(), &'static str> {
        match value {
            Value::Null => self.push("null"),
            Value::Bool(b) => self.push(if *b { "true" } else { "false" }),
            Value::Number(n) => {
                let text = js_number(n).ok_or("number printed in exponent form")?;
                self.push(&text);
            }
            Value::String(s) => {
                let mut literal = String::new();
                write_string(&mut literal, s);
                self.push(&literal);
            }
            Value::Array(items) => {
                self.push("[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.push(",");
                    }
                    steps.push(Step::Index(i));
                    self.value(item, steps)?;
                    steps.pop();
                }
                self.push("]");
            }
            Value::Object(map) => {
                self.push("{");
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        self.push(",");
                    }
                    let mut key = String::new();
                    write_string(&mut key, k);
                    key.push(':');
                    self.push(&key);
                    steps.push(Step::Key(k.clone()));
                    self.value(v, steps)?;
                    if protected(steps, self.keep) {
                        self.floor = self.floor.max(self.chars);
                    }
                    steps.pop();
                }
                self.push("}");
            }
        }
        Ok(())
    }
}

/// `JSON.stringify(value)` and the end of the last protected span, in characters.
fn stringify(value: &Value, keep: &[String]) -> Result<(String, usize), &'static str> {
    let mut writer = Writer {
        text: String::new(),
        chars: 0,
        floor: 0,
        keep,
    };
    writer.value(value, &mut Vec::new())?;
    Ok((writer.text, writer.floor))
}

fn plain(value: &Value) -> String {
    stringify(value, &[]).map(|(t, _)| t).unwrap_or_default()
}

/// Every node with its steps from the root, in document order.
fn nodes<'v>(value: &'v Value, steps: &mut Vec<Step>, out: &mut Vec<(Vec<Step>, &'v Value)>) {
    out.push((steps.clone(), value));
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                steps.push(Step::Index(i));
                nodes(item, steps, out);
                steps.pop();
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                steps.push(Step::Key(k.clone()));
                nodes(v, steps, out);
                steps.pop();
            }
        }
        _ => {}
    }
}

fn all_nodes(root: &Value) -> Vec<(Vec<Step>, &Value)> {
    let mut out = Vec::new();
    nodes(root, &mut Vec::new(), &mut out);
    out
}

fn node_mut<'v>(root: &'v mut Value, steps: &[Step]) -> &'v mut Value {
    let mut cursor = root;
    for step in steps {
        cursor = match step {
            Step::Key(k) => cursor.get_mut(k.as_str()),
            Step::Index(i) => cursor.get_mut(*i),
        }
        .expect("steps come from a walk of this tree");
    }
    cursor
}

fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

enum Found {
    One(Vec<Step>),
    Ambiguous,
}

/// The one node of the wanted kind whose rendered path is `path`.
fn resolve(
    root: &Value,
    path: &str,
    kind: impl Fn(&[Step], &Value) -> bool,
) -> Result<Found, String> {
    let matches: Vec<Vec<Step>> = all_nodes(root)
        .into_iter()
        .filter(|(steps, v)| kind(steps, v) && render_path(steps) == path)
        .map(|(steps, _)| steps)
        .collect();
    match matches.len() {
        0 => Err(format!("receipt path {path:?} names no node of its kind")),
        1 => Ok(Found::One(matches.into_iter().next().expect("one"))),
        _ => Ok(Found::Ambiguous),
    }
}

/// S-1 as the criteria publish it, applied to a whole tree: "Arrays are visited in document order
/// (depth-first, an array before its surviving entries' contents); within an array, entries are
/// examined in index order". An array is examined once, before its entries' own duplicates go, so
/// it may end up holding entries that became identical only afterwards (`[[null,null],[null]]`
/// becomes `[[null],[null]]`); a check that no array anywhere holds a duplicate would ask for more
/// than the rule.
fn s1_pass(value: &mut Value) {
    match value {
        Value::Array(items) => {
            let mut seen: Vec<String> = Vec::with_capacity(items.len());
            items.retain(|item| {
                let text = plain(item);
                let fresh = !seen.contains(&text);
                if fresh {
                    seen.push(text);
                }
                fresh
            });
            items.iter_mut().for_each(s1_pass);
        }
        Value::Object(map) => map.values_mut().for_each(s1_pass),
        _ => {}
    }
}

fn has_removable_field(root: &Value, keep: &[String]) -> bool {
    all_nodes(root).iter().any(|(steps, v)| {
        matches!(steps.last(), Some(Step::Key(_))) && is_empty_value(v) && !protected(steps, keep)
    })
}

/// Whether `s` is already S-3's output: 2,000 characters and the S-3 marker.
fn is_s3_output(s: &str) -> bool {
    let rest: String = s.chars().skip(S3_CAP_CHARS).collect();
    rest.strip_prefix("[…truncated: ")
        .and_then(|r| r.strip_suffix(" chars removed under token-efficiency/v1 S-3]"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// An unprotected non-root string over the cap that S-3 has not cut.
fn has_long_string(root: &Value, keep: &[String]) -> bool {
    all_nodes(root).iter().any(|(steps, v)| {
        !steps.is_empty()
            && !protected(steps, keep)
            && v.as_str()
                .is_some_and(|s| s.chars().count() > S3_CAP_CHARS && !is_s3_output(s))
    })
}

fn prefix_chars(text: &str, n: usize) -> &str {
    &text[..text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)]
}

fn count(text: &str) -> u64 {
    tokenizer::count(text) as u64
}

fn field(entry: &Value, name: &str) -> Result<u64, String> {
    entry[name]
        .as_u64()
        .ok_or_else(|| format!("receipt entry without {name}"))
}

/// Replays the served report's receipt on `payload` (the submitted payload string).
pub fn replay(
    payload: &str,
    effective_budget: u64,
    keep: &[String],
    report: &Map<String, Value>,
) -> Result<Replay, String> {
    let shaped = report["shaped_payload"]
        .as_str()
        .ok_or("report without shaped_payload")?;
    let receipt = report["receipt"]
        .as_array()
        .ok_or("report without receipt")?;
    let submitted_tokens = report["submitted"]["tokens"]
        .as_u64()
        .ok_or("report without submitted.tokens")?;
    let json_set = match report["operation_set"].as_str() {
        Some("json") => true,
        Some("text-only") => false,
        _ => return Err("operation_set is neither json nor text-only".into()),
    };

    // The submitted canonical form, built here.
    let mut tree: Option<Value> = None;
    let (mut text, mut floor) = if json_set {
        let Ok(parsed) = serde_json::from_str::<Value>(payload) else {
            return Ok(Replay::Skipped("payload serde_json does not parse"));
        };
        let value = js_key_order(parsed);
        let Ok((text, floor)) = stringify(&value, keep) else {
            return Ok(Replay::Skipped("number printed in exponent form"));
        };
        tree = Some(value);
        (text, floor)
    } else {
        if serde_json::from_str::<Value>(payload).is_ok() {
            return Err("a JSON payload was served as text-only".into());
        }
        (payload.to_owned(), 0)
    };
    let mut tokens = count(&text);
    if tokens != submitted_tokens {
        return Err(format!(
            "submitted.tokens {submitted_tokens} but the canonical form counts {tokens}"
        ));
    }
    let exhausted = report.get("exhaustion").is_some();
    if submitted_tokens <= effective_budget || exhausted {
        if !receipt.is_empty() {
            return Err("a payload that fits, or is exhausted, has receipt entries".into());
        }
        if shaped != text {
            return Err("unchanged payload differs from the canonical form".into());
        }
        if exhausted && submitted_tokens <= effective_budget {
            return Err("exhaustion reported for a payload that fits".into());
        }
        return Ok(Replay::Verified { entries: 0 });
    }

    // Phases in order; each starts only while over budget and runs to completion.
    let order = ["S-1", "S-2", "S-3", "S-4"];
    let mut at = 0usize;
    for (phase, op) in order.iter().enumerate() {
        let runs = tokens > effective_budget && (json_set || *op == "S-4");
        let before_phase = if phase == 0 && runs {
            tree.clone()
        } else {
            None
        };
        let group: Vec<&Value> = receipt[at..]
            .iter()
            .take_while(|e| e["op"] == *op)
            .collect();
        if !runs && !group.is_empty() {
            return Err(format!("{op} applied while the payload already fit"));
        }
        if *op == "S-4" && group.len() > 1 {
            return Err("S-4 applied more than once".into());
        }
        for entry in &group {
            let chars_now = text.chars().count() as u64;
            if field(entry, "chars_before")? != chars_now
                || field(entry, "tokens_before")? != tokens
            {
                return Err(format!("entry {at}: before-counts are not the payload's"));
            }
            let path = entry["path"].as_str().ok_or("entry without path")?;
            if *op == "S-4" {
                if path != "payload" {
                    return Err("S-4 path is not \"payload\"".into());
                }
                let total = chars_now as usize;
                let after = field(entry, "chars_after")? as usize;
                let cut = (floor..total).find(|&l| {
                    l + marker(total - l, "S-4").chars().count() == after
                        && shaped
                            == format!("{}{}", prefix_chars(&text, l), marker(total - l, "S-4"))
                });
                let Some(cut) = cut else {
                    return Err(
                        "S-4 output is no prefix (at or past the protected floor) plus its marker"
                            .into(),
                    );
                };
                if total <= MAXIMALITY_CHARS {
                    for longer in cut + 1..total {
                        let candidate = format!(
                            "{}{}",
                            prefix_chars(&text, longer),
                            marker(total - longer, "S-4")
                        );
                        if count(&candidate) <= effective_budget {
                            return Err(format!("S-4 kept {cut} chars but {longer} also fit"));
                        }
                    }
                }
                text = shaped.to_owned();
                floor = 0;
            } else {
                let root = tree.as_mut().expect("json operations run on a tree");
                let keep_ok = |steps: &[Step]| !protected(steps, keep);
                match *op {
                    "S-1" => {
                        let found = resolve(root, path, |_, v| v.is_array())?;
                        let Found::One(steps) = found else {
                            return Ok(Replay::Skipped("ambiguous receipt path"));
                        };
                        let index = field(entry, "index")? as usize;
                        let items = node_mut(root, &steps)
                            .as_array_mut()
                            .expect("resolved to an array");
                        if index >= items.len() {
                            return Err(format!("entry {at}: S-1 index past the array"));
                        }
                        let removed = plain(&items[index]);
                        if !items[..index]
                            .iter()
                            .any(|earlier| plain(earlier) == removed)
                        {
                            return Err(format!(
                                "entry {at}: S-1 removed an entry with no earlier twin"
                            ));
                        }
                        items.remove(index);
                    }
                    "S-2" => {
                        let found = resolve(root, path, |steps, _| {
                            matches!(steps.last(), Some(Step::Key(_)))
                        })?;
                        let Found::One(steps) = found else {
                            return Ok(Replay::Skipped("ambiguous receipt path"));
                        };
                        if !keep_ok(&steps) {
                            return Err(format!("entry {at}: S-2 removed a protected field"));
                        }
                        let (parent, last) = steps.split_at(steps.len() - 1);
                        let Step::Key(key) = &last[0] else {
                            unreachable!("resolved to a field")
                        };
                        let object = node_mut(root, parent)
                            .as_object_mut()
                            .expect("a field's parent is an object");
                        if !object.get(key).is_some_and(is_empty_value) {
                            return Err(format!("entry {at}: S-2 removed a non-empty field"));
                        }
                        object.shift_remove(key);
                    }
                    _ => {
                        let found =
                            resolve(root, path, |steps, v| !steps.is_empty() && v.is_string())?;
                        let Found::One(steps) = found else {
                            return Ok(Replay::Skipped("ambiguous receipt path"));
                        };
                        if !keep_ok(&steps) {
                            return Err(format!("entry {at}: S-3 truncated a protected string"));
                        }
                        let node = node_mut(root, &steps);
                        let original = node.as_str().expect("resolved to a string").to_owned();
                        let n = original.chars().count();
                        if n <= S3_CAP_CHARS {
                            return Err(format!("entry {at}: S-3 truncated a short string"));
                        }
                        let cut: String = original.chars().take(S3_CAP_CHARS).collect();
                        *node = Value::String(cut + &marker(n - S3_CAP_CHARS, "S-3"));
                    }
                }
                let (new_text, new_floor) =
                    stringify(root, keep).map_err(|e| format!("entry {at}: {e}"))?;
                text = new_text;
                floor = new_floor;
            }
            tokens = count(&text);
            if field(entry, "chars_after")? != text.chars().count() as u64
                || field(entry, "tokens_after")? != tokens
            {
                return Err(format!("entry {at}: after-counts are not the payload's"));
            }
            at += 1;
        }
        // A phase that ran ran to completion.
        if runs {
            if let Some(root) = tree.as_ref() {
                let incomplete = match phase {
                    0 => before_phase.is_some_and(|mut expected| {
                        s1_pass(&mut expected);
                        expected != *root
                    }),
                    1 => has_removable_field(root, keep),
                    2 => has_long_string(root, keep),
                    _ => false,
                };
                if incomplete {
                    return Err(format!("{op} stopped before completing"));
                }
            }
        }
    }
    if at != receipt.len() {
        return Err("receipt entries out of the published order".into());
    }
    if text != shaped {
        return Err("replayed payload differs from shaped_payload".into());
    }
    if tokens > effective_budget {
        return Err("shaped payload over budget without exhaustion".into());
    }
    Ok(Replay::Verified {
        entries: receipt.len(),
    })
}
