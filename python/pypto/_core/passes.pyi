from collections.abc import Sequence

import pypto._core.ir


def registered() -> list[tuple[str, list[str], list[str], list[str]]]:
    """
    The pipeline's passes in order: (name, required, produced, invalidated properties).
    """

def run(program: pypto._core.ir.Program, name: str, verify: bool = True) -> pypto._core.ir.Program:
    """
    Runs one pass of the pipeline on a program (profile stages `passes` and the pass's name); `verify` checks what it establishes; raises CompileError when the program lacks what the pass needs or the pass rejects it.
    """

def verify(program: pypto._core.ir.Program, properties: Sequence[str]) -> list[tuple[str, int, int]]:
    """
    The violations of the named properties in a program: (message, line, col) each, the line counted in the program's file.
    """

def choose_l0_tile(M: int, N: int, K: int, operand_bytes: int, acc_bytes: int, left_bytes: int, right_bytes: int, acc_capacity: int, split_product: bool = True) -> tuple[int, int, int] | None:
    """
    AutoTileMatmulL0's block (m, n, k) for an [M, K] @ [K, N] product with L0 buffers of these sizes, or None when none fits.
    """

DEVICE_L0_BYTES: tuple = (65536, 65536, 131072)
