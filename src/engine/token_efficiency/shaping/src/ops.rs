//! The operations of token-efficiency/v1 as the published criteria name them: the operation
//! sets, S-1..S-4, the S-3 cap and the truncation marker. Read by the census, the tree and the
//! report; depends on nothing.

/// Strings longer than this many characters are truncated by S-3.
pub const S3_CAP_CHARS: usize = 2000;

/// The truncation marker of S-3 and S-4 (`op` is `"S-3"` or `"S-4"`).
pub fn marker(removed_chars: usize, op: &str) -> String {
    format!("[…truncated: {removed_chars} chars removed under token-efficiency/v1 {op}]")
}

/// Which operation set the payload admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpSet {
    Json,
    TextOnly,
}

impl OpSet {
    pub fn label(self) -> &'static str {
        match self {
            OpSet::Json => "json",
            OpSet::TextOnly => "text-only",
        }
    }
}

/// The operations, in published order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    S1,
    S2,
    S3,
    S4,
}

impl Op {
    pub fn id(self) -> &'static str {
        match self {
            Op::S1 => "S-1",
            Op::S2 => "S-2",
            Op::S3 => "S-3",
            Op::S4 => "S-4",
        }
    }
}
