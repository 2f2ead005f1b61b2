//! Each family's facts in one place (ARCHITECTURE §3): its id and served document, its free check
//! and paid ops with their paths, body caps, parsers and schemas, the prices, how a paid call is
//! bound, how the free caller is found, where the signature goes and its ledger table. The router,
//! `GET /`, `/llms.txt`, the OpenAPI document, the prices and the ledger all read this table; no other
//! edge module names a family.

use crate::edge::engines::{self, Checked, Runnable};
use crate::edge::error::{EdgeError, Refused};
use crate::edge::schemas;
use crate::engine::{budget_pack, composition, token_efficiency, token_opt, ClosedError};
use serde_json::Value;

/// Where a family's report signature goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureAt {
    /// A `signature` member of the body.
    Member,
    /// The `Report-Signature` header: the family's published output schema is closed.
    Header,
}

/// How a paid call is bound to its payment (ARCHITECTURE §4).
#[derive(Clone, Copy)]
pub enum KeyRule {
    /// By the call's Idempotency-Key when it sends one, else by a server nonce in the challenge.
    Optional,
    /// The pack contract's: an Idempotency-Key is required (checked by the contract's own rule,
    /// for its own code), the payment-identifier must equal it, and a keyed fingerprint of the body
    /// goes into the key's record (the contract's INVALID_RETRY_INPUT on a changed body).
    Contract(fn(Option<&str>) -> Result<(), Refused>),
}

impl KeyRule {
    pub fn is_contract(self) -> bool {
        matches!(self, KeyRule::Contract(_))
    }
}

/// The payment protocol a paid path takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rail {
    /// x402 v2 `exact` (Solana, or an EVM network when configured).
    X402,
    /// MPP: the `Payment` HTTP auth scheme, method `tempo`, intent `charge`, push mode.
    Mpp,
}

/// One path a paid op is sold on.
pub struct PaidPath {
    pub path: &'static str,
    pub rail: Rail,
    pub summary: &'static str,
}

/// A POST endpoint's body: its cap, its free validation and its published schemas.
pub struct Body<Parsed: 'static> {
    pub cap: usize,
    /// Free validation: the engine's request, or its refusal.
    pub parse: fn(&[u8]) -> Result<Parsed, Refused>,
    /// The family's own refusal for a body over the cap (`seen` bytes declared or read).
    pub over_cap: fn(u64) -> Refused,
    pub request_schema: fn() -> Value,
    pub request_example: fn() -> Value,
    /// The delivered body's schema (None: a report with a `signature` member).
    pub report_schema: Option<fn() -> Value>,
}

/// A family's free check (precheck or preflight), rate-limited by the free tier.
pub struct FreeCheck {
    pub path: &'static str,
    pub summary: &'static str,
    pub body: Body<Box<dyn Checked>>,
}

/// How a free check's caller wallet is found: the body's `caller` member where the family's input
/// has one, else the `X-Caller` header; refused with the family's own codes where it has them.
pub struct CallerRule {
    pub in_body: bool,
    pub refusal: fn(present_but_invalid: bool) -> Refused,
}

/// A paid operation.
pub struct PaidOp {
    pub family: &'static Family,
    /// Operation name as printed in the index and the ledger.
    pub op: &'static str,
    /// The `[vars]` entry that may override the price.
    pub price_var: &'static str,
    /// The published price in USDC base units (6 decimals).
    pub default_price_units: u64,
    pub paths: &'static [PaidPath],
    pub body: Body<Box<dyn Runnable>>,
}

/// One operation family.
pub struct Family {
    /// Path prefix and ledger/metrics label.
    pub id: &'static str,
    /// Identifier of the criteria (or contract) the family is built to.
    pub criteria_id: &'static str,
    pub document_path: &'static str,
    pub document_summary: &'static str,
    /// The served criteria (or contract), without the signing block.
    pub document: fn() -> Value,
    /// Every closed refusal `(code, status)` of the family's engine.
    pub refusals: fn() -> Vec<(&'static str, u16)>,
    pub signature: SignatureAt,
    pub key: KeyRule,
    pub caller: CallerRule,
    /// The status of a signed could-not-measure report delivered unpaid, where the family has one.
    pub unmeasured_status: Option<u16>,
    pub ledger_table: &'static str,
    /// The family's closed ledger columns (after the edge's payment columns).
    pub ledger_columns: &'static [&'static str],
    pub free: Option<FreeCheck>,
    /// The paid ops; a spent free allowance names the first one's first path.
    pub ops: &'static [&'static PaidOp],
}

