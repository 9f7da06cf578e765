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


def check_both(work, program, specs, golden, **config):
    """Against numpy on the device, and against the reference interpreter (no golden)."""
    result = run(program, specs, golden,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False, **config))
    assert result.passed, result.error
    again = run(program, specs, None,
                RunConfig(work_dir=str(work / "interp"), write_golden_data=False))
    assert again.passed, again.error
    return result


def failure(work, program, specs):
    """The error of a run that must fail, on the device and in the interpreter."""
    device = run(program, specs, lambda t, p=None: None,
                 RunConfig(work_dir=str(work / "out"), write_golden_data=False))
    assert not device.passed
    interpreted = run(program, specs, None,
                      RunConfig(work_dir=str(work / "interp"), write_golden_data=False))
    assert not interpreted.passed
    return device.error, interpreted.error
