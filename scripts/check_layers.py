#!/usr/bin/env python3
"""Fails when a source file of one layer includes a header of a layer it may not use.

The layers and what each may use are in cmake/layers.txt (the build reads the same table). A file
belongs to the layer of its folder: src/<layer>/... or include/pypto/<layer>/.... Every
`#include "pypto/<other>/..."` in it must name its own layer or one the table allows. The table
itself must be closed (a layer may use what the layers it uses may use), and every folder under
src/ and include/pypto/ must be a layer.

    python3 scripts/check_layers.py [ROOT]      exit 0: clean; 1: violations (listed); 2: bad table
"""

import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*"pypto/([A-Za-z_]+)/')


def read_table(root):
    table = {}
    for number, line in enumerate((root / "cmake" / "layers.txt").read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, uses = line.partition(":")
        if not sep or not name.strip().isidentifier():
            raise ValueError(f"cmake/layers.txt:{number}: expected 'layer: layers it uses'")
        table[name.strip()] = set(uses.split())
    return table


def table_problems(table):
    problems = []
    for layer, uses in table.items():
        for used in sorted(uses):
            if used not in table:
                problems.append(f"cmake/layers.txt: {layer} uses unknown layer '{used}'")
            elif not table[used] <= uses:
                missing = ", ".join(sorted(table[used] - uses))
                problems.append(f"cmake/layers.txt: {layer} uses {used}, so it must also list "
                                f"{missing}")
    return problems


def layer_files(root, table):
    """(path, layer) for every C++ source and header of the core; unknown folders are errors."""
    files, problems = [], []
    for base in (root / "src", root / "include" / "pypto"):
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            if folder.name not in table:
                problems.append(f"{folder.relative_to(root)}: not a layer of cmake/layers.txt")
                continue
            for path in sorted(folder.rglob("*")):
                if path.suffix in (".h", ".hpp", ".cpp", ".cc", ".inc"):
                    files.append((path, folder.name))
    return files, problems


def check(root):
    table = read_table(root)
    problems = table_problems(table)
    files, folder_problems = layer_files(root, table)
    problems += folder_problems
    for path, layer in files:
        allowed = table[layer] | {layer}
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if match and match.group(1) not in allowed:
                problems.append(
                    f"{path.relative_to(root)}:{number}: layer '{layer}' includes "
                    f"'{line.strip()[len('#include '):]}' from layer '{match.group(1)}', which it "
                    f"may not use (it may use: {', '.join(sorted(table[layer])) or 'nothing'})")
    return problems


def main(argv):
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent)
    try:
        problems = check(root)
    except (OSError, ValueError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check_layers: {len(problems)} include(s) against the layering of cmake/layers.txt",
              file=sys.stderr)
        return 1
    print("check_layers: every include follows cmake/layers.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
