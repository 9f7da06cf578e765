from collections.abc import Sequence
import enum
from typing import Any

import pypto._core.ir


class OptimizationStrategy(enum.Enum):
    Default = 0

class CompileOptions:
    def __init__(self) -> None: ...

    @property
    def output_dir(self) -> str: ...

    @output_dir.setter
    def output_dir(self, arg: str, /) -> None: ...

    @property
    def sub_dir(self) -> str: ...

    @sub_dir.setter
    def sub_dir(self, arg: str, /) -> None: ...

    @property
    def strategy(self) -> OptimizationStrategy: ...

    @strategy.setter
    def strategy(self, arg: OptimizationStrategy, /) -> None: ...

    @property
    def dump_passes(self) -> bool: ...

    @dump_passes.setter
    def dump_passes(self, arg: bool, /) -> None: ...

    @property
    def profiling(self) -> bool: ...

    @profiling.setter
    def profiling(self, arg: bool, /) -> None: ...

    @property
    def platform(self) -> str: ...

    @platform.setter
    def platform(self, arg: str, /) -> None: ...

class RunConfig:
    def __init__(self) -> None: ...

    @property
    def platform(self) -> str:
        """
        The hardware simulated: a2a3sim (or a2a3) or a5sim (or a5), which also moves tiles between Mat and Vec; cpu_sim is the former name of a2a3sim.
        """

    @platform.setter
    def platform(self, arg: str, /) -> None: ...

    @property
    def rtol(self) -> float:
        """
        Relative tolerance of the output check |actual - expected| <= atol + rtol * |expected|.
        """

    @rtol.setter
    def rtol(self, arg: float, /) -> None: ...

    @property
    def atol(self) -> float:
        """Absolute tolerance of the output check."""

    @atol.setter
    def atol(self, arg: float, /) -> None: ...

    @property
    def compile_profiling(self) -> bool:
        """
        Profile every stage and report it (RunResult.profile, <work_dir>/report/); PYPTO_COMPILE_PROFILING=1 profiles the whole process instead.
        """

    @compile_profiling.setter
    def compile_profiling(self, arg: bool, /) -> None: ...

    @property
    def dump_passes(self) -> bool:
        """
        Write the IR after each pass to <work_dir>/passes_dump/ (off by default, as in PyPTO: the dumps cost far more than the passes).
        """

    @dump_passes.setter
    def dump_passes(self, arg: bool, /) -> None: ...

    @property
    def work_dir(self) -> str:
        """
        Output directory of the compile, the data files and the report; unset: build_output/<Program>_<time>/ (under $PYPTO_PROG_BUILD_DIR when set).
        """

    @work_dir.setter
    def work_dir(self, arg: str, /) -> None: ...

    @property
    def keep_outputs(self) -> int:
        """
        Default output folders to keep per program, the newest (0 keeps all, as PyPTO does); a work_dir given is never removed.
        """

    @keep_outputs.setter
    def keep_outputs(self, arg: int, /) -> None: ...

    @property
    def workers(self) -> int:
        """
        Simulated cores (worker threads) of the device; unset: the device's default (4).
        """

    @workers.setter
    def workers(self, arg: int, /) -> None: ...

    @property
    def strategy(self) -> OptimizationStrategy:
        """The pass pipeline to run (Default: the only one)."""

    @strategy.setter
    def strategy(self, arg: OptimizationStrategy, /) -> None: ...

    @property
    def isolate(self) -> bool:
        """
        Run the device in a child process, so that a faulting kernel is contained.
        """

    @isolate.setter
    def isolate(self, arg: bool, /) -> None: ...

    @property
    def timeout(self) -> float:
        """
        Seconds the reference interpreter and the device may each take before the run is stopped and reported as not finishing (all rounds of a benchmark together).
        """

    @timeout.setter
    def timeout(self, arg: float, /) -> None: ...

    @property
    def enable_l2_swimlane(self) -> bool:
        """
        Runtime DFX: <work_dir>/dfx_outputs/swimlane.json, a Chrome trace with one track per simulated core.
        """

    @enable_l2_swimlane.setter
    def enable_l2_swimlane(self, arg: bool, /) -> None: ...

    @property
    def enable_dump_args(self) -> bool:
        """
        Runtime DFX: each task's tensors as .npy files under <work_dir>/dfx_outputs/args/.
        """

    @enable_dump_args.setter
    def enable_dump_args(self, arg: bool, /) -> None: ...

    @property
    def enable_pmu(self) -> bool:
        """
        Runtime DFX: <work_dir>/dfx_outputs/pmu.csv, cycles and instructions per task (where the OS allows).
        """

    @enable_pmu.setter
    def enable_pmu(self, arg: bool, /) -> None: ...

    @property
    def enable_dep_gen(self) -> bool:
        """
        Runtime DFX: the task dependency graph as dfx_outputs/dep_graph.json and .dot.
        """

    @enable_dep_gen.setter
    def enable_dep_gen(self, arg: bool, /) -> None: ...

    @property
    def write_golden_data(self) -> bool:
        """
        Write the inputs and expected outputs as .npy files to <work_dir>/data/ (as PyPTO does); off skips the largest cost of a run on big tensors.
        """

    @write_golden_data.setter
    def write_golden_data(self, arg: bool, /) -> None: ...

    @property
    def rounds(self) -> int:
        """
        Benchmark: measured launches of the loaded program in one device process; the outputs checked are the last launch's.
        """

    @rounds.setter
    def rounds(self, arg: int, /) -> None: ...

    @property
    def warmup(self) -> int:
        """Benchmark: unmeasured launches before the measured ones."""

    @warmup.setter
    def warmup(self, arg: int, /) -> None: ...

    @property
    def cache_dir(self) -> str:
        """
        Binary cache of built programs (several processes and machines may share one); unset: $XDG_CACHE_HOME/pypto, else ~/.cache/pypto.
        """

    @cache_dir.setter
    def cache_dir(self, arg: str, /) -> None: ...

