//! The third-party samples (letta .af files, an Anthropic recording, the official TOON fixtures)
//! are not part of this repository: CI keeps them in `../shared/samples` beside the checkout. Tests
//! that read them ask [`dir`]; on a clone without them they are skipped, and the test binary prints
//! ONE loud line saying what did not run and how to run it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The samples folder: `shared/samples` in the nearest ancestor of the repository that has one
/// (`../shared/samples` in CI; a worktree nested deeper finds the same folder).
pub fn root() -> Option<PathBuf> {
    root_beside(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// [`root`] for the repository at `repository`.
pub fn root_beside(repository: &Path) -> Option<PathBuf> {
    repository
        .ancestors()
        .skip(1)
        .map(|dir| dir.join("shared/samples"))
        .find(|dir| dir.is_dir())
}

/// `samples/<sub>` when the shared samples are present. When they are absent: `None`, after one
/// SKIPPED line (once per test binary) naming `binary`, the tests that need them, and how to run them.
pub fn dir(sub: &str, binary: &str) -> Option<PathBuf> {
    let Some(root) = root() else {
        say_skipped(binary);
        return None;
    };
    let dir = root.join(sub);
    // Present but incomplete is a broken checkout of the samples, not a reason to skip.
    assert!(
        dir.is_dir(),
        "{} is missing from the shared samples",
        dir.display()
    );
    Some(dir)
}

fn say_skipped(binary: &str) {
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        // Straight to the stderr handle: libtest captures `eprintln!` of a passing test, and this
        // line must be seen in `make test`'s output.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: no ../shared/samples beside the repository, so the tests of `{binary}` that read \
             the third-party samples did NOT run (each returns early); to run them, put the shared \
             samples (letta-af/, anthropic-messages/, toon-spec/encode/) at ../shared/samples and \
             rerun `cargo test --test {binary}`"
        );
    });
}