impl PartialEq for Family {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id)
    }
}

impl PartialEq for PaidOp {
    fn eq(&self, other: &Self) -> bool {
        self.family == other.family && self.op == other.op
    }
}

impl std::fmt::Debug for PaidOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.family.id, self.op)
    }
}

/// Every family, in the order `GET /` lists them.
pub static ALL: [&Family; 4] = [
    &TOKEN_EFFICIENCY,
    &CONTEXT_COMPOSITION,
    &BUDGET_PACK,
    &TOKEN_OPT,
];

fn closed<E: ClosedError>(errors: &[E]) -> Vec<(&'static str, u16)> {
    errors.iter().map(|e| (e.code(), e.status())).collect()
}

fn edge_caller_refusal(present_but_invalid: bool) -> Refused {
    let refusal = if present_but_invalid {
        EdgeError::CallerInvalid
    } else {
        EdgeError::CallerMissing
    };
    refusal.into()
}

pub static TOKEN_EFFICIENCY: Family = Family {
    id: "token-efficiency",
    criteria_id: token_efficiency::criteria_doc::CRITERIA_ID,
    document_path: "/token-efficiency/criteria",
    document_summary: "The served token-efficiency/v1 criteria",
    document: token_efficiency::criteria,
    refusals: || closed(&token_efficiency::Refusal::ALL),
    signature: SignatureAt::Member,
    key: KeyRule::Optional,
    caller: CallerRule {
        in_body: true,
        refusal: |invalid| {
            let refusal = if invalid {
                token_efficiency::Refusal::CallerInvalid
            } else {
                token_efficiency::Refusal::CallerMissing
            };
            refusal.into()
        },
    },
    unmeasured_status: None,
    ledger_table: "ledger_token_efficiency",
    ledger_columns: token_efficiency::LEDGER_COLUMNS,
    free: Some(FreeCheck {
        path: "/token-efficiency/precheck",
        summary: "Free pre-check: signed verdict line, counts, excess, op set",
        body: Body {
            cap: token_efficiency::BODY_CAP,
            parse: engines::token_efficiency_check,
            over_cap: |_| token_efficiency::Refusal::BodyOverCap.into(),
            request_schema: || schemas::token_efficiency_request(true),
            request_example: || schemas::fixed(&["examples", "token_efficiency"]),
            report_schema: None,
        },
    }),
    ops: &[&TOKEN_EFFICIENCY_BUDGET],
};

pub static TOKEN_EFFICIENCY_BUDGET: PaidOp = PaidOp {
    family: &TOKEN_EFFICIENCY,
    op: "budget",
    price_var: "PRICE_TOKEN_EFFICIENCY_BUDGET",
    default_price_units: 20_000,
    paths: &[PaidPath {
        path: "/token-efficiency/budget",
        rail: Rail::X402,
        summary: "Paid: signed verdict, shaped payload and drop receipt",
    }],
    body: Body {
        cap: token_efficiency::BODY_CAP,
        parse: engines::token_efficiency_budget,
        over_cap: |_| token_efficiency::Refusal::BodyOverCap.into(),
        request_schema: || schemas::token_efficiency_request(false),
        request_example: || schemas::fixed(&["examples", "token_efficiency"]),
        report_schema: None,
    },
};

