//! context-composition/v1: two-axis composition report of one session record.