def read_environment(name: str) -> str | None:
    """
    The value of the environment variable `name`, or None when it is not set: the one reader of the environment (pypto/support/environment.def lists every variable; another name raises).
    """

def environment_variables() -> list[dict[str, str]]:
    """
    Every environment variable pypto reads (pypto/support/environment.def): name, doc.
    """

def config_error(config: RunConfig) -> str:
    """
    The first field of `config` out of its option's range (or naming no platform), phrased for the user; '' when every field fits. run() and the commands check the same.
    """

def run_options() -> list[dict[str, Any]]:
    """
    The rows of the driver's option table (pypto/driver/run_config.def), in order: name, type (str, float, int, bool, strategy), default (None when unset means the environment or built-in default), unset_value (the driver's value for unset), min, max, range, unit, environment, commands (the CLI commands with a flag for it), flag, aliases (other spellings of the flag, comma-separated), doc.
    """

class Session:
    def __init__(self, profiling_requested: bool) -> None: ...

    def __enter__(self) -> Session: ...

    def __exit__(self, exc_type: object | None, exc_value: object | None, traceback: object | None) -> bool: ...

    @property
    def profiling(self) -> bool: ...

    def failed_report(self, error: str) -> dict[str, Any] | None:
        """
        The session's profile after a failure outside run() (a parse error): the failed stage carries `error`. None without a profiler.
        """

    def begin_stage(self, arg: str, /) -> None: ...

    def end_stage(self) -> None: ...

    def report(self) -> dict[str, Any]: ...

    def take_run_profile(self) -> tuple[dict[str, Any] | None, str]:
        """
        The run's profile (None without a profiler) and, with PYPTO_COMPILE_PROFILING, its summary to print: driver.run leaves them for the caller to take last, so that the profile covers the caller's own work on the result.
        """

    def write_report(self) -> None: ...

class CompileResult:
    @property
    def output_dir(self) -> str: ...

    @property
    def translation_unit(self) -> str: ...

    @property
    def kernel_names(self) -> list[str]: ...

    @property
    def lowered(self) -> pypto._core.ir.Program: ...

    @property
    def manifest_json(self) -> str: ...

def compile_program(program: pypto._core.ir.Program, options: CompileOptions) -> CompileResult:
    """
    Runs the pass pipeline and codegen in a session of its own; raises CompileError.
    """

class CompiledProgram:
    @property
    def program(self) -> pypto._core.ir.Program: ...

    @property
    def output_dir(self) -> str: ...

    @property
    def entry_params(self) -> list: ...

    @property
    def result(self) -> CompileResult: ...

    @property
    def returns_values(self) -> bool: ...

    def load(self) -> tuple[bool, bool]:
        """
        Builds the program's library (or takes it from the binary cache) and loads it now, as its first call would. Returns (built, cache_hit); built is False when it was loaded already.
        """

