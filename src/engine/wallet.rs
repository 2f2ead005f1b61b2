//! Which wallets the free tier counts: a Solana address (base58 of 32 bytes) or an EVM address
//! (`0x` and 40 hex digits, any case). The allowance is counted per wallet, so an EVM address is
//! counted under its lower-case form (its letter case is only a checksum, EIP-55): re-casing the
//! same address never opens a second allowance.

/// A Solana or an EVM address.
pub fn is_wallet_address(s: &str) -> bool {
    crate::engine::base58::is_solana_address(s) || crate::engine::payment::evm::is_evm_address(s)
}

/// The name the allowance counts a valid wallet under.
pub fn allowance_name(wallet: &str) -> String {
    if crate::engine::payment::evm::is_evm_address(wallet) {
        format!("0x{}", wallet[2..].to_ascii_lowercase())
    } else {
        wallet.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solana_and_evm_addresses_are_wallets_and_evm_case_is_folded() {
        let evm = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
        assert!(is_wallet_address(evm));
        assert!(is_wallet_address(
            "GyGKxMyg1p9SsHfm15MkNUu1u9TN2JtTspcdmrtGUdse"
        ));
        assert!(!is_wallet_address(
            "0x90F79bf6EB2c4f870365E785982E1f101E93b90"
        ));
        assert!(!is_wallet_address(
            "90F79bf6EB2c4f870365E785982E1f101E93b906"
        ));
        assert!(!is_wallet_address(""));
        assert_eq!(allowance_name(evm), evm.to_ascii_lowercase());
        assert_eq!(
            allowance_name(&evm.replace("0x", "0X")),
            evm.to_ascii_lowercase()
        );
        let solana = "GyGKxMyg1p9SsHfm15MkNUu1u9TN2JtTspcdmrtGUdse";
        assert_eq!(allowance_name(solana), solana);
    }
}
