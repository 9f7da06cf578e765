"""The layering check (scripts/check_layers.py) passes on the tree and catches a planted upward
include, naming the file, the line and the layers involved."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_layers.py"


def run_check(root):
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True,
                          text=True, timeout=60)


def copy_tree(tmp_path):
    for part in ("src", "include", "cmake"):
        shutil.copytree(ROOT / part, tmp_path / part)
    return tmp_path


def test_the_tree_follows_the_layers():
    result = run_check(ROOT)
    assert result.returncode == 0, result.stderr
    assert "every include follows" in result.stdout


def test_a_planted_upward_include_fails(tmp_path):
    root = copy_tree(tmp_path)
    planted = root / "src" / "runtime" / "planted.cpp"
    planted.write_text('#include <vector>\n#include "pypto/runtime/device.h"\n'
                       '#include "pypto/driver/run.h"\n')
    result = run_check(root)
    assert result.returncode == 1
    assert "src/runtime/planted.cpp:3: layer 'runtime' includes" in result.stderr
    assert "from layer 'driver'" in result.stderr
    assert "1 include(s) against the layering" in result.stderr


def test_an_upward_include_in_a_public_header_fails(tmp_path):
    root = copy_tree(tmp_path)
    header = root / "include" / "pypto" / "ir" / "types.h"
    header.write_text(header.read_text() + '\n#include "pypto/passes/pass.h"\n')
    result = run_check(root)
    assert result.returncode == 1
    assert "include/pypto/ir/types.h:" in result.stderr
    assert "layer 'ir' includes" in result.stderr


def test_a_table_that_is_not_closed_is_refused(tmp_path):
    root = copy_tree(tmp_path)
    table = root / "cmake" / "layers.txt"
    table.write_text(table.read_text().replace("passes: ir profiling support", "passes: ir"))
    result = run_check(root)
    assert result.returncode == 1
    assert "passes uses ir, so it must also list support" in result.stderr


def test_an_unknown_folder_is_refused(tmp_path):
    root = copy_tree(tmp_path)
    (root / "src" / "extras").mkdir()
    result = run_check(root)
    assert result.returncode == 1
    assert "src/extras: not a layer" in result.stderr
