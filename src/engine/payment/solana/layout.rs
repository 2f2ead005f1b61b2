//! The instruction layouts the x402 `exact` scheme on Solana allows, and nothing else.
//!
//! The scheme (coinbase/x402 `specs/schemes/exact/scheme_exact_svm.md`, "Facilitator Verification
//! Rules", rule 1) reads: "The decompiled transaction MUST contain 3 to 6 instructions in this
//! order: 1. Compute Budget: Set Compute Unit Limit 2. Compute Budget: Set Compute Unit Price
//! 3. SPL Token or Token-2022 TransferChecked 4. (Optional) Lighthouse or Memo program instruction
//! 5. (Optional) Lighthouse or Memo program instruction 6. (Optional) Memo program instruction",
//! and "If `extra.memo` is present ... exactly one Memo instruction exists and ... its data matches
//! the value of `extra.memo`". Our requirements always carry `extra.memo`, so exactly these four
//! tails after the transfer pass (L = Lighthouse, M = Memo):
//!
//! | instructions | tail      | who builds it                                  |
//! |--------------|-----------|------------------------------------------------|
//! | 4            | M         | the official `@x402/svm` client                |
//! | 5            | L M, M L  | Phantom (one Lighthouse assertion)              |
//! | 6            | L L M     | Solflare (two Lighthouse assertions)            |
//!
//! Reading chosen: the positions are taken literally (the sixth may only be the Memo). The
//! reference facilitators (TypeScript, Go, Python) only check that each of positions 4–6 is
//! Lighthouse or Memo, so they also pass `M L L` and `L M L`; the scheme lets an implementation be
//! stricter ("MAY introduce stricter limits ... MUST NOT relax"), and no wallet is known to build
//! those two.
//!
//! Only the program of a Lighthouse instruction is checked: its data and accounts are the wallet's
//! (the caller still refuses the facilitator's fee payer in any instruction's accounts). The memo
//! must carry no accounts (the official client adds none; a signer account would only let it fail).

use super::transaction::{CompiledInstruction, Transaction};
use super::PaymentError;
use crate::engine::base58;

/// Compute Budget program (instructions 1 and 2).
pub const COMPUTE_BUDGET_PROGRAM: &str = "ComputeBudget111111111111111111111111111111";
/// SPL Memo program (v2; the scheme names no other memo program).
pub const MEMO_PROGRAM: &str = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
/// Lighthouse, the assertion program Phantom and Solflare inject for user protection.
pub const LIGHTHOUSE_PROGRAM: &str = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95";
/// Fewest instructions the scheme allows (limit, price, transfer).
pub const MIN_INSTRUCTIONS: usize = 3;
/// Most instructions the scheme allows (three optional ones after the transfer).
pub const MAX_INSTRUCTIONS: usize = 6;

/// Which token program the TransferChecked runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenProgram {
    SplToken,
    Token2022,
}

impl TokenProgram {
    /// The program's address (base58).
    pub fn address(self) -> &'static str {
        match self {
            TokenProgram::SplToken => super::pda::TOKEN_PROGRAM,
            TokenProgram::Token2022 => super::pda::TOKEN_2022_PROGRAM,
        }
    }
}

/// What each instruction's program is, as far as the layout is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    ComputeBudget,
    Transfer(TokenProgram),
    Lighthouse,
    Memo,
    Other,
}

fn role_of(program: &[u8; 32]) -> Role {
    match base58::encode(program).as_str() {
        COMPUTE_BUDGET_PROGRAM => Role::ComputeBudget,
        super::pda::TOKEN_PROGRAM => Role::Transfer(TokenProgram::SplToken),
        super::pda::TOKEN_2022_PROGRAM => Role::Transfer(TokenProgram::Token2022),
        LIGHTHOUSE_PROGRAM => Role::Lighthouse,
        MEMO_PROGRAM => Role::Memo,
        _ => Role::Other,
    }
}

/// The instructions of a payment whose layout the scheme allows and whose one memo is ours. Their
/// contents (compute budget figures, the transfer's accounts and amount) are the caller's to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaymentInstructions<'a> {
    pub compute_unit_limit: &'a CompiledInstruction,
    pub compute_unit_price: &'a CompiledInstruction,
    pub transfer: &'a CompiledInstruction,
    pub token_program: TokenProgram,
    /// How many Lighthouse instructions the wallet added (0, 1 or 2).
    pub lighthouse_instructions: usize,
}

/// Checks the layout of a decoded transaction against the scheme and `expected_memo` (our
/// `extra.memo`, as UTF-8 bytes). Refusals: `InstructionLayout` for a count outside 3–6, an
/// instruction out of its place or a program the scheme does not name; `MemoCount` when there is
/// not exactly one Memo instruction; `InvalidMemo` when the one memo is not ours.
pub fn payment_instructions<'a>(
    tx: &'a Transaction,
    expected_memo: &[u8],
) -> Result<PaymentInstructions<'a>, PaymentError> {
    let instructions = &tx.instructions;
    if !(MIN_INSTRUCTIONS..=MAX_INSTRUCTIONS).contains(&instructions.len()) {
        return Err(PaymentError::InstructionLayout);
    }
    // The decoder guarantees every program index points inside the static keys.
    let roles: Vec<Role> = instructions
        .iter()
        .map(|ix| role_of(&tx.account_keys[usize::from(ix.program_index)]))
        .collect();
    let token_program = match roles[..MIN_INSTRUCTIONS] {
        [Role::ComputeBudget, Role::ComputeBudget, Role::Transfer(program)] => program,
        _ => return Err(PaymentError::InstructionLayout),
    };
    let optional_in_place = roles[MIN_INSTRUCTIONS..]
        .iter()
        .enumerate()
        .all(|(i, role)| {
            if MIN_INSTRUCTIONS + i == MAX_INSTRUCTIONS - 1 {
                *role == Role::Memo
            } else {
                matches!(role, Role::Lighthouse | Role::Memo)
            }
        });
    if !optional_in_place {
        return Err(PaymentError::InstructionLayout);
    }
    let mut memos = instructions
        .iter()
        .zip(&roles)
        .filter(|(_, role)| **role == Role::Memo)
        .map(|(ix, _)| ix);
    let memo = match (memos.next(), memos.next()) {
        (Some(memo), None) => memo,
        _ => return Err(PaymentError::MemoCount),
    };
    if memo.data != expected_memo || !memo.account_indexes.is_empty() {
        return Err(PaymentError::InvalidMemo);
    }
    Ok(PaymentInstructions {
        compute_unit_limit: &instructions[0],
        compute_unit_price: &instructions[1],
        transfer: &instructions[2],
        token_program,
        lighthouse_instructions: roles.iter().filter(|r| **r == Role::Lighthouse).count(),
    })
}
