"""Where the `pypto` command-line tool is: $PYPTO_CLI when set (e.g. a build tree's
build/pypto), else the one pip installed into this interpreter's scripts folder (which need not
be on PATH, e.g. under pyenv before a rehash), else the one on PATH."""

import os
import pathlib
import shutil
import subprocess
import sysconfig


def find_pypto_cli():
    if os.environ.get("PYPTO_CLI"):
        return os.environ["PYPTO_CLI"]
    script = pathlib.Path(sysconfig.get_path("scripts")) / "pypto"
    return str(script) if os.access(script, os.X_OK) else shutil.which("pypto")


PYPTO = find_pypto_cli()


def cli(*args, cwd, env=None):
    assert PYPTO, "the pypto tool is not installed (pip install . installs it; or set PYPTO_CLI)"
    return subprocess.run([PYPTO, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)
