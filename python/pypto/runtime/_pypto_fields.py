"""PyPTO's RunConfig fields that do not go to the driver as they are: what each means on the CPU
device (_HOST_SIDE_FIELDS), how run() applies them, and PyPTO's checks of the ring sizes."""

import numpy as np

from pypto._text import checked_path

# The NPU runtime's rings are sized per scope depth; a list gives one size per ring.
_RING_DEPTH = 4
_RING_RULES = (
    ("ring_task_window", "a power of 2 >= 4", lambda v: v >= 4 and v & (v - 1) == 0),
    ("ring_heap", "a power of 2 >= 1024 (bytes)", lambda v: v >= 1024 and v & (v - 1) == 0),
    ("ring_dep_pool", "in [4, 2**31 - 1]", lambda v: 4 <= v <= 2**31 - 1),
)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _check_ring_sizes(config):
    """PyPTO's checks of the ring-size overrides (hardware-only fields, but a wrong value is
    wrong everywhere): None, a size, or a list of _RING_DEPTH sizes where 0 keeps the default."""
    for name, rule, ok in _RING_RULES:
        value = getattr(config, name)
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            if len(value) != _RING_DEPTH:
                raise ValueError(f"RunConfig.{name} needs {_RING_DEPTH} entries (one per ring), "
                                 f"got {len(value)}")
            for v in value:
                if not _is_int(v) or (v != 0 and not ok(v)):
                    raise ValueError(f"RunConfig.{name} entries must be {rule} (or 0 to keep "
                                     f"the default), got {v!r}")
            setattr(config, name, list(value))
        elif not _is_int(value) or not ok(value):
            raise ValueError(f"RunConfig.{name} must be {rule}, got {value!r}")


#: The RunConfig fields that do not go to the driver as they are, and what each means here.
_HOST_SIDE_FIELDS = {
    "device_id": "ignored: the CPU device is one simulated chip",
    "backend_type": "follows platform; the platform is what compiles and runs",
    "save_kernels": "run() always keeps its output folder (see keep_outputs)",
    "save_kernels_dir": "the output folder when work_dir is None",
    "codegen_only": "run() compiles into the output folder and stops (passed=True)",
    "enable_chip_swimlane": "level > 0 turns on the swimlane trace (enable_l2_swimlane)",
    "enable_scope_stats": "NPU only (ring-fill statistics of the NPU runtime): accepted",
    "diagnostic_phase": "accepted: the compiler reports errors, it has no warning phases",
    "disabled_diagnostics": "accepted: the compiler reports errors, it has no warning phases",
    "golden_data_dir": "accepted: data files go to <work_dir>/data (write_golden_data)",
    "aicpu_thread_num": "NPU only (AICPU scheduler threads): accepted; see workers",
    "ring_task_window": "NPU only (runtime ring sizes): checked and accepted",
    "ring_heap": "NPU only (runtime ring sizes): checked and accepted",
    "ring_dep_pool": "NPU only (runtime ring sizes): checked and accepted",
    "distributed_config": "multi-rank programs: read by @pl.jit.host (docs/multi-rank.md)",
    "analyze_auto_scopes_for_deps": "accepted: the device tracks task dependencies itself",
    "memory_planner": "accepted: the compiler has one memory planner",
    "dump_ptoas_passes": "accepted: there is no ptoas stage",
}


def _apply_host_side_fields(config, driver_config):
    """What PyPTO's fields change in the driver's config (see _HOST_SIDE_FIELDS)."""
    if config.work_dir is None and config.save_kernels_dir is not None:
        try:
            driver_config.work_dir = checked_path(config.save_kernels_dir, "a path", ValueError)
        except (TypeError, ValueError) as e:
            raise ValueError(f"RunConfig.save_kernels_dir={config.save_kernels_dir!r} is not "
                             f"valid: {e}") from None
    level = config.enable_chip_swimlane
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= 4:
        raise ValueError(f"RunConfig.enable_chip_swimlane={level!r} is not valid: give a level "
                         f"0-4 (0: off) or a bool")
    if level > 0:
        driver_config.enable_l2_swimlane = True
    if config.distributed_config is not None:
        raise ValueError("RunConfig.distributed_config is for multi-rank programs: compile one "
                         "with ir.compile(program, distributed_config=...) or call a "
                         "@pl.jit.host function with it (docs/multi-rank.md); a single-chip "
                         "run leaves it None")
