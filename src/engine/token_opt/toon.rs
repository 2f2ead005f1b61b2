//! TOON (Token-Oriented Object Notation) encoder, spec v4.0 (the working draft at https://github.com/toon-format/spec/blob/main/SPEC.md),
//! written from the specification and checked byte for byte against npm `@toon-format/toon` 4.4.0.
//!
//! Invariants:
//! - Pure and deterministic: one `String` is built in a single pass (plus the column classification
//!   tabular forms need); no line is ever re-read or re-written.
//! - Object members are emitted in map order. Callers that want JavaScript's order (array-index keys
//!   first) normalise the value first (`json_js::to_js_key_order`), as the reference encoder sees it.
//! - Numbers print as ECMAScript `Number#toString` of the double (so `-0` → `0`, `1e21` → `1e+21`).
//! - LF line separators, no trailing spaces, no trailing newline; an empty root object is "".

use serde_json::{Map, Number, Value};
use std::fmt::Write;

/// The delimiter for inline arrays and tabular rows (spec §11). Comma is the default and is never
/// written into headers; tab and pipe are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimiter {
    Comma,
    Tab,
    Pipe,
}

impl Delimiter {
    fn byte(self) -> u8 {
        match self {
            Delimiter::Comma => b',',
            Delimiter::Tab => b'\t',
            Delimiter::Pipe => b'|',
        }
    }

    /// The option's spelling as a JSON string value (`","`, `"\t"`, `"|"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Delimiter::Comma => ",",
            Delimiter::Tab => "\t",
            Delimiter::Pipe => "|",
        }
    }

    /// Parses the option's spelling; anything else is `None`.
    pub fn from_option(s: &str) -> Option<Self> {
        match s {
            "," => Some(Delimiter::Comma),
            "\t" => Some(Delimiter::Tab),
            "|" => Some(Delimiter::Pipe),
            _ => None,
        }
    }
}

/// Encoder options (spec §13): document delimiter and spaces per indentation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToonOptions {
    pub delimiter: Delimiter,
    pub indent_size: usize,
}

impl Default for ToonOptions {
    fn default() -> Self {
        ToonOptions {
            delimiter: Delimiter::Comma,
            indent_size: 2,
        }
    }
}

/// The TOON text of `value`.
pub fn encode(value: &Value, options: &ToonOptions) -> String {
    let mut writer = Writer {
        out: String::with_capacity(1024),
        options: *options,
        delimiter: options.delimiter.byte(),
        started: false,
    };
    writer.root(value);
    writer.out
}

/// One column of a tabular header: a leaf field, or a nested-uniform field with its own group.
struct Field<'a> {
    name: &'a str,
    children: Option<Group<'a>>,
}

/// A field list, and whether every row lists its members in exactly that order (then cells are read
/// by position, without a key comparison or a hash lookup).
struct Group<'a> {
    fields: Vec<Field<'a>>,
    aligned: bool,
}

struct Writer {
    out: String,
    options: ToonOptions,
    delimiter: u8,
    started: bool,
}

fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

fn is_non_empty_object(value: &Value) -> bool {
    matches!(value, Value::Object(m) if !m.is_empty())
}

/// Spec §7.3: keys matching `^[A-Za-z_][A-Za-z0-9_.]*$` may stay bare.
fn is_bare_key(key: &str) -> bool {
    let bytes = key.as_bytes();
    match bytes.first() {
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' => bytes[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.'),
        _ => false,
    }
}

/// `^[+-]?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$` (case-insensitive `e`), spec §7.2.
fn is_numeric_like(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if !digits(&mut i) {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// Spec §7.2: whether a string value may be written without quotes under `delimiter`.
fn is_safe_unquoted(s: &str, delimiter: u8) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    if matches!(first, b' ' | b'\t' | b'-' | b'#') || matches!(last, b' ' | b'\t') {
        return false;
    }
    if matches!(b, b"true" | b"false" | b"null")
        || (first.is_ascii_digit() || first == b'+') && is_numeric_like(s)
    {
        return false;
    }
    const fn needs_quotes_table() -> [bool; 256] {
        let mut table = [false; 256];
        let mut c = 0;
        while c < 0x20 {
            table[c] = true;
            c += 1;
        }
        let specials = b":\"\\[]{}";
        let mut i = 0;
        while i < specials.len() {
            table[specials[i] as usize] = true;
            i += 1;
        }
        table
    }
    static NEEDS_QUOTES: [bool; 256] = needs_quotes_table();
    !b.iter()
        .any(|&c| NEEDS_QUOTES[c as usize] || c == delimiter)
}

/// Appends `s` quoted and escaped per spec §7.1.
fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    let mut clean_from = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let escape: Option<&str> = match b {
            b'\\' => Some("\\\\"),
            b'"' => Some("\\\""),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            c if c < 0x20 => None,
            _ => continue,
        };
        out.push_str(&s[clean_from..i]);
        match escape {
            Some(e) => out.push_str(e),
            None => {
                let _ = write!(out, "\\u{:04x}", b);
            }
        }
        clean_from = i + 1;
    }
    out.push_str(&s[clean_from..]);
    out.push('"');
}

