from collections.abc import Sequence
import enum

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

class Stationarity(enum.Enum):
    """Which operand stays in its L0 buffer across the output's blocks."""

    OutputStationary = 0

    AStationary = 1

    BStationary = 2

class L0TileConfig:
    """
    The inputs of choose_l0_tile: the product's extents, the L0 buffers, the element sizes, the block grid, the schedules the caller can emit and the cost model's constants (include/pypto/passes/l0_tile_choice.h).
    """

    def __init__(self) -> None: ...

    @property
    def M(self) -> int: ...

    @M.setter
    def M(self, arg: int, /) -> None: ...

    @property
    def N(self) -> int: ...

    @N.setter
    def N(self, arg: int, /) -> None: ...

    @property
    def K(self) -> int: ...

    @K.setter
    def K(self, arg: int, /) -> None: ...

    @property
    def l0a_bytes(self) -> int: ...

    @l0a_bytes.setter
    def l0a_bytes(self, arg: int, /) -> None: ...

    @property
    def l0b_bytes(self) -> int: ...

    @l0b_bytes.setter
    def l0b_bytes(self, arg: int, /) -> None: ...

    @property
    def l0c_bytes(self) -> int: ...

    @l0c_bytes.setter
    def l0c_bytes(self, arg: int, /) -> None: ...

    @property
    def bytes_a(self) -> int: ...

    @bytes_a.setter
    def bytes_a(self, arg: int, /) -> None: ...

    @property
    def bytes_b(self) -> int: ...

    @bytes_b.setter
    def bytes_b(self, arg: int, /) -> None: ...

    @property
    def bytes_c(self) -> int: ...

    @bytes_c.setter
    def bytes_c(self, arg: int, /) -> None: ...

    @property
    def min_m(self) -> int: ...

    @min_m.setter
    def min_m(self, arg: int, /) -> None: ...

    @property
    def min_n(self) -> int: ...

    @min_n.setter
    def min_n(self, arg: int, /) -> None: ...

    @property
    def min_k(self) -> int: ...

    @min_k.setter
    def min_k(self, arg: int, /) -> None: ...

    @property
    def align_m(self) -> int: ...

    @align_m.setter
    def align_m(self, arg: int, /) -> None: ...

    @property
    def align_n(self) -> int: ...

    @align_n.setter
    def align_n(self, arg: int, /) -> None: ...

    @property
    def align_k(self) -> int: ...

    @align_k.setter
    def align_k(self, arg: int, /) -> None: ...

    @property
    def l0c_align_m(self) -> int: ...

    @l0c_align_m.setter
    def l0c_align_m(self, arg: int, /) -> None: ...

    @property
    def box_align_m(self) -> int: ...

    @box_align_m.setter
    def box_align_m(self, arg: int, /) -> None: ...

    @property
    def box_align_n(self) -> int: ...

    @box_align_n.setter
    def box_align_n(self, arg: int, /) -> None: ...

    @property
    def max_n(self) -> int: ...

    @max_n.setter
    def max_n(self, arg: int, /) -> None: ...

    @property
    def max_n_pipelined(self) -> int: ...

    @max_n_pipelined.setter
    def max_n_pipelined(self, arg: int, /) -> None: ...

    @property
    def max_n_nested_pipelined(self) -> int: ...

    @max_n_nested_pipelined.setter
    def max_n_nested_pipelined(self, arg: int, /) -> None: ...

    @property
    def allow_a_stationary(self) -> bool: ...

    @allow_a_stationary.setter
    def allow_a_stationary(self, arg: bool, /) -> None: ...

    @property
    def allow_b_stationary(self) -> bool: ...

    @allow_b_stationary.setter
    def allow_b_stationary(self, arg: bool, /) -> None: ...

    @property
    def allow_double_buffer_c(self) -> bool: ...

    @allow_double_buffer_c.setter
    def allow_double_buffer_c(self, arg: bool, /) -> None: ...

    @property
    def c_read(self) -> bool: ...

    @c_read.setter
    def c_read(self, arg: bool, /) -> None: ...

    @property
    def bw_a(self) -> float: ...

    @bw_a.setter
    def bw_a(self, arg: float, /) -> None: ...

    @property
    def bw_b(self) -> float: ...

    @bw_b.setter
    def bw_b(self, arg: float, /) -> None: ...

    @property
    def bw_drain(self) -> float: ...

    @bw_drain.setter
    def bw_drain(self, arg: float, /) -> None: ...

    @property
    def drain_fixed_cycles(self) -> float: ...

    @drain_fixed_cycles.setter
    def drain_fixed_cycles(self, arg: float, /) -> None: ...

    @property
    def drain_row_cycles(self) -> float: ...

    @drain_row_cycles.setter
    def drain_row_cycles(self, arg: float, /) -> None: ...

    @property
    def drain_penalty_cycles(self) -> float: ...

    @drain_penalty_cycles.setter
    def drain_penalty_cycles(self, arg: float, /) -> None: ...

    @property
    def drain_c0_bytes(self) -> int: ...

    @drain_c0_bytes.setter
    def drain_c0_bytes(self, arg: int, /) -> None: ...

    @property
    def mad_head(self) -> int: ...

    @mad_head.setter
    def mad_head(self, arg: int, /) -> None: ...

    @property
    def mad_k_fractal_bytes(self) -> int: ...

    @mad_k_fractal_bytes.setter
    def mad_k_fractal_bytes(self, arg: int, /) -> None: ...

    @property
    def mad_fp32_passes(self) -> int: ...

    @mad_fp32_passes.setter
    def mad_fp32_passes(self, arg: int, /) -> None: ...

    @property
    def allow_padding(self) -> bool: ...

    @allow_padding.setter
    def allow_padding(self, arg: bool, /) -> None: ...

    @property
    def allow_k_boundary(self) -> bool: ...

    @allow_k_boundary.setter
    def allow_k_boundary(self, arg: bool, /) -> None: ...

    @property
    def whole_output(self) -> bool: ...

    @whole_output.setter
    def whole_output(self, arg: bool, /) -> None: ...

class L0TileResult:
    """The design point choose_l0_tile picked."""

    @property
    def m(self) -> int: ...

    @property
    def n(self) -> int: ...

    @property
    def k(self) -> int: ...

    @property
    def estimated_traffic_bytes(self) -> int: ...

    @property
    def estimated_cost_cycles(self) -> int: ...

    @property
    def padded_compute_volume(self) -> int: ...

    @property
    def stationarity(self) -> Stationarity: ...

    @property
    def os_holds_a(self) -> bool: ...

    @property
    def double_buffer_c(self) -> bool: ...

    @property
    def perf_hint(self) -> str: ...

    def __repr__(self) -> str: ...

def choose_l0_tile(config: L0TileConfig) -> L0TileResult:
    """
    The lowest-wall L0 design point for the configuration; ValueError for an invalid one or when no block fits.
    """

def device_l0_tile_config(M: int, N: int, K: int, bytes_a: int, bytes_b: int, bytes_c: int) -> L0TileConfig:
    """
    The configuration AutoTileMatmulL0 chooses with for such a product on this device.
    """

def choose_device_l0_tile(config: L0TileConfig) -> L0TileResult | None:
    """
    The block AutoTileMatmulL0 uses for that configuration (choose_l0_tile's, in half of L0C when it splits the output), or None when it leaves the matmul as it is.
    """

DEVICE_L0_BYTES: tuple = (65536, 65536, 131072)
