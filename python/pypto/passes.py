"""The compiler's passes one at a time, by PyPTO's names (``from pypto import passes``).

``passes.convert_to_ssa()`` is a ``Pass``; calling it on a program returns the program as that
pass leaves it, as PyPTO's pass objects do::

    ssa = passes.convert_to_ssa()(program)
    ir.assert_structural_equal(ssa, expected)

Each call runs the C++ pass of the pipeline ``ir.compile`` runs (docs/passes.md), with its own
profile stages (``passes`` and the pass's name) and the verification of the properties it
establishes. A pass first checks that the program has what the passes before it in the pipeline
establish (SSA form before ``Simplify``, no scopes before ``ConvertTensorToTileOps``, ...), and
says which pass to run first when it does not.

PyPTO has more passes than this compiler (its pipeline also prepares code for the hardware's
assembler); asking this module for one raises an ``AttributeError`` that says so (and where its
work is done here), at the use rather than at a test's imports. ``PassContext`` carries
PyPTO's options and its instruments: ``CallbackInstrument`` callbacks run around each pass.
"""

import enum
import threading
from typing import Any, Callable, Iterable, List, Optional

from pypto import _core

__all__ = ["Pass", "PassContext", "PassPipeline", "PassInstrument", "CallbackInstrument",
           "VerificationInstrument", "ReportInstrument", "VerificationMode", "VerificationLevel",
           "IRProperty", "MemoryPlanner", "RuntimeKind", "DiagnosticPhase", "verify_properties",
           "property_violations",
           "l0_tile_chooser"]


class MemoryPlanner(enum.Enum):
    """Who places on-chip buffers in PyPTO: its own passes (``PYPTO``), its capacity-constrained
    planner (``DSA_RP``) or the ptoas assembler (``PTOAS``). This compiler has one planner
    (InitMemRef, MemoryReuse, AllocateMemoryAddr), so every choice compiles the same way; the
    value is accepted so that programs and test cases selecting one run unchanged."""

    PYPTO = "pypto"
    DSA_RP = "dsa-rp"
    PTOAS = "ptoas"


class VerificationLevel(enum.Enum):
    """``NONE`` runs passes without checking their properties; ``BASIC`` and ``ROUNDTRIP``
    check them (this compiler has one level of checking)."""

    NONE = "none"
    BASIC = "basic"
    ROUNDTRIP = "roundtrip"


class VerificationMode(enum.Enum):
    NONE = "none"
    BEFORE = "before"
    AFTER = "after"
    BEFORE_AND_AFTER = "before_and_after"


class RuntimeKind(enum.Enum):
    """PyPTO's runtime ABIs on hardware; the CPU device has one runtime, so this is recorded."""

    HOST_BUILD_GRAPH = "host_build_graph"
    TENSORMAP_AND_RINGBUFFER = "tensormap_and_ringbuffer"


class DiagnosticPhase(enum.Enum):
    NONE = "none"
    PRE_PIPELINE = "pre_pipeline"
    POST_PASS = "post_pass"
    POST_PIPELINE = "post_pipeline"


# The IR properties the verifier checks, by the C++ names (include/pypto/passes/pass.h).
IRProperty = enum.Enum("IRProperty", {name: name for name in (
    "SSA", "NoUnrollLoops", "Flat", "NoScopes", "TileOpsOnly", "MemorySpacesSet", "MemRefsSet",
    "AddressesAssigned", "CallDirectionsSet")})
IRProperty.__doc__ = "A property of IR that a pass establishes and the verifier checks."


class PassInstrument:
    """Something run around each pass of a PassContext."""

    def __init__(self, name: str):
        self._name = name

    def get_name(self) -> str:
        return self._name

    def before(self, pass_: "Pass", program: Any) -> None:
        """Called with the pass and its input program."""

    def after(self, pass_: "Pass", program: Any) -> None:
        """Called with the pass and the program it returned."""


class CallbackInstrument(PassInstrument):
    """Calls ``before_pass(pass, program)`` and ``after_pass(pass, program)`` around each pass."""

    def __init__(self, before_pass: Optional[Callable[["Pass", Any], None]] = None,
                 after_pass: Optional[Callable[["Pass", Any], None]] = None,
                 name: str = "CallbackInstrument"):
        super().__init__(name)
        self._before, self._after = before_pass, after_pass

    def before(self, pass_, program):
        if self._before is not None:
            self._before(pass_, program)

    def after(self, pass_, program):
        if self._after is not None:
            self._after(pass_, program)


class VerificationInstrument(PassInstrument):
    """Checks the properties a pass needs before it and those it establishes after it; every
    pass here already does both unless ``VerificationLevel.NONE`` turns them off, so this
    instrument adds nothing but is accepted."""

    def __init__(self, mode: VerificationMode):
        super().__init__("VerificationInstrument")
        self.mode = VerificationMode(mode)