def default_output_dir(program_name: str) -> str:
    """
    The output directory ir.compile picks when given none: ${PYPTO_PROG_BUILD_DIR:-build_output}/<program>_<timestamp>.
    """

def callable_program(result: CompileResult) -> CompiledProgram:
    """
    The compiled program of an ir.compile result, to be called (nothing is compiled again); raises TypeError when its entry takes other than tensors.
    """

def function_program(program: pypto._core.ir.Program, name: str, program_name: str = '') -> pypto._core.ir.Program:
    """
    The program of function `name` and what it calls, transitively (one orchestration of a program that has several), named `program_name` (default: <program>_<name>).
    """

def load_compiled(output_dir: str) -> CompiledProgram:
    """
    The compiled program an ir.compile wrote into output_dir (kernel_config.json and program.cpp), reloaded without parsing or compiling; raises ValueError saying what is missing.
    """

def compile_for_calls(session: Session, program: pypto._core.ir.Program, config: RunConfig) -> CompiledProgram:
    """
    Compiles a program to be called many times (stage `compile`); raises CompileError.
    """

def call(session: object | None, compiled: CompiledProgram, arrays: list, dtypes: Sequence[str], config: RunConfig) -> tuple[float, bool, bool, list[str]]:
    """
    Runs a compiled program on the given arrays (stage `device_execution`); Out/InOut arrays hold the results. Returns (execution_time, built, library_cache_hit, notes); raises RuntimeError with the device's message.
    """

def run(session: Session, program: pypto._core.ir.Program, tensors: Sequence[tuple[str, str, Sequence[int], bool, bool]], prepare: object, golden: object | None, config: RunConfig) -> dict:
    """
    Runs the whole pipeline in `session`; returns a dict with the fields of the driver's RunResult. Its profile is None and run_summary '': the caller takes them last (Session.take_run_profile).
    """

def run_generated(session: Session, program: pypto._core.ir.Program, config: RunConfig, seed: int) -> dict:
    """
    Runs the program on random inputs made from `seed` against the reference interpreter (what `pypto run` does); the dict of run() plus output_checksum (XXH3-64 hex of the outputs, '' when the device did not finish).
    """

def round_statistics(seconds: Sequence[float]) -> dict:
    """min, median, mean, p95 and stdev of a benchmark's round times."""

class DistributedProgram:
    @property
    def world_size(self) -> int: ...

    @property
    def output_dir(self) -> str: ...

    @property
    def host(self) -> str: ...

    @property
    def window_bytes(self) -> int: ...

    @property
    def params(self) -> list[tuple[str, str]]: ...

    @property
    def param_types(self) -> list[tuple[list[int], str]]:
        """The shape and dtype name of each parameter of the host orchestrator."""

    @property
    def dispatches(self) -> list[tuple[int, str]]: ...

    def load(self) -> int:
        """
        Builds (or takes from the binary cache) and loads the library of every device program now. Returns how many this call loaded (0 when all were loaded already).
        """

def compile_distributed(program: pypto._core.ir.Program, world_size: int, config: RunConfig, profiling: bool = False) -> DistributedProgram:
    """
    Compiles the device programs of a multi-rank program for `world_size` ranks; raises CompileError.
    """

def call_distributed(program: DistributedProgram, arrays: list, dtypes: Sequence[str], config: RunConfig, signal_timeout: float = 60.0, profiling: bool = False, host_call: object | None = None, transport: str = 'shm') -> tuple:
    """
    Runs a compiled multi-rank program on arrays (one per host orchestrator parameter); Out/InOut arrays hold the results. host_call(name, args) runs a host sub-worker: args holds, per argument, (writable memoryview, shape, dtype name, direction name) for a tensor or the scalar; the memoryviews are valid during the call only. Returns (execution_time, rank_seconds, rank_wait_seconds, profile or None); raises RuntimeError naming the rank that failed, or the sub-worker's exception. transport "mpi": this process is one rank of the processes mpirun started (MPI initialised with MPI_THREAD_MULTIPLE) and runs only its own rank's dispatches.
    """
