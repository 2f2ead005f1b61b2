//! Solana transaction wire format, decoded strictly: compact-u16 lengths must be canonical, every
//! index must point inside the account list, account keys must be distinct, and no byte may trail
//! the message. Both legacy and v0 messages decode (the caller decides what it accepts); any other
//! version is refused. `message` keeps the exact signed bytes, so signatures verify over them and
//! their SHA-256 names the payment.

/// Largest transaction Solana accepts on the wire (IPv6 MTU minus headers).
pub const MAX_TRANSACTION_BYTES: usize = 1232;

/// Why a transaction could not be decoded. Carries no input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    Truncated,
    NonCanonicalLength,
    UnsupportedVersion,
    SignatureCountMismatch,
    IndexOutOfRange,
    DuplicateAccountKey,
    TrailingBytes,
    TooLarge,
    InvalidHeader,
}

/// Which message format the transaction used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageVersion {
    Legacy,
    V0,
}

/// One compiled instruction: indexes into the static account keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledInstruction {
    pub program_index: u8,
    pub account_indexes: Vec<u8>,
    pub data: Vec<u8>,
}

/// One v0 address-table lookup (we only ever count them to refuse them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressTableLookup {
    pub table: [u8; 32],
    pub writable_indexes: Vec<u8>,
    pub readonly_indexes: Vec<u8>,
}

/// A decoded transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    pub signatures: Vec<[u8; 64]>,
    pub version: MessageVersion,
    pub num_required_signatures: u8,
    pub num_readonly_signed: u8,
    pub num_readonly_unsigned: u8,
    pub account_keys: Vec<[u8; 32]>,
    pub recent_blockhash: [u8; 32],
    pub instructions: Vec<CompiledInstruction>,
    pub address_table_lookups: Vec<AddressTableLookup>,
    /// The exact message bytes the signatures cover.
    pub message: Vec<u8>,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).ok_or(DecodeError::Truncated)?;
        let slice = self.bytes.get(self.at..end).ok_or(DecodeError::Truncated)?;
        self.at = end;
        Ok(slice)
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Solana's compact-u16 ("shortvec"): 1–3 bytes, 7 bits each, little end first; the encoding
    /// must be the shortest one and the value must fit in 16 bits.
    fn compact_u16(&mut self) -> Result<usize, DecodeError> {
        let mut value: u32 = 0;
        for position in 0..3 {
            let byte = self.byte()?;
            let bits = u32::from(byte & 0x7f);
            value |= bits << (7 * position);
            let last = byte & 0x80 == 0;
            if last {
                if position > 0 && byte == 0 {
                    return Err(DecodeError::NonCanonicalLength);
                }
                if position == 2 && byte > 0x03 {
                    return Err(DecodeError::NonCanonicalLength);
                }
                return Ok(value as usize);
            }
            if position == 2 {
                return Err(DecodeError::NonCanonicalLength);
            }
        }
        Err(DecodeError::NonCanonicalLength)
    }

    fn index_list(&mut self) -> Result<Vec<u8>, DecodeError> {
        let n = self.compact_u16()?;
        Ok(self.take(n)?.to_vec())
    }
}

/// Decodes a wire transaction (the bytes behind the payload's base64).
pub fn decode(bytes: &[u8]) -> Result<Transaction, DecodeError> {
    if bytes.len() > MAX_TRANSACTION_BYTES {
        return Err(DecodeError::TooLarge);
    }
    let mut reader = Reader { bytes, at: 0 };
    let signature_count = reader.compact_u16()?;
    let mut signatures = Vec::with_capacity(signature_count.min(32));
    for _ in 0..signature_count {
        signatures.push(reader.array::<64>()?);
    }
    let message_start = reader.at;

    let first = reader.byte()?;
    let (version, num_required_signatures) = if first & 0x80 != 0 {
        if first & 0x7f != 0 {
            return Err(DecodeError::UnsupportedVersion);
        }
        (MessageVersion::V0, reader.byte()?)
    } else {
        (MessageVersion::Legacy, first)
    };
    let num_readonly_signed = reader.byte()?;
    let num_readonly_unsigned = reader.byte()?;

    let key_count = reader.compact_u16()?;
    let mut account_keys = Vec::with_capacity(key_count.min(64));
    for _ in 0..key_count {
        let key = reader.array::<32>()?;
        if account_keys.contains(&key) {
            return Err(DecodeError::DuplicateAccountKey);
        }
        account_keys.push(key);
    }
    let recent_blockhash = reader.array::<32>()?;

    let instruction_count = reader.compact_u16()?;
    let mut instructions = Vec::with_capacity(instruction_count.min(16));
    for _ in 0..instruction_count {
        let program_index = reader.byte()?;
        let account_indexes = reader.index_list()?;
        let data_len = reader.compact_u16()?;
        let data = reader.take(data_len)?.to_vec();
        instructions.push(CompiledInstruction {
            program_index,
            account_indexes,
            data,
        });
    }

    let mut address_table_lookups = Vec::new();
    if version == MessageVersion::V0 {
        let lookup_count = reader.compact_u16()?;
        for _ in 0..lookup_count {
            let table = reader.array::<32>()?;
            let writable_indexes = reader.index_list()?;
            let readonly_indexes = reader.index_list()?;
            address_table_lookups.push(AddressTableLookup {
                table,
                writable_indexes,
                readonly_indexes,
            });
        }
    }
    if reader.at != bytes.len() {
        return Err(DecodeError::TrailingBytes);
    }

    let required = usize::from(num_required_signatures);
    if required == 0
        || required > account_keys.len()
        || usize::from(num_readonly_signed) >= required
        || usize::from(num_readonly_unsigned) > account_keys.len() - required
    {
        return Err(DecodeError::InvalidHeader);
    }
    if signatures.len() != required {
        return Err(DecodeError::SignatureCountMismatch);
    }
    // Programs must be static keys; accounts may also index the looked-up addresses (which follow
    // the static keys). Lookups themselves are refused by the caller.
    let static_total = account_keys.len();
    let key_total = static_total
        + address_table_lookups
            .iter()
            .map(|l| l.writable_indexes.len() + l.readonly_indexes.len())
            .sum::<usize>();
    for instruction in &instructions {
        if usize::from(instruction.program_index) >= static_total
            || instruction
                .account_indexes
                .iter()
                .any(|&i| usize::from(i) >= key_total)
        {
            return Err(DecodeError::IndexOutOfRange);
        }
    }

    Ok(Transaction {
        signatures,
        version,
        num_required_signatures,
        num_readonly_signed,
        num_readonly_unsigned,
        account_keys,
        recent_blockhash,
        instructions,
        address_table_lookups,
        message: bytes[message_start..].to_vec(),
    })
}