class ReportInstrument(PassInstrument):
    """Names a folder for pipeline reports; passes run one at a time write none (``ir.compile``
    writes its reports under its output folder)."""

    def __init__(self, output_dir: str):
        super().__init__("ReportInstrument")
        self._output_dir = str(output_dir)

    def get_output_dir(self) -> str:
        return self._output_dir


_contexts = threading.local()


class PassContext:
    """The options and instruments of the passes called inside a ``with`` block (innermost
    wins). The options that steer PyPTO's hardware toolchain are recorded and change nothing
    here (see ``MemoryPlanner``, ``RuntimeKind``)."""

    def __init__(self, instruments: Iterable[PassInstrument] = (),
                 verification_level: VerificationLevel = VerificationLevel.BASIC,
                 diagnostic_phase: DiagnosticPhase = DiagnosticPhase.PRE_PIPELINE,
                 disabled_diagnostics: Any = None,
                 memory_planner: MemoryPlanner = MemoryPlanner.PYPTO,
                 enable_pypto_l0c_double_buffer: bool = False,
                 runtime: RuntimeKind = RuntimeKind.TENSORMAP_AND_RINGBUFFER):
        self._instruments = list(instruments)
        for instrument in self._instruments:
            if not isinstance(instrument, PassInstrument):
                raise TypeError(f"PassContext: instruments must be PassInstruments, got "
                                f"{instrument!r}")
        self._verification_level = VerificationLevel(verification_level)
        self._diagnostic_phase = DiagnosticPhase(diagnostic_phase)
        self._disabled_diagnostics = disabled_diagnostics
        self._memory_planner = MemoryPlanner(memory_planner)
        self._l0c_double_buffer = bool(enable_pypto_l0c_double_buffer)
        self._runtime = RuntimeKind(runtime)

    def __enter__(self) -> "PassContext":
        stack = getattr(_contexts, "stack", None)
        if stack is None:
            stack = _contexts.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc_info) -> None:
        _contexts.stack.pop()

    @staticmethod
    def current() -> Optional["PassContext"]:
        stack = getattr(_contexts, "stack", None)
        return stack[-1] if stack else None

    def get_instruments(self) -> List[PassInstrument]:
        return list(self._instruments)

    def get_verification_level(self) -> VerificationLevel:
        return self._verification_level

    def get_diagnostic_phase(self) -> DiagnosticPhase:
        return self._diagnostic_phase

    def get_disabled_diagnostics(self) -> Any:
        return self._disabled_diagnostics

    def get_memory_planner(self) -> MemoryPlanner:
        return self._memory_planner

    def get_enable_pypto_l0c_double_buffer(self) -> bool:
        return self._l0c_double_buffer

    def get_runtime(self) -> RuntimeKind:
        return self._runtime


def _properties(names: Iterable[str]) -> frozenset:
    return frozenset(IRProperty[n] for n in names)


class Pass:
    """One pass of the pipeline; ``pass_(program)`` returns the transformed program."""

    __slots__ = ("_name", "_required", "_produced", "_invalidated")

    def __init__(self, name: str, required, produced, invalidated):
        self._name = name
        self._required = _properties(required)
        self._produced = _properties(produced)
        self._invalidated = _properties(invalidated)

    def __call__(self, program: Any) -> Any:
        from pypto.ir.program import Program  # noqa: PLC0415 - ir imports this package

        if not isinstance(program, Program):
            raise TypeError(f"passes: {self._name} runs on a program (a @pl.program class or "
                            f"pl.parse result), got {type(program).__name__}")
        context = PassContext.current()
        instruments = context.get_instruments() if context else []
        verify = context is None or context.get_verification_level() is not VerificationLevel.NONE
        for instrument in instruments:
            instrument.before(self, program)
        result = Program(_core.passes.run(program._cpp, self._name, verify))
        result._host_workers = program._host_workers
        for instrument in instruments:
            instrument.after(self, result)
        return result

    def get_name(self) -> str:
        return self._name

    def get_required_properties(self) -> frozenset:
        """What the passes before this one in the pipeline establish, checked before it runs."""
        return self._required

    def get_produced_properties(self) -> frozenset:
        return self._produced

    def get_invalidated_properties(self) -> frozenset:
        return self._invalidated

    def __repr__(self) -> str:
        return f"<pypto.passes.Pass {self._name}>"


class PassPipeline:
    """Passes run in the order added."""

    def __init__(self):
        self._passes: List[Pass] = []

    def add_pass(self, pass_obj: Pass) -> None:
        if not isinstance(pass_obj, Pass):
            raise TypeError(f"PassPipeline.add_pass: expected a Pass, got {pass_obj!r}")
        self._passes.append(pass_obj)

    def run(self, program: Any) -> Any:
        for p in self._passes:
            program = p(program)
        return program

    def get_pass_names(self) -> List[str]:
        return [p.get_name() for p in self._passes]

    def get_passes(self) -> List[Pass]:
        return list(self._passes)


