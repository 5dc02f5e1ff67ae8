"""Column definitions of the SASS tables (``gpuopt sass functions|opcodes|signatures``).

Sources: ``rust/src/sass/`` (function.rs, instruction.rs holds the class table) and ``references/sass.md``.
"""

from __future__ import annotations

# Instruction classes: the base mnemonics of each are listed in references/sass.md.
_CLASSES = {
    "tensor_core": "tensor-core MMA instructions (HMMA, IMMA, HGMMA, UTCHMMA, ...)",
    "tensor_memory": "tensor-memory instructions (UTCBAR, UTCCP, LDTM, STTM, ...)",
    "warpgroup": "warpgroup instructions (WARPGROUP, WARPGROUPSET)",
    "tma_bulk_copy": "TMA and bulk-copy instructions (UTMALDG, UTMASTG, UBLKCP, ...)",
    "async_copy": "asynchronous global-to-shared copies (LDGSTS, LDGDEPBAR)",
    "global_load": "global loads (LDG)",
    "global_store": "global stores (STG)",
    "global_atomic": "global atomics and reductions (ATOMG, RED, REDG)",
    "shared_load": "shared-memory loads (LDS, LDSM)",
    "shared_store": "shared-memory stores (STS, STSM)",
    "shared_atomic": "shared-memory atomics (ATOMS)",
    "local_load": "local-memory loads (LDL: spills, local arrays)",
    "local_store": "local-memory stores (STL)",
    "generic_load": "generic-address loads (LD)",
    "generic_store": "generic-address stores (ST)",
    "generic_atomic": "generic-address atomics (ATOM)",
    "constant_load": "constant-bank loads (LDC, ULDC, LDCU)",
    "barrier": "barriers, fences and syncs (BAR, SYNCS, MEMBAR, DEPBAR, WARPSYNC, ...)",
    "branch": "control flow (BRA, JMP, CALL, RET, EXIT, BSSY, BSYNC, ...)",
    "special_function": "special-function unit instructions (MUFU)",
    "conversion": "conversions (F2F, F2I, I2F, F2FP, FRND, ...)",
    "warp_shuffle": "warp shuffles (SHFL)",
}

_FUNCTION = {
    "function_index": "Position of the function in the listing (0-based); with cubin_index it tells "
    "apart equal names",
    "arch": "SM architecture of the function's cubin (sm_90, ...)",
    "function": "Function (kernel) name as the listing prints it",
}

_FUNCTIONS = {
    **_FUNCTION,
    "cubin_index": "Which embedded cubin (0-based) the function belongs to",
    "instruction_count": "Instructions without the trailing padding NOPs (the self-branch after the "
    "final EXIT counts)",
    "padding_nop_count": "Unguarded NOPs after the last other instruction (alignment padding)",
    "predicated_count": "Instructions with a guard other than @PT",
    "backward_branch_count": "BRA/JMP whose target lies before the branch: loop back-edges",
    "registers": "Registers per thread (nvdisasm listings only; null from cuobjdump -sass)",
    "frame_size_bytes": "Stack frame size (bytes; nvdisasm listings only)",
    "min_stack_size_bytes": "Minimum stack size (bytes; nvdisasm listings only)",
    "line_info_count": "nvdisasm -g/-gi //## source-line annotations in the function",
    "distinct_opcode_count": "Distinct full mnemonics (with modifiers) in the function",
    **{f"{c}_count": f"Instructions of class {c}: {text}" for c, text in _CLASSES.items()},
    "integer_division_rcp_count": "MUFU.RCP instructions of nvcc's integer division or modulo (I2F.RP -> "
    "MUFU.RCP -> unsigned F2I.TRUNC): special-function instructions with no float math of the source",
}

_OPCODES = {
    **_FUNCTION,
    "opcode": "Full mnemonic with modifiers (LDG.E.128.CONSTANT)",
    "base": "The mnemonic before the first dot (LDG)",
    "class": "Instruction class of the base mnemonic (see sass functions' *_count); null when unclassed",
    "width_bits": "Bits moved per thread by a plain load/store (.128 -> 128, .64 -> 64, none -> 32); "
    "null for non-memory opcodes",
    "count": "Instructions with this full mnemonic in the function",
}

_SIGNATURES = {
    **_FUNCTION,
    "signature": "Signature id from the catalog (references/sass_signatures.json)",
    "mechanism": "The mechanism the signature is evidence of",
    "require": "any (found when one pattern matches) or all (found when every pattern does)",
    "status": "found, missing, or not_applicable (the function's arch is outside the signature's list)",
    "match_count": "Instructions matching any of the signature's patterns",
    "matched_patterns": "Patterns that matched at least once",
    "missing_patterns": "Patterns that matched nothing",
    "evidence": "Up to --evidence N matching lines per pattern (address and instruction as printed)",
}

TABLES: dict[str, dict[str, str]] = {
    "sass.functions": _FUNCTIONS,
    "sass.opcodes": _OPCODES,
    "sass.signatures": _SIGNATURES,
}
