//! Object key order, the one parameter the writer takes, and the array-index test JavaScript's
//! property order rests on.

/// The order a writer lists an object's members in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrder {
    /// The tree's own order (a JavaScript object read by [`super::read`] is already in property
    /// order; a `serde_json::Map` keeps insertion order).
    Insertion,
    /// JavaScript's own-property order: array-index keys first in ascending numeric order, then
    /// the other keys in insertion order.
    JsProperty,
    /// RFC 8785 (JCS): sorted by the keys' UTF-16 code units.
    Jcs,
}

/// An array index in JavaScript's sense: the canonical decimal form (no sign, no leading zero) of
/// an integer 0 ..= 2^32 − 2, given as code units (`key.bytes().map(u16::from)` for UTF-8 text:
/// a non-ASCII byte is no digit either way).
#[inline]
pub fn array_index(key: impl IntoIterator<Item = u16>) -> Option<u32> {
    let (mut value, mut len, mut leading_zero) = (0u64, 0usize, false);
    for unit in key {
        if !(0x30..=0x39).contains(&unit) || len == 10 {
            return None;
        }
        if len == 0 {
            leading_zero = unit == 0x30;
        }
        value = value * 10 + u64::from(unit - 0x30);
        len += 1;
    }
    let canonical = len == 1 || (len > 1 && !leading_zero);
    (canonical && value <= 4_294_967_294).then_some(value as u32)
}

/// [`array_index`] of UTF-8 text.
#[inline]
pub fn array_index_of(key: &str) -> Option<u32> {
    array_index(key.bytes().map(u16::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_indices_are_javascripts() {
        for (key, index) in [
            ("0", Some(0)),
            ("7", Some(7)),
            ("10", Some(10)),
            ("4294967294", Some(4_294_967_294)),
            ("4294967295", None),
            ("42949672940", None),
            ("01", None),
            ("00", None),
            ("-1", None),
            ("+1", None),
            ("", None),
            ("1e3", None),
            ("١", None),
        ] {
            assert_eq!(array_index_of(key), index, "{key}");
            assert_eq!(array_index(key.encode_utf16()), index, "{key}");
        }
    }
}
