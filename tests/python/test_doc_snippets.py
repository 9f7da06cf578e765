"""The code in README.md and docs/*.md runs, so that the examples cannot rot.

Every fenced ```python and ```sh block is extracted. The Python blocks of a page run in order as
one script (later blocks use what earlier ones defined, as a reader would type them), the shell
blocks of a page as one `bash -e` script, each page in a fresh temporary folder holding a link to
`examples/`, against this source tree's package and the `pypto` tool under test (PYPTO_CLI, as
tests/python/cli_tool.py finds it). Built programs go to the usual binary cache, which the rest
of the suite shares.

A block that must not run says why in an HTML comment on the line before its fence:

    <!-- snippet: skip: installs Debian packages (needs apt and the network) -->
    <!-- snippet: partial: a statement of a kernel body, not a program -->

`skip` is for a block that needs an external service (or would run this suite itself),
`partial` for one that is intentionally a fragment; `<!-- snippets: partial: REASON -->` on a line
of its own marks every block of the page after it. Skipped and partial blocks are still checked
for syntax (Python's parser, `bash -n`). A statement or two of a kernel body (the op examples of
docs/language-reference.md) runs as the body of a kernel, after declarations of the names it
reads (`<!-- snippet: kernel: DECLS -->` for one block, `<!-- snippets: kernel: DECLS -->` for the
blocks after it: doc_kernels.py). Links between the pages are checked too: every relative
link of README.md and docs/ names a file that exists (and an anchor of it, when it has one)."""

import ast
import concurrent.futures
import dataclasses
import os
import pathlib
import re
import subprocess
import sys
import urllib.parse

import pytest

