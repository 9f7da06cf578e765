"""Writing the files a generator script derives from a table, or checking them (``--check``).

Shared by scripts/gen_ops.py, gen_options.py and gen_dtypes.py: each renders {path: text} from
its table and hands it here, so that "out of date" means the same everywhere."""

import pathlib
import sys
from typing import Dict


def write_or_check(outputs: Dict[pathlib.Path, str], check: bool, script: str) -> int:
    """Writes each file whose text differs (or, with ``check``, reports it on stderr).

    Returns 1 when ``check`` found a file out of date, else 0."""
    stale = 0
    for path, text in outputs.items():
        current = path.read_text() if path.exists() else ""
        if current == text:
            continue
        if check:
            print(f"{path} is out of date: run python3 scripts/{script}", file=sys.stderr)
            stale = 1
        else:
            path.write_text(text)
            print(f"wrote {path}")
    return stale
