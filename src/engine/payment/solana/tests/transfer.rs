//! The transfer itself: amount, mint, payee, token program, fee payer, compute budget, signature.

use super::*;

#[test]
fn a_standard_payment_passes() {
    let cfg = config();
    let tx = standard(&cfg);
    let checked = run(&cfg, &tx).unwrap();
    assert_checked_as_standard(&checked, &tx, "standard");
    assert!(!checked.house);
    let required = payment_required(
        &cfg,
        ROUTE,
        PRICE,
        KEY,
        "https://cm.example/r",
        &listing(),
        None,
    );
    let body = facilitator_request(&checked, KEY, &required);
    // The payload carries our challenge's resource and declared extensions, as a stock client
    // echoes them, with the payment-identifier id of this call.
    assert_eq!(body["paymentPayload"]["resource"], required["resource"]);
    assert_eq!(
        body["paymentPayload"]["extensions"]["bazaar"],
        required["extensions"]["bazaar"]
    );
    assert_eq!(
        body["paymentPayload"]["extensions"]["payment-identifier"]["info"]["id"],
        KEY
    );
    assert_eq!(
        body["paymentRequirements"],
        requirements(&cfg, ROUTE, PRICE, KEY)
    );
    assert_eq!(
        body["paymentPayload"]["accepted"],
        body["paymentRequirements"]
    );
    assert_eq!(
        body["paymentPayload"]["payload"]["transaction"],
        checked.transaction_base64.as_str()
    );
}

#[test]
fn house_wallets_are_flagged() {
    let cfg = config();
    let mut tx = standard(&cfg);
    let house = key_of(9);
    let mint = program(&cfg.asset);
    tx.instructions[2].accounts[0] = pda::associated_token_address(&addr(&house), &mint).unwrap();
    tx.instructions[2].accounts[3] = addr(&house);
    tx.authority = house;
    assert!(run(&cfg, &tx).unwrap().house);
}

#[test]
fn attacks_on_the_transfer_are_refused() {
    let cfg = config();
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].data[1..9]
            .copy_from_slice(&(PRICE - 1).to_le_bytes())),
        PaymentError::InvalidAmount { expected: PRICE }
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].data[1..9]
            .copy_from_slice(&(PRICE * 10).to_le_bytes())),
        PaymentError::InvalidAmount { expected: PRICE }
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[1] =
            program("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")),
        PaymentError::InvalidMint
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[2] = addr(&key_of(7))),
        PaymentError::InvalidPayee
    );
    // The payee's wallet itself instead of its associated token account.
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[2] =
            program(&config().pay_to)),
        PaymentError::InvalidPayee
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].data[9] = 9),
        PaymentError::InvalidDecimals
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].data[0] = 3),
        PaymentError::InstructionLayout
    );
}

#[test]
fn token_2022_transfers_pay_the_token_2022_account() {
    let cfg = config();
    let tx = token_2022(&cfg);
    assert_checked_as_standard(&run(&cfg, &tx).unwrap(), &tx, "Token-2022");
    let classic_ata =
        pda::associated_token_address(&program(&cfg.pay_to), &program(&cfg.asset)).unwrap();
    assert_ne!(tx.instructions[2].accounts[2], classic_ata);
    // Token-2022 transfer into the classic account, and the reverse.
    let mut into_classic = token_2022(&cfg);
    into_classic.instructions[2].accounts[2] = classic_ata;
    assert_eq!(
        run(&cfg, &into_classic).err(),
        Some(PaymentError::InvalidPayee)
    );
    let token_2022_ata = tx.instructions[2].accounts[2];
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[2] = token_2022_ata),
        PaymentError::InvalidPayee
    );
    // Phantom's layout under Token-2022 passes too.
    let mut phantom = token_2022(&cfg);
    let assertion = lighthouse(source_of(&phantom), 1);
    phantom.instructions.insert(3, assertion);
    assert!(run(&cfg, &phantom).is_ok());
}

