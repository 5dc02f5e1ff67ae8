//! The columns of the SASS tables (`gpuopt sass functions|opcodes|signatures`), declared once: name,
//! type, unit and meaning (see `crate::column`). The `*_count` columns of the instruction classes
//! follow `instruction::CLASSES` in order (a test checks); `tables.rs` builds every table through
//! `Table::declared`.

use crate::column::{Column, Declared, Dtype, Unit};

const ARCH: Column = Column::text(
    "arch",
    "SM architecture of the function's cubin (sm_90, ...)",
);
const FUNCTION: Column = Column::text(
    "function",
    "Function (kernel) name as the listing prints it",
);
const FUNCTION_INDEX: Column = Column::new("function_index", Dtype::UInt32, Unit::Id, "Position of the function in the listing (0-based); with cubin_index it tells apart equal names");

/// `sass.functions`
pub const FUNCTIONS: &[Column] = &[
    FUNCTION_INDEX,
    Column::new("cubin_index", Dtype::UInt32, Unit::Id, "Which embedded cubin (0-based) the function belongs to"),
    ARCH,
    FUNCTION,
    Column::int("instruction_count", Unit::Count, "Instructions without the trailing padding NOPs (the self-branch after the final EXIT counts)"),
    Column::int("padding_nop_count", Unit::Count, "Unguarded NOPs after the last other instruction (alignment padding)"),
    Column::int("predicated_count", Unit::Count, "Instructions with a guard other than @PT"),
    Column::int("backward_branch_count", Unit::Count, "BRA/JMP whose target lies before the branch: loop back-edges"),
    Column::int("registers", Unit::Count, "Registers per thread (nvdisasm listings only; null from cuobjdump -sass)"),
    Column::int("frame_size_bytes", Unit::Bytes, "Stack frame size (bytes; nvdisasm listings only)"),
    Column::int("min_stack_size_bytes", Unit::Bytes, "Minimum stack size (bytes; nvdisasm listings only)"),
    Column::int("line_info_count", Unit::Count, "nvdisasm -g/-gi //## source-line annotations in the function"),
    Column::int("distinct_opcode_count", Unit::Count, "Distinct full mnemonics (with modifiers) in the function"),
    Column::int("tensor_core_count", Unit::Count, "Instructions of class tensor_core: tensor-core MMA instructions (HMMA, IMMA, HGMMA, UTCHMMA, ...)"),
    Column::int("tensor_memory_count", Unit::Count, "Instructions of class tensor_memory: tensor-memory instructions (UTCBAR, UTCCP, LDTM, STTM, ...)"),
    Column::int("warpgroup_count", Unit::Count, "Instructions of class warpgroup: warpgroup instructions (WARPGROUP, WARPGROUPSET)"),
    Column::int("tma_bulk_copy_count", Unit::Count, "Instructions of class tma_bulk_copy: TMA and bulk-copy instructions (UTMALDG, UTMASTG, UBLKCP, ...)"),
    Column::int("async_copy_count", Unit::Count, "Instructions of class async_copy: asynchronous global-to-shared copies (LDGSTS, LDGDEPBAR)"),
    Column::int("global_load_count", Unit::Count, "Instructions of class global_load: global loads (LDG)"),
    Column::int("global_store_count", Unit::Count, "Instructions of class global_store: global stores (STG)"),
    Column::int("global_atomic_count", Unit::Count, "Instructions of class global_atomic: global atomics and reductions (ATOMG, RED, REDG)"),
    Column::int("shared_load_count", Unit::Count, "Instructions of class shared_load: shared-memory loads (LDS, LDSM)"),
    Column::int("shared_store_count", Unit::Count, "Instructions of class shared_store: shared-memory stores (STS, STSM)"),
    Column::int("shared_atomic_count", Unit::Count, "Instructions of class shared_atomic: shared-memory atomics (ATOMS)"),
    Column::int("local_load_count", Unit::Count, "Instructions of class local_load: local-memory loads (LDL: spills, local arrays)"),
    Column::int("local_store_count", Unit::Count, "Instructions of class local_store: local-memory stores (STL)"),
    Column::int("generic_load_count", Unit::Count, "Instructions of class generic_load: generic-address loads (LD)"),
    Column::int("generic_store_count", Unit::Count, "Instructions of class generic_store: generic-address stores (ST)"),
    Column::int("generic_atomic_count", Unit::Count, "Instructions of class generic_atomic: generic-address atomics (ATOM)"),
    Column::int("constant_load_count", Unit::Count, "Instructions of class constant_load: constant-bank loads (LDC, ULDC, LDCU)"),
    Column::int("barrier_count", Unit::Count, "Instructions of class barrier: barriers, fences and syncs (BAR, SYNCS, MEMBAR, DEPBAR, WARPSYNC, ...)"),
    Column::int("branch_count", Unit::Count, "Instructions of class branch: control flow (BRA, JMP, CALL, RET, EXIT, BSSY, BSYNC, ...)"),
    Column::int("special_function_count", Unit::Count, "Instructions of class special_function: special-function unit instructions (MUFU)"),
    Column::int("conversion_count", Unit::Count, "Instructions of class conversion: conversions (F2F, F2I, I2F, F2FP, FRND, ...)"),
    Column::int("warp_shuffle_count", Unit::Count, "Instructions of class warp_shuffle: warp shuffles (SHFL)"),
    Column::int("integer_division_rcp_count", Unit::Count, "MUFU.RCP instructions of nvcc's integer division or modulo (I2F.RP -> MUFU.RCP -> unsigned F2I.TRUNC): special-function instructions with no float math of the source"),
];

