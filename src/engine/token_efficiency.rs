//! token-efficiency/v1: fit one tool-result payload to a token budget (S-1..S-4) with an exact receipt.
