"""A RunConfig into the driver's own struct: the one builder of ``_core.driver.RunConfig`` for
``run()``, ``@pl.jit`` calls and sweep jobs.

Every option is converted by its type in the option table (``_options.OPTIONS``): None leaves an
option unset when the table allows it, and the driver checks the ranges (so that the messages
are the same from Python and the command line). The few options PyPTO also spells otherwise
have an extra conversion in ``_PYPTO_SPELLINGS``.
"""

import math

import numpy as np

from pypto import _core
from pypto._text import checked_path, checked_text
from pypto.runtime._options import OPTIONS


def _flag(value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"expected True or False, got {type(value).__name__}")
    return bool(value)


def _int(value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"expected an int, got {type(value).__name__}")
    if not -2**31 <= value < 2**31:  # the driver reports the range for the rest
        raise ValueError("out of range")
    return int(value)


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _text(name, value):
    # Options naming a directory (``*_dir``) take any path; the others are names.
    if name.endswith("_dir"):
        return checked_path(value, "a path", ValueError)
    value = checked_text(value, f"the {name}", ValueError)
    if "\0" in value:
        raise ValueError(f"the {name} contains a NUL character (at offset {value.index(chr(0))})")
    return value


def strategy(value):
    """An OptimizationStrategy, or its name."""
    if isinstance(value, _core.driver.OptimizationStrategy):
        return value
    members = _core.driver.OptimizationStrategy.__members__
    if str(value) not in members:
        raise ValueError(f"unknown strategy; use one of {', '.join(members)}")
    return members[str(value)]


def tolerance(value):
    """rtol and atol: a finite number >= 0 (a NaN or negative one would fail every element of
    the check with values that print the same)."""
    value = _number(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError("a tolerance must be a finite number >= 0 (0 asks for exact equality)")
    return value


def _level(value):
    """A DFX switch given as a bool or, as PyPTO's levels and event types, an int (0: off)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value >= 0:
        return value > 0
    raise TypeError(f"expected True/False or a level >= 0, got {value!r}")


def _dump_passes(value):
    from pypto.ir.pass_manager import PassDumpLevel, dumps_passes  # noqa: PLC0415

    if isinstance(value, PassDumpLevel):
        return dumps_passes(value)
    return _flag(value)


# Spellings PyPTO's RunConfig allows beyond the option's type.
_PYPTO_SPELLINGS = {
    "rtol": tolerance,
    "atol": tolerance,
    "dump_passes": _dump_passes,
    "enable_dump_args": _level,
    "enable_pmu": _level,
}

_BY_TYPE = {"bool": _flag, "int": _int, "float": _number, "strategy": strategy}


def convert(name, value):
    """The driver's value of option ``name`` given as ``value``; raises TypeError or ValueError
    saying what does not fit."""
    option = OPTIONS[name]
    if value is None and option["default"] is None:
        return option["unset_value"]
    special = _PYPTO_SPELLINGS.get(name)
    if special is not None:
        return special(value)
    if option["type"] == "str":
        return _text(name, value)
    value = _BY_TYPE[option["type"]](value)
    if option["default"] is None and value == option["unset_value"]:
        # The driver's own mark for "unset" (0 cores, -1 folders) is not a value to give.
        raise ValueError(f"out of range: give {option['range']}, or None for the default")
    return value


def driver_config(config):
    """The driver's RunConfig with every option of ``config`` (a pypto.runtime.RunConfig, or any
    object with the options as attributes); raises ValueError naming the field that does not
    fit."""
    result = _core.driver.RunConfig()
    for name in OPTIONS:
        value = getattr(config, name)
        try:
            setattr(result, name, convert(name, value))
        except (TypeError, ValueError, KeyError, OverflowError) as e:
            shown = e.args[0] if isinstance(e, KeyError) and e.args else e
            raise ValueError(f"RunConfig.{name}={value!r} is not valid: {shown}") from None
    return result