fn push_key(out: &mut String, key: &str) {
    if is_bare_key(key) {
        out.push_str(key);
    } else {
        push_quoted(out, key);
    }
}

/// ECMAScript `Number#toString` of a JSON number (its double: exact up to 2^53, rounded beyond).
fn push_number(out: &mut String, n: &Number) {
    crate::engine::jsjson::push_js_number(out, n.as_f64().unwrap_or(0.0));
}

fn push_primitive(out: &mut String, value: &Value, delimiter: u8) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => push_number(out, n),
        Value::String(s) => {
            if is_safe_unquoted(s, delimiter) {
                out.push_str(s);
            } else {
                push_quoted(out, s);
            }
        }
        Value::Array(_) | Value::Object(_) => unreachable!("only primitives reach push_primitive"),
    }
}

/// Spec §9.3: the field list when every row is a non-empty object with the same key set and every
/// column is uniform-primitive or nested-uniform; `None` otherwise.
fn tabular_fields<'a>(rows: &[&'a Map<String, Value>]) -> Option<Group<'a>> {
    let first = rows.first()?;
    if first.is_empty() {
        return None;
    }
    let aligned = rows
        .iter()
        .all(|row| row.len() == first.len() && row.keys().zip(first.keys()).all(|(a, b)| a == b));
    if !aligned
        && !rows
            .iter()
            .all(|row| row.len() == first.len() && first.keys().all(|k| row.contains_key(k)))
    {
        return None;
    }
    let mut fields = Vec::with_capacity(first.len());
    for (position, name) in first.keys().enumerate() {
        let column = rows.iter().map(|row| {
            let value = if aligned {
                row.values().nth(position)
            } else {
                row.get(name)
            };
            value.unwrap_or(&Value::Null)
        });
        if column.clone().all(is_primitive) {
            fields.push(Field {
                name,
                children: None,
            });
            continue;
        }
        let mut objects = Vec::with_capacity(rows.len());
        for value in column {
            match value {
                Value::Object(m) if !m.is_empty() => objects.push(m),
                _ => return None,
            }
        }
        fields.push(Field {
            name,
            children: Some(tabular_fields(&objects)?),
        });
    }
    Some(Group { fields, aligned })
}

/// Spec §9.5: the field list of an object whose ≥ 2 entry values are uniform non-empty objects.
fn keyed_fields(object: &Map<String, Value>) -> Option<Group<'_>> {
    if object.len() < 2 || !object.values().all(is_non_empty_object) {
        return None;
    }
    let rows: Vec<&Map<String, Value>> = object.values().filter_map(|v| v.as_object()).collect();
    tabular_fields(&rows)
}

fn objects_of(items: &[Value]) -> Option<Vec<&Map<String, Value>>> {
    items.iter().map(|v| v.as_object()).collect()
}

impl Writer {
    /// Starts a new line at `depth` (the separator LF is written before every line but the first).
    fn line(&mut self, depth: usize) {
        if self.started {
            self.out.push('\n');
        } else {
            self.started = true;
        }
        const SPACES: &str = "                                                                ";
        let mut width = depth * self.options.indent_size;
        while width > 0 {
            let chunk = width.min(SPACES.len());
            self.out.push_str(&SPACES[..chunk]);
            width -= chunk;
        }
    }

    fn list_line(&mut self, depth: usize) {
        self.line(depth);
        self.out.push_str("- ");
    }

    fn primitive(&mut self, value: &Value) {
        push_primitive(&mut self.out, value, self.delimiter);
    }

