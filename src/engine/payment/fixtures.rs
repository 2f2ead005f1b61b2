//! What the payment tests share: a Solana devnet configuration with keys derived from fixed
//! seeds, the route, key and price of the call under test, and a route listing.

use super::{discovery, PaymentConfig, SOLANA_DEVNET};
use crate::engine::base58;
use ed25519_dalek::SigningKey;
use serde_json::json;

pub const ROUTE: &str = "token-efficiency/budget";

pub const KEY: &str = "abcdefghijklmnop";

pub const PRICE: u64 = 20_000;

pub fn key_of(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

pub fn addr(key: &SigningKey) -> [u8; 32] {
    key.verifying_key().to_bytes()
}

pub fn b58(bytes: &[u8; 32]) -> String {
    base58::encode(bytes)
}

pub fn program(id: &str) -> [u8; 32] {
    PaymentConfig::address(id).unwrap()
}

pub fn config() -> PaymentConfig {
    PaymentConfig {
        network: SOLANA_DEVNET.into(),
        asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU".into(),
        pay_to: b58(&addr(&key_of(1))),
        max_timeout_seconds: 60,
        fee_payer: b58(&addr(&key_of(2))),
        cu_price_cap_microlamports: 1_000,
        house_wallets: vec![b58(&addr(&key_of(9)))],
        evm: Default::default(),
    }
}

pub fn listing() -> discovery::RouteListing {
    discovery::RouteListing {
        description: "a test route".into(),
        method: "POST",
        body_schema: json!({"type": "object"}),
        body_example: json!({"a": 1}),
        output_schema: json!({"type": "object"}),
        headers: vec![("Idempotency-Key", "k")],
    }
}
