//! The closed refusals of token-efficiency/v1. Every message is a static sentence; the only variable
//! content is numbers (caps, limits). No refusal carries or renders any part of a submission.

use crate::engine::ClosedError;

use super::published::{BODY_CAP, MAX_DEPTH, MAX_TOKENS_FIGURE};

/// Why a call was refused. All are free (nothing is charged); all but the last are decided on the
/// request body alone, before any payment is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    BodyOverCap,
    BodyNotUtf8,
    BodyNotJson,
    BodyNotObject,
    BodyLoneSurrogate,
    BodyUnknownField,
    PayloadMissing,
    PayloadNotString,
    PayloadTooDeep,
    BudgetMissing,
    BudgetNotNumber,
    BudgetNotPositive,
    BudgetFractional,
    BudgetTooLarge,
    ReserveInvalid,
    ReserveNotBelowBudget,
    KeepFieldsInvalid,
    CallerInvalid,
    CallerMissing,
    /// The receipt did not reconcile with the shaped payload: nothing is delivered or charged.
    ReceiptUnreconciled,
}

impl Refusal {
    /// Every refusal, in the order the criteria list them.
    pub const ALL: [Refusal; 20] = [
        Refusal::BodyOverCap,
        Refusal::BodyNotUtf8,
        Refusal::BodyNotJson,
        Refusal::BodyNotObject,
        Refusal::BodyLoneSurrogate,
        Refusal::BodyUnknownField,
        Refusal::PayloadMissing,
        Refusal::PayloadNotString,
        Refusal::PayloadTooDeep,
        Refusal::BudgetMissing,
        Refusal::BudgetNotNumber,
        Refusal::BudgetNotPositive,
        Refusal::BudgetFractional,
        Refusal::BudgetTooLarge,
        Refusal::ReserveInvalid,
        Refusal::ReserveNotBelowBudget,
        Refusal::KeepFieldsInvalid,
        Refusal::CallerInvalid,
        Refusal::CallerMissing,
        Refusal::ReceiptUnreconciled,
    ];
}

impl ClosedError for Refusal {
    fn code(&self) -> &'static str {
        match self {
            Refusal::BodyOverCap => "CAP-EXCEEDED:body_bytes",
            Refusal::BodyNotUtf8 => "body_not_utf8",
            Refusal::BodyNotJson => "body_not_json",
            Refusal::BodyNotObject => "body_not_object",
            Refusal::BodyLoneSurrogate => "body_lone_surrogate",
            Refusal::BodyUnknownField => "body_unknown_field",
            Refusal::PayloadMissing => "payload_missing",
            Refusal::PayloadNotString => "payload_not_string",
            Refusal::PayloadTooDeep => "payload_too_deep",
            Refusal::BudgetMissing => "budget_tokens_missing",
            Refusal::BudgetNotNumber => "budget_tokens_not_number",
            Refusal::BudgetNotPositive => "budget_tokens_not_positive",
            Refusal::BudgetFractional => "budget_tokens_fractional",
            Refusal::BudgetTooLarge => "budget_tokens_too_large",
            Refusal::ReserveInvalid => "reserve_tokens_invalid",
            Refusal::ReserveNotBelowBudget => "reserve_tokens_not_below_budget",
            Refusal::KeepFieldsInvalid => "keep_fields_invalid",
            Refusal::CallerInvalid => "caller_invalid",
            Refusal::CallerMissing => "caller_missing",
            Refusal::ReceiptUnreconciled => "receipt_unreconciled",
        }
    }

    fn status(&self) -> u16 {
        match self {
            Refusal::BodyOverCap => 413,
            Refusal::ReceiptUnreconciled => 422,
            _ => 400,
        }
    }

    fn message(&self) -> &'static str {
        match self {
            Refusal::BodyOverCap => "The request body is over the 262,144-byte cap. No partial or truncated verdict exists in this family.",
            Refusal::BodyNotUtf8 => "The request body is not UTF-8 text.",
            Refusal::BodyNotJson => "The request body is not JSON.",
            Refusal::BodyNotObject => "The request body is JSON but not a JSON object.",
            Refusal::BodyLoneSurrogate => "The request body holds a lone surrogate escape; send well-formed Unicode text.",
            Refusal::BodyUnknownField => "The request body has a member other than payload, budget_tokens, keep_fields, reserve_tokens and caller.",
            Refusal::PayloadMissing => "payload is missing: send the payload as a string.",
            Refusal::PayloadNotString => "payload is not a string: send the payload (text or JSON text) as a JSON string.",
            Refusal::PayloadTooDeep => "payload parses as JSON nested deeper than this engine accepts.",
            Refusal::BudgetMissing => "budget_tokens is missing: there is no default budget.",
            Refusal::BudgetNotNumber => "budget_tokens is not a number.",
            Refusal::BudgetNotPositive => "budget_tokens must be a positive integer.",
            Refusal::BudgetFractional => "budget_tokens must be an integer.",
            Refusal::BudgetTooLarge => "budget_tokens is above 2^53.",
            Refusal::ReserveInvalid => "reserve_tokens must be a non-negative integer no larger than 2^53.",
            Refusal::ReserveNotBelowBudget => "reserve_tokens must be below budget_tokens: the effective budget would be zero or less.",
            Refusal::KeepFieldsInvalid => "keep_fields must be an array of non-empty dot-path strings.",
            Refusal::CallerInvalid => "caller must be a Solana address (base58 of 32 bytes) or an EVM address (0x and 40 hex digits).",
            Refusal::CallerMissing => "caller is required for the free pre-check: send your Solana wallet address.",
            Refusal::ReceiptUnreconciled => "The drop receipt did not reconcile with the shaped payload; nothing is delivered and nothing is charged.",
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            Refusal::BodyOverCap => vec![("cap_bytes", BODY_CAP as u64)],
            Refusal::PayloadTooDeep => vec![("max_depth", MAX_DEPTH as u64)],
            Refusal::BudgetTooLarge | Refusal::ReserveInvalid => {
                vec![("max_tokens", MAX_TOKENS_FIGURE)]
            }
            _ => Vec::new(),
        }
    }
}