pub static CONTEXT_COMPOSITION: Family = Family {
    id: "context-composition",
    criteria_id: composition::report::CRITERIA_ID,
    document_path: "/context-composition/criteria",
    document_summary: "The served context-composition/v1 criteria",
    document: composition::criteria,
    refusals: || closed(&composition::Refusal::ALL),
    signature: SignatureAt::Member,
    key: KeyRule::Optional,
    caller: CallerRule {
        in_body: true,
        refusal: |invalid| {
            if invalid {
                composition::Refusal::CallerInvalid.into()
            } else {
                edge_caller_refusal(false)
            }
        },
    },
    // The could-not-measure report (R-7..R-9) is delivered signed with 422, unpaid.
    unmeasured_status: Some(422),
    ledger_table: "ledger_context_composition",
    ledger_columns: composition::LEDGER_COLUMNS,
    free: Some(FreeCheck {
        path: "/context-composition/precheck",
        summary: "Free pre-check: validation and assessability disclosure",
        body: Body {
            cap: composition::BODY_CAP,
            parse: engines::composition_check,
            over_cap: |seen| composition::Refusal::BodyOverCap { body_bytes: seen }.into(),
            request_schema: || schemas::fixed(&["composition_request"]),
            request_example: || schemas::fixed(&["examples", "composition"]),
            report_schema: None,
        },
    }),
    ops: &[&COMPOSITION_AUDIT],
};

pub static COMPOSITION_AUDIT: PaidOp = PaidOp {
    family: &CONTEXT_COMPOSITION,
    op: "audit",
    price_var: "PRICE_CONTEXT_COMPOSITION_AUDIT",
    default_price_units: 50_000,
    paths: &[PaidPath {
        path: "/context-composition/audit",
        rail: Rail::X402,
        summary: "Paid: signed two-axis composition report of one session record",
    }],
    body: Body {
        cap: composition::BODY_CAP,
        parse: engines::composition_audit,
        over_cap: |seen| composition::Refusal::BodyOverCap { body_bytes: seen }.into(),
        request_schema: || schemas::fixed(&["composition_request"]),
        request_example: || schemas::fixed(&["examples", "composition"]),
        report_schema: None,
    },
};

pub static BUDGET_PACK: Family = Family {
    id: "context-budget-pack",
    criteria_id: budget_pack::OPERATION,
    document_path: "/context-budget-pack/contract",
    document_summary: "The served context-budget-pack contract",
    document: budget_pack::criteria,
    refusals: || closed(&budget_pack::Refusal::catalogue()),
    signature: SignatureAt::Header,
    key: KeyRule::Contract(|key| Ok(budget_pack::check_idempotency_key(key)?)),
    // The contract's inputSchema admits no caller member: the wallet is the X-Caller header.
    caller: CallerRule {
        in_body: false,
        refusal: edge_caller_refusal,
    },
    unmeasured_status: None,
    ledger_table: "ledger_context_budget_pack",
    ledger_columns: budget_pack::LEDGER_COLUMNS,
    free: Some(FreeCheck {
        path: "/context-budget-pack/preflight",
        summary: "Free preflight validation of a pack request",
        body: Body {
            cap: budget_pack::BODY_CAP,
            parse: engines::pack_check,
            over_cap: |_| budget_pack::Refusal::EdgeLimit.into(),
            request_schema: || budget_pack::criteria()["inputSchema"].clone(),
            request_example: || budget_pack::criteria()["exampleInput"].clone(),
            report_schema: Some(|| schemas::fixed(&["preflight_report"])),
        },
    }),
    ops: &[&BUDGET_PACK_RUN],
};

pub static BUDGET_PACK_RUN: PaidOp = PaidOp {
    family: &BUDGET_PACK,
    op: budget_pack::LEDGER_OP,
    price_var: "PRICE_CONTEXT_BUDGET_PACK",
    default_price_units: 5_000,
    paths: &[
        PaidPath {
            path: budget_pack::PAID_PATH,
            rail: Rail::X402,
            summary: "Paid: pack evidence spans into the caller's cost budget",
        },
        PaidPath {
            path: crate::engine::payment::mpp::PATH,
            rail: Rail::Mpp,
            summary:
                "Paid over MPP (Payment auth, tempo charge, push): the same pack as the x402 route",
        },
    ],
    body: Body {
        cap: budget_pack::BODY_CAP,
        parse: engines::pack_run,
        over_cap: |_| budget_pack::Refusal::EdgeLimit.into(),
        request_schema: || budget_pack::criteria()["inputSchema"].clone(),
        request_example: || budget_pack::criteria()["exampleInput"].clone(),
        report_schema: Some(|| budget_pack::criteria()["outputSchema"].clone()),
    },
};

