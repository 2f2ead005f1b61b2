//! context-budget-pack: packs caller-costed evidence spans into a budget (see the served contract).
