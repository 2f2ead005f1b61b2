//! Program-derived addresses, computed purely: SHA-256 over the seeds, the bump byte, the program id
//! and the marker "ProgramDerivedAddress", taking the highest bump whose hash is NOT an Ed25519
//! curve point (decompression through ed25519-dalek decides). Used to know the merchant's associated
//! token account without asking any RPC.

use sha2::{Digest, Sha256};

/// SPL Token program.
pub const TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
/// SPL Token-2022 program (the x402 `exact` scheme accepts a TransferChecked under either).
pub const TOKEN_2022_PROGRAM: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
/// SPL Associated Token Account program.
pub const ASSOCIATED_TOKEN_PROGRAM: &str = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";

/// True when the 32 bytes decompress to a point on the Ed25519 curve.
pub fn is_on_curve(bytes: &[u8; 32]) -> bool {
    ed25519_dalek::VerifyingKey::from_bytes(bytes).is_ok()
}

/// `find_program_address`: the address and its bump, or `None` when no bump yields an off-curve
/// hash (astronomically unlikely; never silently substitutes).
pub fn find_program_address(seeds: &[&[u8]], program: &[u8; 32]) -> Option<([u8; 32], u8)> {
    for bump in (0..=255u8).rev() {
        let mut hasher = Sha256::new();
        for seed in seeds {
            hasher.update(seed);
        }
        hasher.update([bump]);
        hasher.update(program);
        hasher.update(b"ProgramDerivedAddress");
        let candidate: [u8; 32] = hasher.finalize().into();
        if !is_on_curve(&candidate) {
            return Some((candidate, bump));
        }
    }
    None
}

fn address(base58: &str) -> [u8; 32] {
    let bytes = crate::engine::base58::decode(base58).unwrap_or_default();
    let mut out = [0u8; 32];
    if bytes.len() == 32 {
        out.copy_from_slice(&bytes);
    }
    out
}

/// The associated token account of `owner` for `mint` under the classic SPL Token program.
pub fn associated_token_address(owner: &[u8; 32], mint: &[u8; 32]) -> Option<[u8; 32]> {
    associated_token_address_under(owner, mint, &address(TOKEN_PROGRAM))
}

/// The associated token account of `owner` for `mint` under `token_program` (SPL Token or
/// Token-2022: the program is one of the seeds, so the two accounts differ).
pub fn associated_token_address_under(
    owner: &[u8; 32],
    mint: &[u8; 32],
    token_program: &[u8; 32],
) -> Option<[u8; 32]> {
    find_program_address(
        &[owner, token_program, mint],
        &address(ASSOCIATED_TOKEN_PROGRAM),
    )
    .map(|(found, _)| found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::base58;

    /// (owner, mint, ATA, bump) as computed by @solana-program/token's findAssociatedTokenPda
    /// (@solana/kit 5.5.1), an independent implementation.
    const KIT_VECTORS: &[(&str, &str, &str, u8)] = &[
        (
            "11111111111111111111111111111111",
            "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
            "27SXXCACcdgCZLU5hwYYjCb4j22H4ovDpHooVJpAJtXw",
            255,
        ),
        (
            "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
            "Dtnqy9Z3KgoVXe6dApLbVfHZmVG2qHYwpZTcnFNXTXvj",
            254,
        ),
        (
            "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
            "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            "FGETo8T8wMcN2wCjav8VK6eh3dLk63evNDPxzLSJra8B",
            254,
        ),
    ];

    /// The associated account of (owner, mint) under `token_program`, checked against the
    /// vector's address and bump.
    fn derived_as_kit(
        owner: &str,
        mint: &str,
        token_program: &[u8; 32],
        ata: &str,
        bump: u8,
    ) -> [u8; 32] {
        let (found, found_bump) = find_program_address(
            &[&address(owner), token_program, &address(mint)],
            &address(ASSOCIATED_TOKEN_PROGRAM),
        )
        .unwrap();
        assert_eq!(base58::encode(&found), ata);
        assert_eq!(found_bump, bump);
        found
    }

    #[test]
    fn matches_kit_associated_token_addresses() {
        for &(owner, mint, ata, bump) in KIT_VECTORS {
            let found = derived_as_kit(owner, mint, &address(TOKEN_PROGRAM), ata, bump);
            assert_eq!(
                associated_token_address(&address(owner), &address(mint)),
                Some(found)
            );
        }
    }

    /// (owner, mint, Token-2022 ATA, bump) from @solana-program/token-2022 0.6.1's
    /// findAssociatedTokenPda with tokenProgram = TOKEN_2022_PROGRAM_ADDRESS.
    const KIT_TOKEN_2022_VECTORS: &[(&str, &str, &str, u8)] = &[
        (
            "11111111111111111111111111111111",
            "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
            "wePRsfWaC494MjmJ7hLA5f88uf32a9e5j4P1DDSj5u4",
            255,
        ),
        (
            "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
            "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            "GdjpegrtGwU3pgtzPivYVViSA8rmGL248qBVKzsrU3DD",
            254,
        ),
    ];

    #[test]
    fn matches_kit_token_2022_associated_token_addresses() {
        let token_2022 = address(TOKEN_2022_PROGRAM);
        for &(owner, mint, ata, bump) in KIT_TOKEN_2022_VECTORS {
            let found = derived_as_kit(owner, mint, &token_2022, ata, bump);
            assert_eq!(
                associated_token_address_under(&address(owner), &address(mint), &token_2022),
                Some(found)
            );
            assert_ne!(
                associated_token_address(&address(owner), &address(mint)),
                Some(found)
            );
        }
    }

    #[test]
    fn wallet_keys_are_on_curve_and_atas_are_not() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
        assert!(is_on_curve(&key.verifying_key().to_bytes()));
        assert!(!is_on_curve(&address(KIT_VECTORS[0].2)));
    }
}
