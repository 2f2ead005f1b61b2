//! Free-tier allowance decisions (pure): per (family, caller wallet) day counts and minimum spacing,
//! with the clock injected by the caller. Stores and returns counts and timestamps only.
