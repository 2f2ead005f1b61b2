//! The hook a family hangs on a read: what it needs to see while the text is walked once, so no
//! second walk is needed. Every method has a no-op default; readers are generic over the observer
//! (monomorphic: a no-op observer costs nothing).
//!
//! [`super::read`] calls [`Observer::key`] and [`Observer::string`] with each decoded key and
//! string. [`super::canonical_of`] calls the others with byte offsets into the text it walks
//! (meaningful for the canonical text only when the text was found canonical already).

pub trait Observer {
    /// An object key, decoded.
    #[inline]
    fn key(&mut self, _key: &[u16]) {}
    /// A string value, decoded.
    #[inline]
    fn string(&mut self, _units: &[u16]) {}
    /// An object member's value starts at `value[0]`; when it is `""`, `[]` or `{}`, `value`
    /// starts with those two bytes. Past that, `value` may go on with the text's bytes (the
    /// canonical walk) or its literal's (the one-pass reader, [`super::unescape_canonical`]).
    #[inline]
    fn member_value(&mut self, _value: &[u8]) {}
    /// A string value whose literal (quotes included) is `literal_len` bytes long.
    #[inline]
    fn string_literal(&mut self, _literal_len: usize) {}
    /// An array opens; the returned mark comes back to [`Observer::array_end`].
    #[inline]
    fn array_start(&mut self) -> usize {
        0
    }
    /// The open array's next entry is `bytes[start..end]`.
    #[inline]
    fn array_entry(&mut self, _bytes: &[u8], _start: usize, _end: usize) {}
    /// The array opened at `mark` closes.
    #[inline]
    fn array_end(&mut self, _bytes: &[u8], _mark: usize) {}
}

/// Sees nothing.
impl Observer for () {}