/// `sass.opcodes`
pub const OPCODES: &[Column] = &[
    FUNCTION_INDEX,
    ARCH,
    FUNCTION,
    Column::text("opcode", "Full mnemonic with modifiers (LDG.E.128.CONSTANT)"),
    Column::text("base", "The mnemonic before the first dot (LDG)"),
    Column::text("class", "Instruction class of the base mnemonic (see sass functions' *_count); null when unclassed"),
    Column::int("width_bits", Unit::Count, "Bits moved per thread by a plain load/store (.128 -> 128, .64 -> 64, none -> 32); null for non-memory opcodes"),
    Column::int("count", Unit::Count, "Instructions with this full mnemonic in the function"),
];

/// `sass.signatures`
pub const SIGNATURES: &[Column] = &[
    FUNCTION_INDEX,
    ARCH,
    FUNCTION,
    Column::text(
        "signature",
        "Signature id from the catalog (references/sass_signatures.json)",
    ),
    Column::text("mechanism", "The mechanism the signature is evidence of"),
    Column::text(
        "require",
        "any (found when one pattern matches) or all (found when every pattern does)",
    ),
    Column::text(
        "status",
        "found, missing, or not_applicable (the function's arch is outside the signature's list)",
    ),
    Column::int(
        "match_count",
        Unit::Count,
        "Instructions matching any of the signature's patterns",
    ),
    Column::new(
        "matched_patterns",
        Dtype::TextList,
        Unit::None,
        "Patterns that matched at least once",
    ),
    Column::new(
        "missing_patterns",
        Dtype::TextList,
        Unit::None,
        "Patterns that matched nothing",
    ),
    Column::new(
        "evidence",
        Dtype::RecordList,
        Unit::None,
        "Up to --evidence N matching lines per pattern (address and instruction as printed)",
    ),
];

/// Every table of the engine, by its `gpuopt schema` key.
pub fn tables() -> Vec<Declared> {
    vec![
        Declared::new("sass.functions", FUNCTIONS),
        Declared::new("sass.opcodes", OPCODES),
        Declared::new("sass.signatures", SIGNATURES),
    ]
}
