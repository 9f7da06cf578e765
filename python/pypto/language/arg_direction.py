"""``pl.adir``: the direction markers PyPTO programs write in a call's or a function's
``attrs={"arg_directions": [...]}``.

A marker names how one argument of a task is passed: ``input``, ``output`` (a tensor the task
allocates), ``output_existing`` (written into a tensor that already exists), ``inout``,
``no_dep`` (passed without ordering the task) or ``scalar``. The parser reads them from the
program's source; here they only have to exist so that the decorator's arguments evaluate.
"""

import enum

__all__ = ["ArgDirection", "input", "output", "output_existing", "inout", "no_dep", "scalar"]


class ArgDirection(str, enum.Enum):
    Input = "Input"
    Output = "Output"
    OutputExisting = "OutputExisting"
    InOut = "InOut"
    NoDep = "NoDep"
    Scalar = "Scalar"

    def __repr__(self):
        return "pl.adir." + _MARKERS[self]


input = ArgDirection.Input  # noqa: A001 - PyPTO's name
output = ArgDirection.Output
output_existing = ArgDirection.OutputExisting
inout = ArgDirection.InOut
no_dep = ArgDirection.NoDep
scalar = ArgDirection.Scalar

_MARKERS = {input: "input", output: "output", output_existing: "output_existing",
            inout: "inout", no_dep: "no_dep", scalar: "scalar"}
