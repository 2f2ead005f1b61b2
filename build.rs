//! Build-time work of the worker itself: pin the published spec documents it embeds with
//! `include_str!` and serves, so a served document is byte for byte the published one and an
//! edited copy fails the build instead of shipping (ARCHITECTURE §1). The tokenizer's tables are
//! precomputed and pinned by the tokenizer crate's own build script
//! (src/engine/tokenizer/build.rs).

use sha2::{Digest, Sha256};

/// Each embedded spec document and the SHA-256 of the published file.
const PINNED: [(&str, &str); 3] = [
    (
        "src/engine/token_efficiency/criteria-v1.json",
        "679813958e51c108708d97cf5e806d4e3b72975bbd76d79f687b3fd74daf1d92",
    ),
    (
        "corpus/context-composition/context-composition-v1.criteria.json",
        "a6512715b398897d21db7bfb404480aa6b3e091d4d37326f74769fc01baadf9c",
    ),
    (
        "corpus/context-budget-pack/contract.json",
        "818101ea199a36461b9bf3e5f0a91ffd9abcc32bc42d52350c51ef3299900c34",
    ),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for (path, pin) in PINNED {
        println!("cargo:rerun-if-changed={path}");
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(
            digest == pin,
            "{path} is not the published document: SHA-256 {digest}, pinned {pin}"
        );
    }
}
