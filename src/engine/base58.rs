//! Bitcoin-alphabet base58 (Solana addresses, signatures, blockhashes). Decoding is strict: any
//! character outside the alphabet is refused; leading '1's are leading zero bytes.

const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

fn digit(c: u8) -> Option<u8> {
    ALPHABET.iter().position(|&a| a == c).map(|p| p as u8)
}

/// Decodes base58; `None` on any character outside the alphabet.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    let mut bytes: Vec<u8> = Vec::with_capacity(s.len());
    for c in s.bytes() {
        let mut carry = u32::from(digit(c)?);
        for b in bytes.iter_mut().rev() {
            carry += u32::from(*b) * 58;
            *b = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.insert(0, (carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = s.bytes().take_while(|&c| c == b'1').count();
    let mut out = vec![0u8; zeros];
    out.extend(bytes.into_iter().skip_while(|&b| b == 0));
    Some(out)
}

/// Encodes bytes as base58.
pub fn encode(bytes: &[u8]) -> String {
    let mut digits: Vec<u8> = Vec::with_capacity(bytes.len() * 138 / 100 + 1);
    for &b in bytes {
        let mut carry = u32::from(b);
        for d in digits.iter_mut().rev() {
            carry += u32::from(*d) << 8;
            *d = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.insert(0, (carry % 58) as u8);
            carry /= 58;
        }
    }
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    let mut s = "1".repeat(zeros);
    s.extend(digits.iter().map(|&d| ALPHABET[usize::from(d)] as char));
    s
}

/// A Solana address: base58 of exactly 32 bytes (at most 44 characters).
pub fn is_solana_address(s: &str) -> bool {
    s.len() <= 44 && decode(s).is_some_and(|b| b.len() == 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_addresses() {
        // The System Program (32 zero bytes) and the USDC mint.
        assert!(is_solana_address("11111111111111111111111111111111"));
        assert_eq!(
            decode("11111111111111111111111111111111").unwrap(),
            vec![0u8; 32]
        );
        assert!(is_solana_address(
            "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
        ));
        assert!(!is_solana_address("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGG"));
        assert!(!is_solana_address(
            "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
        ));
        assert!(!is_solana_address(""));
    }

    #[test]
    fn round_trips() {
        for bytes in [
            vec![],
            vec![0],
            vec![0, 0, 1],
            vec![255; 40],
            (0u8..=255).collect(),
        ] {
            assert_eq!(decode(&encode(&bytes)).unwrap(), bytes);
        }
        assert_eq!(encode(b"hello world"), "StV1DL6CwTryKyV");
    }
}