    fn root(&mut self, value: &Value) {
        match value {
            Value::Array(items) => self.array(None, items, 0),
            Value::Object(object) => match keyed_fields(object) {
                Some(fields) => self.keyed(None, object, &fields, 0),
                None => self.fields(object, 0),
            },
            Value::String(s) if s.starts_with('\u{feff}') => {
                // A leading byte-order mark would be stripped by readers: the reference quotes it.
                self.line(0);
                push_quoted(&mut self.out, s);
            }
            primitive => {
                self.line(0);
                self.primitive(primitive);
            }
        }
    }

    fn fields(&mut self, object: &Map<String, Value>, depth: usize) {
        for (key, value) in object {
            self.field(key, value, depth);
        }
    }

    fn field(&mut self, key: &str, value: &Value, depth: usize) {
        match value {
            Value::Array(items) => self.array(Some(key), items, depth),
            Value::Object(object) => {
                if let Some(fields) = keyed_fields(object) {
                    self.keyed(Some(key), object, &fields, depth);
                    return;
                }
                self.line(depth);
                push_key(&mut self.out, key);
                self.out.push(':');
                self.fields(object, depth + 1);
            }
            primitive => {
                self.line(depth);
                push_key(&mut self.out, key);
                self.out.push_str(": ");
                self.primitive(primitive);
            }
        }
    }

    /// `key[N<delim>]{fields}:` / `key[N:<delim>]{fields}:` (the key, when any, is already absent or given).
    fn header(&mut self, key: Option<&str>, len: usize, keyed: bool, fields: Option<&Group>) {
        if let Some(key) = key {
            push_key(&mut self.out, key);
        }
        let _ = write!(self.out, "[{len}");
        if keyed {
            self.out.push(':');
        }
        if self.options.delimiter != Delimiter::Comma {
            self.out.push(self.delimiter as char);
        }
        self.out.push(']');
        if let Some(fields) = fields {
            self.field_group(fields);
        }
        self.out.push(':');
    }

    fn field_group(&mut self, group: &Group) {
        self.out.push('{');
        for (i, field) in group.fields.iter().enumerate() {
            if i > 0 {
                self.out.push(self.delimiter as char);
            }
            push_key(&mut self.out, field.name);
            if let Some(children) = &field.children {
                self.field_group(children);
            }
        }
        self.out.push('}');
    }

    /// Header plus inline values of a primitive array (the caller has started the line).
    fn inline_array(&mut self, key: Option<&str>, items: &[Value]) {
        self.header(key, items.len(), false, None);
        if !items.is_empty() {
            self.out.push(' ');
            self.cells(items.iter());
        }
    }

