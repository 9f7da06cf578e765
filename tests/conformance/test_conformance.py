"""Every program of tests/conformance/programs does what its header says (runner.py): the
constructs marked `works` parse, compile and match their numpy golden; the ones marked
`unsupported` fail with the compiler's located error naming the construct, or, where the header
records a generic error, fail at all. An `unsupported` program that works fails its test with
"now works: mark it works"."""

import pytest

import runner

PROGRAMS = runner.program_files(runner.DEFAULT_FOLDER)


def test_the_folder_has_programs_of_both_kinds():
    expectations = {runner.read_header(p).expect for p in PROGRAMS}
    assert len(PROGRAMS) >= 40 and expectations == {"works", "unsupported"}


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_does_what_its_header_says(path):
    header, verdict = runner.check(path)
    assert verdict.ok, f"{path.name} ({header.construct}): {verdict.message}"


def test_the_language_reference_carries_the_current_table():
    text = runner.DOC.read_text(encoding="utf-8")
    headers = [runner.read_header(p) for p in PROGRAMS]
    assert text == runner.doc_with_table(text, headers), (
        "docs/language-reference.md's conformance table is stale: run "
        "python tests/conformance/runner.py --write-doc")