pub static TOKEN_OPT: Family = Family {
    id: "token-opt",
    criteria_id: token_opt::CRITERIA_ID,
    document_path: "/token-opt/criteria",
    document_summary: "The served token-opt/v1 criteria",
    document: token_opt::criteria,
    refusals: || closed(&token_opt::Refusal::ALL),
    signature: SignatureAt::Member,
    key: KeyRule::Optional,
    caller: CallerRule {
        in_body: false,
        refusal: edge_caller_refusal,
    },
    unmeasured_status: None,
    ledger_table: "ledger_token_opt",
    ledger_columns: token_opt::LEDGER_COLUMNS,
    free: None,
    ops: &[&TOKEN_OPT_LEVERS, &TOKEN_OPT_TOON],
};

pub static TOKEN_OPT_LEVERS: PaidOp = PaidOp {
    family: &TOKEN_OPT,
    op: "levers",
    price_var: "PRICE_TOKEN_OPT_LEVERS",
    default_price_units: token_opt::LEVERS_PRICE_USDC_UNITS,
    paths: &[PaidPath {
        path: "/token-opt/levers",
        rail: Rail::X402,
        summary: "Paid: the token-reduction levers measured in exact cl100k tokens",
    }],
    body: Body {
        cap: token_opt::LEVERS_BODY_CAP,
        parse: engines::levers,
        over_cap: |_| {
            token_opt::Refusal::BodyTooLarge {
                cap: token_opt::LEVERS_BODY_CAP,
            }
            .into()
        },
        request_schema: || schemas::fixed(&["levers_request"]),
        request_example: || schemas::fixed(&["examples", "levers"]),
        report_schema: None,
    },
};

pub static TOKEN_OPT_TOON: PaidOp = PaidOp {
    family: &TOKEN_OPT,
    op: "toon",
    price_var: "PRICE_TOKEN_OPT_TOON",
    default_price_units: token_opt::TOON_PRICE_USDC_UNITS,
    paths: &[PaidPath {
        path: "/token-opt/toon",
        rail: Rail::X402,
        summary: "Paid: TOON encoding, or compact JSON when TOON is not fewer tokens",
    }],
    body: Body {
        cap: token_opt::TOON_BODY_CAP,
        parse: engines::toon,
        over_cap: |_| {
            token_opt::Refusal::BodyTooLarge {
                cap: token_opt::TOON_BODY_CAP,
            }
            .into()
        },
        request_schema: || schemas::fixed(&["toon_request"]),
        request_example: || schemas::fixed(&["examples", "toon"]),
        report_schema: None,
    },
};

/// Every paid op, family by family.
pub fn paid_ops() -> impl Iterator<Item = &'static PaidOp> {
    ALL.iter().flat_map(|f| f.ops.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_belongs_to_the_family_that_lists_it() {
        for family in ALL {
            assert!(!family.ops.is_empty(), "{}", family.id);
            for op in family.ops {
                assert_eq!(op.family, family, "{op:?}");
                assert!(!op.paths.is_empty(), "{op:?}");
            }
        }
        assert_eq!(paid_ops().count(), 5);
    }

    /// Where a served document states a price, it is the table's: the price exists once.
    #[test]
    fn served_documents_state_the_table_prices() {
        let te = (TOKEN_EFFICIENCY.document)();
        assert_eq!(
            te["price"]["usdc_units_per_call"],
            TOKEN_EFFICIENCY_BUDGET.default_price_units
        );
        let opt = (TOKEN_OPT.document)();
        for op in TOKEN_OPT.ops {
            assert_eq!(
                opt["price"][op.op]["usdc_units_per_call"], op.default_price_units,
                "{op:?}"
            );
        }
    }

    /// The served document's identifier is the table's, for every family.
    #[test]
    fn every_document_is_its_familys() {
        for family in ALL {
            let document = (family.document)();
            let named = [
                &document["criteria_id"],
                &document["operation"],
                &document["id"],
            ];
            assert!(
                named.iter().any(|v| v.as_str() == Some(family.criteria_id)),
                "{}",
                family.id
            );
        }
    }
}
