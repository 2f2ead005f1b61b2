//! Whole-piece byte scans, eight bytes at a time: the EF BB BF check every merge of a piece that
//! the piece cache did not answer makes (where gpt-tokenizer's rank function is irregular), and the
//! prefix analysis's check for a long piece of one repeated byte. A long piece (up to the 262 KB
//! body cap) is scanned before it is merged, and a scan one byte at a time cost about a quarter of
//! a count of a run of one letter (wasm has no vector unit in this build, so the compiler does not
//! widen these loops).

/// The byte order mark's UTF-8 bytes.
pub(crate) const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Eight copies of `byte`.
fn splat(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

/// Whether any byte of `word` is zero (the classic test: exact, no false positives).
fn has_zero_byte(word: u64) -> bool {
    word.wrapping_sub(splat(0x01)) & !word & splat(0x80) != 0
}

fn word_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

/// Whether `bytes` hold EF BB BF anywhere, checking the three bytes only where an EF byte is.
#[inline]
pub(crate) fn contains_bom(bytes: &[u8]) -> bool {
    let is_bom_at = |at: usize| bytes[at..].starts_with(&BOM);
    let words = bytes.len() / 8 * 8;
    let mut at = 0;
    while at < words {
        if has_zero_byte(word_at(bytes, at) ^ splat(BOM[0])) && (at..at + 8).any(is_bom_at) {
            return true;
        }
        at += 8;
    }
    (words..bytes.len()).any(is_bom_at)
}

/// Whether `bytes` (not empty) are one byte repeated.
pub(crate) fn is_one_byte_repeated(bytes: &[u8]) -> bool {
    let first = splat(bytes[0]);
    let words = bytes.len() / 8 * 8;
    (0..words).step_by(8).all(|at| word_at(bytes, at) == first)
        && bytes[words..].iter().all(|&b| b == bytes[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_agree_with_byte_at_a_time_ones() {
        let mut rng = context_meter_test_rng::Lcg(0x5CA7_B0B5);
        let units: [&[u8]; 6] = [
            b"a",
            b"\xEF",
            b"\xEF\xBB",
            b"\xBB\xBF",
            b"\xEF\xBB\xBF",
            b"-",
        ];
        let (mut boms, mut runs) = (0, 0);
        for len in 1..120 {
            for _ in 0..20 {
                let mut bytes = Vec::new();
                // Mostly one unit, so runs of one byte occur as often as mixtures.
                let main = units[rng.below(units.len())];
                while bytes.len() < len {
                    let unit = if rng.below(8) == 0 {
                        units[rng.below(units.len())]
                    } else {
                        main
                    };
                    bytes.extend_from_slice(unit);
                }
                bytes.truncate(len);
                let bom = bytes.windows(3).any(|w| w == BOM);
                let run = bytes.iter().all(|&b| b == bytes[0]);
                assert_eq!(contains_bom(&bytes), bom, "{bytes:?}");
                assert_eq!(is_one_byte_repeated(&bytes), run, "{bytes:?}");
                boms += usize::from(bom);
                runs += usize::from(run);
            }
        }
        assert!(boms > 200 && runs > 50, "{boms} {runs}");
    }
}
