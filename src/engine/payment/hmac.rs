//! HMAC-SHA256, the one keyed MAC of the payment layer: the keyless call's nonce token
//! ([`super::binding`]), the pack's request fingerprint ([`super::idempotency`]), MPP's challenge
//! id and the guard objects' names all use it.

use sha2::{Digest, Sha256};

/// HMAC-SHA256 (RFC 2104) over `parts` joined as they are given.
pub fn hmac_sha256(secret: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut key = [0u8; BLOCK];
    if secret.len() > BLOCK {
        key[..32].copy_from_slice(&Sha256::digest(secret));
    } else {
        key[..secret.len()].copy_from_slice(secret);
    }
    let pad = |byte: u8| key.map(|k| k ^ byte);
    let mut inner = Sha256::new();
    inner.update(pad(0x36));
    for part in parts {
        inner.update(part);
    }
    let mut outer = Sha256::new();
    outer.update(pad(0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        // Test case 1.
        let key = [0x0bu8; 20];
        assert_eq!(
            crate::engine::sign::hex(&hmac_sha256(&key, &[b"Hi There"])),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        // Test case 2, the message given in two parts.
        assert_eq!(
            crate::engine::sign::hex(&hmac_sha256(
                b"Jefe",
                &[b"what do ya want ", b"for nothing?"]
            )),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        let long = [0xaau8; 131];
        assert_eq!(
            crate::engine::sign::hex(&hmac_sha256(
                &long,
                &[b"Test Using Larger Than Block-Size Key - Hash Key First"]
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }
}