/// Appends Solana's compact-u16 encoding of `value` (used by tests and fixtures to build
/// transactions; decoding above is the strict inverse).
pub fn push_compact_u16(out: &mut Vec<u8>, value: u16) {
    let mut rest = value;
    loop {
        let low = (rest & 0x7f) as u8;
        rest >>= 7;
        if rest == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_compact(bytes: &[u8]) -> Result<(usize, usize), DecodeError> {
        let mut reader = Reader { bytes, at: 0 };
        let value = reader.compact_u16()?;
        Ok((value, reader.at))
    }

    #[test]
    fn compact_u16_known_encodings() {
        // Values and encodings from Solana's short_vec documentation.
        let cases: &[(u16, &[u8])] = &[
            (0x0000, &[0x00]),
            (0x007f, &[0x7f]),
            (0x0080, &[0x80, 0x01]),
            (0x00ff, &[0xff, 0x01]),
            (0x0100, &[0x80, 0x02]),
            (0x07ff, &[0xff, 0x0f]),
            (0x3fff, &[0xff, 0x7f]),
            (0x4000, &[0x80, 0x80, 0x01]),
            (0xffff, &[0xff, 0xff, 0x03]),
        ];
        for &(value, encoding) in cases {
            assert_eq!(
                read_compact(encoding),
                Ok((usize::from(value), encoding.len()))
            );
            let mut out = Vec::new();
            push_compact_u16(&mut out, value);
            assert_eq!(out, encoding);
        }
    }

    #[test]
    fn compact_u16_refuses_non_canonical_and_overflow() {
        for bad in [
            &[0x80, 0x00][..],
            &[0x80, 0x80, 0x00],
            &[0xff, 0xff, 0x04],
            &[0x80, 0x80, 0x80, 0x01],
            &[0x80],
        ] {
            assert!(read_compact(bad).is_err(), "{bad:?}");
        }
    }

    fn minimal_v0() -> Vec<u8> {
        // 1 signature, v0, header (1,0,1), 2 keys, blockhash, 1 instruction (program 1, no accounts,
        // data [7]), 0 lookups.
        let mut bytes = vec![1];
        bytes.extend([9u8; 64]);
        bytes.extend([0x80, 1, 0, 1, 2]);
        bytes.extend([1u8; 32]);
        bytes.extend([2u8; 32]);
        bytes.extend([3u8; 32]);
        bytes.extend([1, 1, 0, 1, 7, 0]);
        bytes
    }

    #[test]
    fn decodes_a_minimal_v0_message() {
        let bytes = minimal_v0();
        let tx = decode(&bytes).unwrap();
        assert_eq!(tx.version, MessageVersion::V0);
        assert_eq!(tx.signatures, vec![[9u8; 64]]);
        assert_eq!(tx.account_keys, vec![[1u8; 32], [2u8; 32]]);
        assert_eq!(tx.recent_blockhash, [3u8; 32]);
        assert_eq!(tx.instructions.len(), 1);
        assert_eq!(tx.instructions[0].data, vec![7]);
        assert_eq!(tx.message, bytes[65..].to_vec());
    }

    #[test]
    fn refuses_damaged_messages() {
        let good = minimal_v0();
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(decode(&trailing), Err(DecodeError::TrailingBytes));
        assert_eq!(decode(&good[..good.len() - 1]), Err(DecodeError::Truncated));
        let mut version1 = good.clone();
        version1[65] = 0x81;
        assert_eq!(decode(&version1), Err(DecodeError::UnsupportedVersion));
        let mut duplicate = good.clone();
        duplicate[70..102].copy_from_slice(&[2u8; 32]);
        assert_eq!(decode(&duplicate), Err(DecodeError::DuplicateAccountKey));
        let mut bad_program = good.clone();
        bad_program[167] = 5;
        assert_eq!(decode(&bad_program), Err(DecodeError::IndexOutOfRange));
        let mut two_required = good.clone();
        two_required[66] = 2;
        two_required[68] = 0;
        assert_eq!(
            decode(&two_required),
            Err(DecodeError::SignatureCountMismatch)
        );
        assert_eq!(decode(&vec![0u8; 1233]), Err(DecodeError::TooLarge));
    }
}
