"""Helpers of the end-to-end op tests: run program text on the device against the reference
interpreter."""

import pypto.language as pl
from pypto.runtime import RunConfig, run


def run_program(work, text, specs):
    """Runs `text` (a @pl.program) with `specs` in folder `work`, checked against the reference
    interpreter; returns its outputs."""
    result = run(pl.parse(text), specs, None,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert result.passed, result.error
    return result.outputs