#[test]
fn the_fee_payer_token_account_is_not_a_source() {
    let cfg = config();
    let mint = program(&cfg.asset);
    let fee_payer = program(&cfg.fee_payer);
    let fee_payer_ata = pda::associated_token_address(&fee_payer, &mint).unwrap();
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[0] = fee_payer_ata),
        PaymentError::FeePayerInInstruction
    );
    let mut tx = token_2022(&cfg);
    tx.instructions[2].accounts[0] =
        pda::associated_token_address_under(&fee_payer, &mint, &program(pda::TOKEN_2022_PROGRAM))
            .unwrap();
    assert_eq!(
        run(&cfg, &tx).err(),
        Some(PaymentError::FeePayerInInstruction)
    );
}

#[test]
fn fee_payer_abuse_is_refused() {
    let cfg = config();
    let fee_payer = program(&cfg.fee_payer);
    // Fee payer as the transfer authority (its own token account as source).
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[3] = fee_payer),
        PaymentError::FeePayerInInstruction
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[2].accounts[0] = fee_payer),
        PaymentError::FeePayerInInstruction
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[3].accounts.push(fee_payer)),
        PaymentError::FeePayerInInstruction
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.fee_payer = addr(&key_of(8))),
        PaymentError::FeePayerMismatch
    );
}

/// Sets the price of the SetComputeUnitPrice instruction, in micro-lamports.
fn set_compute_unit_price(tx: &mut Tx, microlamports: u64) {
    tx.instructions[1].data[1..].copy_from_slice(&microlamports.to_le_bytes());
}

#[test]
fn compute_budget_is_capped() {
    let cfg = config();
    assert_eq!(
        refused_with(&cfg, |tx| set_compute_unit_price(tx, 1_001)),
        PaymentError::ComputePriceTooHigh { cap: 1_000 }
    );
    let mut at_cap = standard(&cfg);
    set_compute_unit_price(&mut at_cap, 1_000);
    // 10,000 + ceil(20,000 × 1,000 / 10^6) = 10,020.
    assert_eq!(run(&cfg, &at_cap).unwrap().fee_lamports, 10_020);
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[0].data[1..]
            .copy_from_slice(&1_400_000u32.to_le_bytes())),
        PaymentError::ComputeLimitTooHigh
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[1].data.push(0)),
        PaymentError::ComputeBudgetInvalid
    );
    // The scheme's bound, 5 lamports per compute unit, holds whatever cap is configured.
    for cap in [5_000_000, 9_000_000] {
        let mut generous = config();
        generous.cu_price_cap_microlamports = cap;
        let mut at_bound = standard(&generous);
        set_compute_unit_price(&mut at_bound, 5_000_000);
        // 10,000 + ceil(20,000 × 5,000,000 / 10^6) = 110,000.
        assert_eq!(run(&generous, &at_bound).unwrap().fee_lamports, 110_000);
        assert_eq!(
            refused_with(&generous, |tx| set_compute_unit_price(tx, 5_000_001)),
            PaymentError::ComputePriceTooHigh { cap: 5_000_000 }
        );
    }
}

#[test]
fn signatures_must_verify() {
    let cfg = config();
    let (mut bytes, _) = wire(&standard(&cfg));
    bytes[1 + 64 + 10] ^= 1; // the authority's signature
    assert_eq!(
        check_bytes(&cfg, &bytes),
        Err(PaymentError::SignatureInvalid)
    );
    // Signed by someone else than the authority named in the transfer.
    let mut forged = standard(&cfg);
    let message = compile(
        forged.fee_payer,
        addr(&forged.authority),
        &forged.instructions,
        2,
    );
    assert_eq!(
        check_bytes(&cfg, &signed_by(&key_of(5), &message)),
        Err(PaymentError::SignatureInvalid)
    );
    forged.signers = 3;
    assert_eq!(
        run(&cfg, &forged).unwrap_err(),
        PaymentError::SignersInvalid
    );
}

/// A payment in doubt is looked up in its source token account's history: under Token-2022 too,
/// or a landed Token-2022 payment could never be reconciled.
#[test]
fn reconciliation_scans_the_source_account_under_either_token_program() {
    let cfg = config();
    for tx in [standard(&cfg), token_2022(&cfg)] {
        let (bytes, _) = wire(&tx);
        let query = crate::engine::payment::solana::reconcile::chain_query(
            &base64::engine::general_purpose::STANDARD.encode(&bytes),
        )
        .expect("a checked payment always has a transfer to look up");
        assert_eq!(
            query.source_account,
            base58::encode(&tx.instructions[2].accounts[0])
        );
    }
}
