//! The rail interface of the x402 payment path (ARCHITECTURE §4): the one file that names each
//! rail. The gate, the settlement and the reconciliation ask a payment's [`Rail`] what only its
//! rail knows (how a `PAYMENT-SIGNATURE` is checked and bound, the network, the facilitator and
//! its request, the reading of a `/settle` answer, what the chain says of a payment in doubt),
//! never one rail by name. Solana is `solana`, EVM (EIP-3009) is `evm`; MPP is a protocol of its
//! own (`mpp`), not a rail of this gate.

use super::{challenge_of, evm, now_ms, solana, Checked, Claim, PaidCall};
use crate::edge::payment::facilitator::Facilitator;
use crate::engine::payment::evm::CheckedEvmPayment;
use crate::engine::payment::reconcile::{ChainVerdict, SettleVerdict};
use crate::engine::payment::{self, PaymentConfig, PaymentError};
use futures_util::future::Either;
use serde_json::Value;
use std::future::Future;
use worker::Env;

/// The rail a payment is on.
#[derive(Clone, Copy)]
pub(crate) enum Rail<'a> {
    /// x402 `exact` on Solana.
    Solana,
    /// x402 `exact` on an EVM network: an EIP-3009 authorization.
    Evm(&'a CheckedEvmPayment),
}

/// Decodes a `PAYMENT-SIGNATURE` and runs the local checks of the rail it pays on (an `eip155:`
/// network's payload is EVM's, any other Solana's), with the call's binding.
pub(crate) fn check(
    env: &Env,
    config: &PaymentConfig,
    call: &PaidCall<'_>,
    header: &str,
) -> Result<Checked, PaymentError> {
    match payment::evm::decode_payment_header(header) {
        Ok(Some(payload)) => evm::check(config, call, &payload),
        Ok(None) => solana::check(env, config, call, header),
        Err(error) => Err(error),
    }
}

impl<'a> Rail<'a> {
    /// The rail of a payment, from what its rail kept of it.
    pub(crate) fn of(own: Option<&'a CheckedEvmPayment>) -> Self {
        match own {
            Some(evm) => Rail::Evm(evm),
            None => Rail::Solana,
        }
    }

    /// The binding to await before any record is touched, on a rail that binds a payment to its
    /// first call apart from the record: an EVM authorization names no call, so it is bound in its
    /// own guard object (false: already bound to another call). None on Solana, whose memo binds
    /// the payment already. Here and in `chain_verdict` the rails' futures are returned as they
    /// are, not wrapped in a future of this interface's own (a wrapper costs bundle bytes).
    pub(crate) fn bind<'b>(
        self,
        env: &'b Env,
        call: &'b PaidCall<'b>,
        claim_key: &'b str,
    ) -> Option<impl Future<Output = Result<bool, PaymentError>> + 'b> {
        match self {
            Rail::Evm(_) => Some(evm::bind(env, call, claim_key)),
            Rail::Solana => None,
        }
    }

    /// Whether a payment in doubt can still land: an EVM authorization until its `validBefore`;
    /// a Solana transaction's chain verdict says itself when it can no longer land.
    pub(crate) fn can_land(self) -> bool {
        match self {
            Rail::Evm(payment) => now_ms() / 1000 < payment.valid_before_s,
            Rail::Solana => true,
        }
    }

    /// What the chain says of the claim's payment in doubt (its rail's own future).
    pub(crate) fn chain_verdict(
        self,
        env: &'a Env,
        claim: &'a Claim,
    ) -> impl Future<Output = ChainVerdict> + 'a {
        match self {
            Rail::Evm(payment) => Either::Left(evm::chain_verdict(env, payment)),
            Rail::Solana => Either::Right(solana::chain_verdict(env, claim)),
        }
    }
}

/// The rail-specific facts of a claim, read through its rail only: everything else is the same
/// on both.
impl Claim {
    /// The rail the claim's payment is on.
    pub(crate) fn rail(&self) -> Rail<'_> {
        Rail::of(self.rail_payment.as_deref())
    }

    /// The network the payment is on.
    pub(crate) fn network(&self) -> &str {
        match self.rail() {
            Rail::Evm(evm) => &evm.offer.network,
            Rail::Solana => &self.settings.config.network,
        }
    }

    /// The `/verify` and `/settle` request for this payment, with our own challenge.
    pub(crate) fn facilitator_body(&self) -> Value {
        match self.rail() {
            Rail::Evm(evm) => {
                let identifier =
                    Some(self.bound.identifier_id.as_str()).filter(|id| !id.is_empty());
                payment::evm::facilitator_request(evm, identifier, &challenge_of(self))
            }
            Rail::Solana => payment::facilitator_request(
                &self.checked,
                &self.bound.identifier_id,
                &challenge_of(self),
            ),
        }
    }

    /// What a `/settle` answer says happened.
    pub(crate) fn settle_verdict(&self, answer: &[u8]) -> SettleVerdict {
        match self.rail() {
            Rail::Evm(_) => payment::evm::settle_verdict(answer),
            Rail::Solana => payment::solana::reconcile::settle_verdict(answer),
        }
    }

    /// The facilitator this payment goes to (`EVM_FACILITATOR_URL` for an EVM payment when set).
    pub(crate) fn facilitator(&self, env: &Env, configured: Facilitator) -> Facilitator {
        match self.rail() {
            Rail::Evm(_) => evm::evm_facilitator(env, &configured),
            Rail::Solana => configured,
        }
    }
}
