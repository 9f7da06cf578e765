"""``python -m pypto ...`` runs the ``pypto`` command-line tool with the same arguments and exit
codes (``python -m pypto --help``). The tool is the C++ program pip installs next to this
interpreter; ``PYPTO_CLI`` names another one (e.g. a build tree's ``build/pypto``)."""

import os
import shutil
import sys
import sysconfig
from typing import List, Optional

from pypto import _core


def find_cli() -> Optional[str]:
    configured = _core.driver.read_environment("PYPTO_CLI")
    if configured:
        return configured
    script = os.path.join(sysconfig.get_path("scripts"), "pypto")
    if os.access(script, os.X_OK):
        return script
    return shutil.which("pypto")


def main(argv: List[str]) -> int:
    cli = find_cli()
    if cli is None:
        print("python -m pypto: the pypto tool is not installed next to this Python "
              f"({sysconfig.get_path('scripts')}) nor on PATH; reinstall the package "
              "(pip install .) or set PYPTO_CLI to the tool's path", file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        # The tool replaces this process: its output, signals and exit code are the user's.
        os.execv(cli, ["pypto", *argv])
    except OSError as e:
        print(f"python -m pypto: cannot run {cli}: {e.strerror}", file=sys.stderr)
        return 2
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