import pypto
from cli_tool import PYPTO
from doc_kernels import (KERNEL_MARKER, PAGE_KERNEL_MARKER, Fragment, check_fragment,
                         parse_declarations, run_fragments)

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The folder holding the package under test: not necessarily ROOT / "python", whose pypto has no
# built extension in a fresh checkout (the package is then installed in the environment).
PACKAGE_ROOT = str(pathlib.Path(pypto.__file__).resolve().parents[1])
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE = {"python": "python", "py": "python", "sh": "sh", "bash": "sh", "shell": "sh"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(skip|partial)\s*:\s*(.*?)\s*-->\s*$")
PAGE_MARKER = re.compile(r"^\s*<!--\s*snippets:\s*partial\s*:\s*(.*?)\s*-->\s*$")
# A page's scripts may take this long (a sweep's Dask cluster, cold builds in a fresh cache).
PAGE_TIMEOUT_S = 600


@dataclasses.dataclass
class Block:
    page: pathlib.Path
    line: int  # of the opening fence, 1-based
    lang: str  # "python", "sh", or the fence's own word for other blocks
    text: str
    mark: str = ""  # "", "skip", "partial" or "kernel" (a kernel body: doc_kernels.py)
    reason: str = ""  # why it is skipped or partial; a kernel body's declarations

    @property
    def where(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page):
    """The fenced blocks of a page, with their markers. Raises on a fence left open."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, page_mark, page_kernel, i = [], None, None, 0
    previous = ""  # the last non-blank line before the current one
    while i < len(lines):
        line = lines[i]
        page_match = PAGE_MARKER.match(line)
        # The last page-wide marker holds for the blocks after it.
        if page_match:
            page_mark, page_kernel = page_match.group(1), None
        page_kernel_match = PAGE_KERNEL_MARKER.match(line)
        if page_kernel_match:
            page_mark, page_kernel = None, page_kernel_match.group(1)
        fence = FENCE.match(line)
        if not fence:
            previous = line if line.strip() else previous
            i += 1
            continue
        indent, ticks, word = fence.groups()
        start, body = i, []
        i += 1
        while i < len(lines) and not re.match(rf"^\s*{re.escape(ticks)}\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"{page.relative_to(ROOT)}:{start + 1}: a ``` fence is never "
                                 f"closed")
        block = Block(page, start + 1, RUNNABLE.get(word.lower(), word.lower()),
                      "\n".join(body) + "\n")
        marker = MARKER.match(previous)
        kernel = KERNEL_MARKER.match(previous)
        if marker:
            block.mark, block.reason = marker.groups()
        elif block.lang == "python" and (kernel or page_kernel is not None):
            # The page's declarations, then the block's own.
            block.mark = "kernel"
            block.reason = " ;; ".join(filter(None, [page_kernel, kernel and kernel.group(1)]))
        elif page_mark is not None:
            block.mark, block.reason = "partial", page_mark
        blocks.append(block)
        previous, i = "", i + 1
    return blocks


ALL_BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def test_every_marked_block_gives_a_reason():
    for block in ALL_BLOCKS:
        if block.mark in ("skip", "partial"):
            assert len(block.reason) >= 10, f"{block.where}: say why the block does not run"


@pytest.mark.parametrize("block", [b for b in ALL_BLOCKS if b.lang == "python"],
                         ids=lambda b: b.where)
def test_python_blocks_parse(block):
    try:
        ast.parse(block.text)
    except SyntaxError as e:
        pytest.fail(f"{block.where}: line {e.lineno} of the block: {e.msg}")


def test_shell_blocks_parse():
    for block in (b for b in ALL_BLOCKS if b.lang == "sh"):
        proc = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True,
                              check=False)
        assert proc.returncode == 0, f"{block.where}: {proc.stderr}"


def _script(blocks, comment):
    """The blocks one after another, each after a comment naming where it comes from."""
    return "".join(f"{comment} --- {b.where}\n{b.text}" for b in blocks)


def _page_folder(tmp_path, page, lang):
    folder = tmp_path / f"{page.stem}-{lang}"
    folder.mkdir()
    (folder / "examples").symlink_to(ROOT / "examples")
    return folder


def _environment(tmp_path):
    """This interpreter as `python`/`python3` and the tool under test as `pypto`, first on PATH;
    the package under test (the one this interpreter imported: installed, or a build tree's)
    first on PYTHONPATH."""
    assert PYPTO, "the pypto tool is not installed (pip install . installs it; or set PYPTO_CLI)"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, target in (("python", sys.executable), ("python3", sys.executable),
                         ("pypto", PYPTO)):
        # A wrapper rather than a symlink: a virtual environment's python finds its
        # environment from the path it was started by.
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\nexec "{target}" "$@"\n')
        wrapper.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(
        [PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYPTO_PYTHON"] = sys.executable  # what `pypto sweep` runs
    env.pop("PYPTO_COMPILE_PROFILING", None)  # a page that wants it sets it
    return env


def _run_page(page, lang, folder, env):
    blocks = [b for b in ALL_BLOCKS if b.page == page and b.lang == lang and not b.mark]
    if lang == "python":
        path = folder / "snippets.py"
        path.write_text(_script(blocks, "#"), encoding="utf-8")
        command = [sys.executable, str(path)]
    else:
        path = folder / "snippets.sh"
        path.write_text("set -e -o pipefail\n" + _script(blocks, "#"), encoding="utf-8")
        command = ["bash", "-x", str(path)]  # -x: the failing command is the last one shown
    proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=PAGE_TIMEOUT_S, check=False)
    return path, proc


RUNS = [(page, lang) for page in PAGES for lang in ("python", "sh")
        if any(b.page == page and b.lang == lang and not b.mark for b in ALL_BLOCKS)]


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory):
    """Every page's scripts, two at a time (each run is mostly one process waiting on builds
    and a device; two keep a two-core machine busy without starving the device's threads)."""
    tmp_path = tmp_path_factory.mktemp("doc-snippets")
    env = _environment(tmp_path)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {(page, lang): pool.submit(_run_page, page, lang,
                                             _page_folder(tmp_path, page, lang), env)
                   for page, lang in RUNS}
        return {key: future.result() for key, future in futures.items()}


@pytest.mark.parametrize("page,lang", RUNS,
                         ids=[f"{p.relative_to(ROOT)}-{lang}" for p, lang in RUNS])
def test_page_snippets_run(page_runs, page, lang):
    path, proc = page_runs[(page, lang)]
    assert proc.returncode == 0, (
        f"the {lang} blocks of {page.relative_to(ROOT)} failed (exit {proc.returncode}); the "
        f"script is {path}, each block after a '# --- FILE:LINE' comment.\n"
        f"stdout (end):\n{proc.stdout[-3000:]}\nstderr (end):\n{proc.stderr[-4000:]}")


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
BARE_PAGE = re.compile(r"(?<![\w/.<-])([\w][\w./-]*\.md)\b")


def _anchors(page):
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to '-'."""
    anchors = set()
    for block_free in _outside_code(page):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", block_free)
        if heading:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).lower())
            anchors.add(text.replace(" ", "-"))
    return anchors


def _outside_code(page):
    inside = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield line


def test_relative_links_name_files_and_anchors_that_exist():
    broken = []
    for page in PAGES:
        for line in _outside_code(page):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, chrome:
                    continue
                path, _, anchor = urllib.parse.unquote(target).partition("#")
                file = (page.parent / path).resolve() if path else page
                if not file.exists():
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
                elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
            # A page named in prose, not as a link: relative to the page or to the repository.
            for name in BARE_PAGE.findall(re.sub(r"\]\([^)]*\)", "]", line)):
                if not ((page.parent / name).exists() or (ROOT / name).exists()):
                    broken.append(f"{page.relative_to(ROOT)}: {name} (no such file)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_readme_states_benchmarks_defaults():
    import inspect

    from pypto.runtime import benchmark

    defaults = {name: p.default for name, p in inspect.signature(benchmark).parameters.items()}
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())  # unwrapped
    stated = f"rounds={defaults['rounds']}, warmup={defaults['warmup']})`"
    assert f"benchmark(program, specs, golden, {stated} (those are the defaults)" in text
    assert f"benchmark(ir.compile(P), [a, b, c], {stated} (the same defaults)" in text


KERNEL_BLOCKS = [b for b in ALL_BLOCKS if b.mark == "kernel"]


def _fragment(block):
    return Fragment(block.where, block.text, parse_declarations(block.reason, block.where))


@pytest.mark.parametrize("block", KERNEL_BLOCKS, ids=lambda b: b.where)
def test_kernel_examples_compile(block, tmp_path):
    """Each op example, with its declarations, is the body of a kernel that compiles."""
    try:
        check_fragment(_fragment(block), tmp_path)
    except ValueError as e:
        pytest.fail(str(e), pytrace=False)


def test_kernel_examples_run(tmp_path):
    """Every op example runs, in one program: on the device and in the reference interpreter,
    each value it assigns stored into an output of its own, the two runs agreeing."""
    fragments = []
    for i, block in enumerate(KERNEL_BLOCKS):
        try:
            fragments.append(check_fragment(_fragment(block), tmp_path / f"compile-{i}"))
        except ValueError:
            continue  # test_kernel_examples_compile names it
    assert fragments
    text, result = run_fragments(fragments, tmp_path / "out")
    kernels = "\n".join(f"{f.kernel}: {f.where}" for f in fragments)
    assert result.passed, (f"{result.error}\nkernels: \n{kernels}\n--- program ---\n{text}")
