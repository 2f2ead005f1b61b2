//! The instruction layouts the `exact` scheme allows (wallets' Lighthouse assertions, one memo)
//! and those it does not.

use super::*;

#[test]
fn attacks_on_the_layout_are_refused() {
    let cfg = config();
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions.push(memo_instruction(b"x"))),
        PaymentError::MemoCount
    );
    assert_eq!(
        refused_with(&cfg, |tx| {
            tx.instructions.pop();
        }),
        PaymentError::MemoCount
    );
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions.swap(0, 1)),
        PaymentError::ComputeBudgetInvalid
    );
    // A System Program instruction in place of the memo.
    assert_eq!(
        refused_with(&cfg, |tx| tx.instructions[3].program = [0u8; 32]),
        PaymentError::InstructionLayout
    );
}

fn lighthouse_count(tx: &Tx) -> usize {
    let (bytes, _) = wire(tx);
    let decoded = transaction::decode(&bytes).unwrap();
    layout::payment_instructions(&decoded, memo_for(ROUTE, KEY).as_bytes())
        .unwrap()
        .lighthouse_instructions
}

#[test]
fn wallet_layouts_the_scheme_allows_pass() {
    let cfg = config();
    let cases: Vec<(&str, Tx, usize)> = vec![
        ("official client: memo", standard(&cfg), 0),
        (
            "Phantom: one Lighthouse assertion, then the memo",
            with_tail(&cfg, |tx| vec![lighthouse(source_of(tx), 1), our_memo()]),
            1,
        ),
        (
            "the memo, then one Lighthouse assertion",
            with_tail(&cfg, |tx| vec![our_memo(), lighthouse(source_of(tx), 1)]),
            1,
        ),
        (
            "Solflare: two Lighthouse assertions, then the memo",
            with_tail(&cfg, |tx| {
                vec![
                    lighthouse(source_of(tx), 1),
                    lighthouse(addr(&tx.authority), 2),
                    our_memo(),
                ]
            }),
            2,
        ),
    ];
    for (name, tx, lighthouses) in cases {
        let checked = run(&cfg, &tx).unwrap_or_else(|e| panic!("{name}: refused {}", e.code()));
        assert_checked_as_standard(&checked, &tx, name);
        assert_eq!(lighthouse_count(&tx), lighthouses, "{name}");
    }
}

#[test]
fn layouts_outside_the_scheme_are_refused() {
    let cfg = config();
    let other_memo = || memo_instruction(memo_for("context-composition/audit", KEY).as_bytes());
    let cases: Vec<(&str, Tx, PaymentError)> = vec![
        (
            "Lighthouse before the transfer",
            {
                let mut tx = standard(&cfg);
                let assertion = lighthouse(source_of(&tx), 1);
                tx.instructions.insert(2, assertion);
                tx
            },
            PaymentError::InstructionLayout,
        ),
        (
            "Lighthouse before the compute budget",
            {
                let mut tx = standard(&cfg);
                let assertion = lighthouse(source_of(&tx), 1);
                tx.instructions.insert(0, assertion);
                tx
            },
            PaymentError::InstructionLayout,
        ),
        (
            "Lighthouse sixth (the sixth may only be the memo)",
            with_tail(&cfg, |tx| {
                vec![
                    lighthouse(source_of(tx), 1),
                    our_memo(),
                    lighthouse(source_of(tx), 2),
                ]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "memo first of three",
            with_tail(&cfg, |tx| {
                vec![
                    our_memo(),
                    lighthouse(source_of(tx), 1),
                    lighthouse(source_of(tx), 2),
                ]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "7 instructions",
            with_tail(&cfg, |tx| {
                vec![
                    lighthouse(source_of(tx), 1),
                    lighthouse(source_of(tx), 2),
                    lighthouse(source_of(tx), 3),
                    our_memo(),
                ]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "an unknown program between Lighthouse and the memo",
            with_tail(&cfg, |tx| {
                vec![
                    lighthouse(source_of(tx), 1),
                    Ix {
                        program: SYSTEM_PROGRAM,
                        accounts: vec![],
                        data: vec![2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
                    },
                    our_memo(),
                ]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "our memo under the first memo program",
            with_tail(&cfg, |_| {
                vec![Ix {
                    program: program(MEMO_V1_PROGRAM),
                    ..our_memo()
                }]
            }),
            PaymentError::InstructionLayout,
        ),
        (
            "the transfer under the Lighthouse program",
            {
                let mut tx = standard(&cfg);
                tx.instructions[2].program = program(LIGHTHOUSE_PROGRAM);
                tx
            },
            PaymentError::InstructionLayout,
        ),
        (
            "two memos, both ours",
            with_tail(&cfg, |_| vec![our_memo(), our_memo()]),
            PaymentError::MemoCount,
        ),
        (
            "two memos after a Lighthouse assertion",
            with_tail(&cfg, |tx| {
                vec![lighthouse(source_of(tx), 1), our_memo(), other_memo()]
            }),
            PaymentError::MemoCount,
        ),
        (
            "no memo: three instructions",
            with_tail(&cfg, |_| vec![]),
            PaymentError::MemoCount,
        ),
        (
            "no memo: two Lighthouse assertions",
            with_tail(&cfg, |tx| {
                vec![lighthouse(source_of(tx), 1), lighthouse(source_of(tx), 2)]
            }),
            PaymentError::MemoCount,
        ),
        (
            "a memo not ours, after a Lighthouse assertion",
            with_tail(&cfg, |tx| vec![lighthouse(source_of(tx), 1), other_memo()]),
            PaymentError::InvalidMemo,
        ),
        (
            "our memo with an account",
            with_tail(&cfg, |tx| {
                vec![Ix {
                    accounts: vec![addr(&tx.authority)],
                    ..our_memo()
                }]
            }),
            PaymentError::InvalidMemo,
        ),
        (
            "a Lighthouse assertion naming the fee payer",
            with_tail(&cfg, |tx| vec![lighthouse(tx.fee_payer, 1), our_memo()]),
            PaymentError::FeePayerInInstruction,
        ),
    ];
    for (name, tx, error) in cases {
        assert_eq!(run(&cfg, &tx).err(), Some(error), "{name}");
    }
}