    fn cells<'v>(&mut self, values: impl Iterator<Item = &'v Value>) {
        for (i, value) in values.enumerate() {
            if i > 0 {
                self.out.push(self.delimiter as char);
            }
            self.primitive(value);
        }
    }

    fn row(&mut self, row: &Map<String, Value>, group: &Group) {
        let mut first = true;
        self.row_cells(row, group, &mut first);
    }

    fn row_cells(&mut self, row: &Map<String, Value>, group: &Group, first: &mut bool) {
        if group.aligned {
            for (field, value) in group.fields.iter().zip(row.values()) {
                self.cell(field, value, first);
            }
        } else {
            for field in &group.fields {
                self.cell(field, row.get(field.name).unwrap_or(&Value::Null), first);
            }
        }
    }

    fn cell(&mut self, field: &Field, value: &Value, first: &mut bool) {
        match (&field.children, value) {
            (Some(children), Value::Object(inner)) => self.row_cells(inner, children, first),
            _ => {
                if !*first {
                    self.out.push(self.delimiter as char);
                }
                *first = false;
                self.primitive(value);
            }
        }
    }

    fn array(&mut self, key: Option<&str>, items: &[Value], depth: usize) {
        self.line(depth);
        if items.is_empty() {
            if let Some(key) = key {
                push_key(&mut self.out, key);
                self.out.push_str(": []");
            } else {
                self.out.push_str("[]");
            }
            return;
        }
        if items.iter().all(is_primitive) {
            self.inline_array(key, items);
            return;
        }
        if let Some(rows) = objects_of(items) {
            if let Some(fields) = tabular_fields(&rows) {
                self.header(key, items.len(), false, Some(&fields));
                for row in rows {
                    self.line(depth + 1);
                    self.row(row, &fields);
                }
                return;
            }
        }
        self.header(key, items.len(), false, None);
        for item in items {
            self.list_item(item, depth + 1);
        }
    }

    fn keyed(
        &mut self,
        key: Option<&str>,
        object: &Map<String, Value>,
        fields: &Group,
        depth: usize,
    ) {
        self.line(depth);
        self.header(key, object.len(), true, Some(fields));
        self.entry_rows(object, fields, depth + 1);
    }

    fn entry_rows(&mut self, object: &Map<String, Value>, fields: &Group, depth: usize) {
        for (entry_key, entry) in object {
            self.line(depth);
            push_key(&mut self.out, entry_key);
            self.out.push_str(": ");
            if let Value::Object(row) = entry {
                self.row(row, fields);
            }
        }
    }

    /// An element of an expanded list (spec §9.4): tabular forms are never used in this position.
    fn list_item(&mut self, value: &Value, depth: usize) {
        match value {
            Value::Array(items) => {
                self.list_line(depth);
                if items.iter().all(is_primitive) {
                    self.inline_array(None, items);
                } else {
                    self.header(None, items.len(), false, None);
                    for item in items {
                        self.list_item(item, depth + 1);
                    }
                }
            }
            Value::Object(object) => self.object_list_item(object, depth),
            primitive => {
                self.list_line(depth);
                self.primitive(primitive);
            }
        }
    }

    /// Spec §10: an object as a list item, its first field on the hyphen line.
    fn object_list_item(&mut self, object: &Map<String, Value>, depth: usize) {
        let mut entries = object.iter();
        let Some((first_key, first_value)) = entries.next() else {
            self.line(depth);
            self.out.push('-');
            return;
        };
        match first_value {
            Value::Array(items) if !items.is_empty() && items.iter().all(is_primitive) => {
                self.list_line(depth);
                self.inline_array(Some(first_key), items);
            }
            Value::Array(items) if items.is_empty() => {
                self.list_line(depth);
                push_key(&mut self.out, first_key);
                self.out.push_str(": []");
            }
            Value::Array(items) => {
                let tabular = objects_of(items).and_then(|rows| {
                    let fields = tabular_fields(&rows)?;
                    Some((rows, fields))
                });
                self.list_line(depth);
                match tabular {
                    Some((rows, fields)) => {
                        self.header(Some(first_key), items.len(), false, Some(&fields));
                        for row in rows {
                            self.line(depth + 2);
                            self.row(row, &fields);
                        }
                    }
                    None => {
                        self.header(Some(first_key), items.len(), false, None);
                        for item in items {
                            self.list_item(item, depth + 2);
                        }
                    }
                }
            }
            Value::Object(inner) => {
                self.list_line(depth);
                if let Some(fields) = keyed_fields(inner) {
                    self.header(Some(first_key), inner.len(), true, Some(&fields));
                    self.entry_rows(inner, &fields, depth + 2);
                } else {
                    push_key(&mut self.out, first_key);
                    self.out.push(':');
                    self.fields(inner, depth + 2);
                }
            }
            primitive => {
                self.list_line(depth);
                push_key(&mut self.out, first_key);
                self.out.push_str(": ");
                self.primitive(primitive);
            }
        }
        for (key, value) in entries {
            self.field(key, value, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn toon(v: Value) -> String {
        encode(&v, &ToonOptions::default())
    }

    #[test]
    fn quoting_follows_section_7_2() {
        assert_eq!(toon(json!({"a": "05"})), "a: \"05\"");
        assert_eq!(toon(json!({"a": "1e-6"})), "a: \"1e-6\"");
        assert_eq!(toon(json!({"a": "1.e5"})), "a: 1.e5");
        assert_eq!(
            toon(json!({"a": "#x", "b": "-", "c": "x y"})),
            "a: \"#x\"\nb: \"-\"\nc: x y"
        );
        assert_eq!(toon(json!({"a": "\u{8}"})), "a: \"\\u0008\"");
    }

    #[test]
    fn keys_outside_the_bare_pattern_are_quoted() {
        assert_eq!(
            toon(json!({"my-key": 1, "a.b": 2, "1x": 3})),
            "\"my-key\": 1\na.b: 2\n\"1x\": 3"
        );
    }

    #[test]
    fn numbers_print_as_javascript_does() {
        assert_eq!(
            toon(json!([1e21, -0.0, 1.5e-7, 9007199254740993u64])),
            "[4]: 1e+21,0,1.5e-7,9007199254740992"
        );
    }

    #[test]
    fn empty_root_object_is_the_empty_document() {
        assert_eq!(toon(json!({})), "");
    }
}