def property_violations(program: Any, properties: Iterable[IRProperty]) -> List[str]:
    """The violations of ``properties`` in ``program``, as ``line:col: message`` strings (empty
    when they all hold; lines counted in the program's file)."""
    names = [IRProperty(p).value for p in properties]
    return [f"{line}:{col}: {message}"
            for message, line, col in _core.passes.verify(program._cpp, names)]


def verify_properties(properties: Iterable[IRProperty], program: Any, pass_name: str = "") -> None:
    """PyPTO's check: raises ``pypto.errors.CompileError`` naming the first violation of
    ``properties`` in ``program`` (``file:line:col: error: after <pass_name>: ...``)."""
    from pypto.errors import CompileError  # noqa: PLC0415

    problems = property_violations(program, properties)
    if problems:
        where = program._cpp.file_name or "<program>"
        after = f"after {pass_name}: " if pass_name else ""
        line_col, message = problems[0].split(": ", 1)
        raise CompileError(f"{where}:{line_col}: error: {after}{message}")


class l0_tile_chooser:  # noqa: N801 - PyPTO's name for this namespace
    """PyPTO's L0 tile chooser, the model AutoTileMatmulL0 picks its blocks with
    (include/pypto/passes/l0_tile_choice.h): fill an ``L0TileConfig`` (the product ``M``, ``N``,
    ``K``, the L0 buffer sizes ``l0a_bytes``/``l0b_bytes``/``l0c_bytes``, the element sizes, the
    block grid, the ``allow_*`` schedules the caller can emit and the roofline constants, all
    with PyPTO's defaults) and call ``choose_l0_tile``: an ``L0TileResult`` with the block
    ``(m, n, k)``, its ``stationarity``, ``os_holds_a``, ``double_buffer_c``, the estimated
    cycles and traffic. An invalid configuration raises ValueError."""

    Stationarity = _core.passes.Stationarity
    L0TileConfig = _core.passes.L0TileConfig
    L0TileResult = _core.passes.L0TileResult
    choose_l0_tile = staticmethod(_core.passes.choose_l0_tile)


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (not name[i - 1].isupper() or
                                   (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _factory(name: str, required, produced, invalidated) -> Callable[[], Pass]:
    def make() -> Pass:
        return Pass(name, required, produced, invalidated)

    make.__name__ = _snake(name)
    make.__doc__ = f"The pass {name} of the pipeline (docs/passes.md)."
    return make


for _name, _required, _produced, _invalidated in _core.passes.registered():
    globals()[_snake(_name)] = _factory(_name, _required, _produced, _invalidated)
    __all__.append(_snake(_name))

# Where the work of some of PyPTO's passes happens in this compiler.
_DONE_ELSEWHERE = {
    "inline_functions": "the parser expands pl.FunctionType.Inline functions at their calls",
    "lower_composite_ops": "ConvertTensorToTileOps and code generation lower composite ops",
    "flatten_tile_nd_to_2d": "code generation addresses tiles of any rank",
}

# PyPTO's passes without a pass of their own here (see __getattr__).
_PYPTO_ONLY = (
    "ctrl_flow_transform", "normalize_stmt_structure", "outline_cluster_scopes",
    "optimize_orch_tensors", "materialize_comm_domain_scopes",
    "lower_host_tensor_collectives", "materialize_dist_tensor_ctx", "materialize_runtime_scopes",
    "classify_iter_arg_carry", "lower_pipeline_loops", "lower_pipeline_to_slots",
    "canonicalize_io_order", "normalize_return_order", "materialize_semantic_aliases",
    "synthesize_allreduce_signals", "materialize_valid_shape_symbols",
    "materialize_tensor_strides", "auto_derive_task_dependencies", "skew_cross_core_pipeline",
    "lower_auto_vector_split", "legalize_tile_cast", "insert_mx_scale_addr",
    "inject_gm_pipe_buffer", "stamp_tfree_split", "resolve_backend_op_layouts",
    "canonicalize_tile_slice", "split_vector_kernel", "insert_comm_fence",
    "fuse_create_assemble_to_slice", "fold_no_op_reshape", "expand_manual_phase_fence",
) + tuple(_DONE_ELSEWHERE)


def __getattr__(name: str) -> Any:
    """A PyPTO pass this compiler does not have is no attribute of this module: the error says
    so, and where its work is done here when it is."""
    if name not in _PYPTO_ONLY:
        raise AttributeError(f"module 'pypto.passes' has no attribute {name!r}")
    where = _DONE_ELSEWHERE.get(name)
    raise AttributeError(
        f"pypto.passes has no {name}: it is a pass of PyPTO's pipeline that this compiler does "
        f"not have" + (f" ({where})" if where else "") + "; its passes are "
        + ", ".join(f"passes.{_snake(n)}()" for n, *_ in _core.passes.registered())
        + ", and ir.compile runs them all")


del _name, _required, _produced, _invalidated
