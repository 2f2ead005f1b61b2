//! Whether a text is JSON at all, at any depth: an explicit stack, no recursion, nothing built.
//! The reader stops at its depth limit; this answers what lies past it (JavaScript's
//! `JSON.parse` reads any depth, so a too-deep text is told apart from one that is not JSON).

use super::read::Cursor;

/// True when the whole of `text` is one JSON text.
pub fn is_json(text: &str) -> bool {
    let mut p = Cursor::new(text);
    let mut open: Vec<u8> = Vec::new();
    p.skip_whitespace();
    'value: loop {
        p.skip_whitespace();
        let read = match p.peek() {
            Some(open_byte @ (b'[' | b'{')) => {
                let close = if open_byte == b'[' { b']' } else { b'}' };
                p.pos += 1;
                p.skip_whitespace();
                if p.peek() == Some(close) {
                    p.pos += 1;
                } else {
                    if open_byte == b'{' && !member_key(&mut p) {
                        return false;
                    }
                    open.push(open_byte);
                    continue 'value;
                }
                true
            }
            Some(b'"') => p.string().is_ok(),
            Some(b't') => p.expect_literal(b"true").is_ok(),
            Some(b'f') => p.expect_literal(b"false").is_ok(),
            Some(b'n') => p.expect_literal(b"null").is_ok(),
            Some(b'-' | b'0'..=b'9') => p.number().is_ok(),
            _ => false,
        };
        if !read {
            return false;
        }
        // After a value: close containers or move to the next element.
        loop {
            p.skip_whitespace();
            match (open.last(), p.peek()) {
                (None, next) => return next.is_none(),
                (Some(b'['), Some(b']')) | (Some(b'{'), Some(b'}')) => {
                    p.pos += 1;
                    open.pop();
                }
                (Some(b'['), Some(b',')) => {
                    p.pos += 1;
                    continue 'value;
                }
                (Some(b'{'), Some(b',')) => {
                    p.pos += 1;
                    p.skip_whitespace();
                    if !member_key(&mut p) {
                        return false;
                    }
                    continue 'value;
                }
                _ => return false,
            }
        }
    }
}

/// `"key" :` at the cursor.
fn member_key(p: &mut Cursor) -> bool {
    if p.peek() != Some(b'"') || p.string().is_err() {
        return false;
    }
    p.skip_whitespace();
    if p.peek() != Some(b':') {
        return false;
    }
    p.pos += 1;
    true
}
