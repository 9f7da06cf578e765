"""The hostile-program suite: programs written to break the compiler, by class.

Each program is a Python module defining one ``@pl.program`` class, with a first line saying what
must happen to it::

    # expect: compile-error <text>   pypto compile fails; its message contains <text>
    # expect: run-error <text>       compiles; pypto run fails with <text> in its output
    # expect: ok                     compiles and runs

``write_suite(directory)`` writes them all (``<class>/<name>.py``; some are large, so they are
generated rather than stored); ``tests/python/test_hostile.py`` runs each one through every way
into the compiler, and ``python3 generate.py --corpus DIR`` writes the small ones as the
fuzzer's seed corpus.
"""

import pathlib
import sys

I64_MAX = 2**63 - 1

SIG = ("self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]"
       ") -> pl.Tensor[[64, 64], pl.FP32]")

LOAD = "t = pl.load(a, [0, 0], [64, 64])"
STORE = "c = pl.store(t, [0, 0], c)"


def program(kernel_body, main_body="c = self.k(a, c)", prelude="", kernel_sig=SIG, main_sig=SIG,
            doc=""):
    """A module with one InCore kernel `k` and an orchestration `main`."""
    def indent(body):
        return "\n".join("        " + line if line else "" for line in body.split("\n"))

    return (f"import pypto.language as pl\n{prelude}\n\n@pl.program\nclass P:\n{doc}"
            f"    @pl.function(type=pl.FunctionType.InCore)\n    def k({kernel_sig}:\n"
            f"{indent(kernel_body)}\n        return c\n\n"
            f"    @pl.function(type=pl.FunctionType.Orchestration)\n    def main({main_sig}:\n"
            f"{indent(main_body)}\n        return c\n")


def kernel(*lines, **kw):
    return program("\n".join(lines), **kw)


def scalar_sig(extra):
    return ("self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]], "
            f"{extra}) -> pl.Tensor[[64, 64], pl.FP32]")


def cases():
    """(class, name, expectation, text or bytes)."""
    out = []

    def add(cls, name, expect, text):
        out.append((cls, name, expect, text))

    oob = "compile-error out of bounds"
    # 1. Offsets near INT64_MAX: a located error, never a wrapped bounds check.
    for i, offs in enumerate([f"[0, {I64_MAX}]", f"[{I64_MAX}, 0]", "[0, 9223372036854775744]",
                              "[4611686018427387904, 4611686018427387904]", "[-1, 0]",
                              f"[0, {I64_MAX} - 10]"]):
        add("offset_store", f"store_{i}", oob, kernel(LOAD, f"c = pl.store(t, {offs}, c)"))
        add("offset_load", f"load_{i}", oob,
            kernel(f"t = pl.load(a, {offs}, [64, 64])", STORE))
    for i, offs in enumerate([f"[0, {I64_MAX}]", f"[{I64_MAX}, {I64_MAX}]", "[0, 4611686018427387904]",
                              "[-9223372036854775807, 0]", "[1, 0]"]):
        add("offset_tile_slice", f"slice_{i}", oob,
            kernel(LOAD, f"s = pl.slice(t, [64, 64], {offs})", "c = pl.store(s, [0, 0], c)"))
        add("offset_tensor_slice", f"slice_{i}", oob,
            program(LOAD + "\n" + STORE, main_body=f"v = pl.slice(a, [64, 64], {offs})\n"
                    "c = self.k(v, c)"))
        add("offset_assemble", f"assemble_{i}", oob,
            kernel(LOAD, f"u = pl.assemble(t, t, {offs})", "c = pl.store(u, [0, 0], c)"))

    # 2. Run-time offsets leaving the tensor: a device-side bounds fault, reported as such.
    runtime_sig = scalar_sig("o: pl.Scalar[pl.INT64]")
    # `pypto run` checks against the reference interpreter, which faults first (the same
    # rule); tests/python/test_compiler_limits.py runs the device path with a golden.
    fault = "run-error exceed"
    for i, value in enumerate([I64_MAX, I64_MAX - 32, 2**62, -1, 64, -I64_MAX]):
        add("offset_runtime", f"store_{i}", fault,
            program(f"{LOAD}\nc = pl.store(t, [0, o], c)", main_body=f"c = self.k(a, c, {value})",
                    kernel_sig=runtime_sig))
        add("offset_runtime", f"load_{i}", fault,
            program(f"t = pl.load(a, [o, 0], [64, 64])\n{STORE}",
                    main_body=f"c = self.k(a, c, {value})", kernel_sig=runtime_sig))
    for i, mul in enumerate([2**62, 2**61 + 1, 2**40]):
        add("offset_runtime_loop", f"loop_{i}", fault,
            program(f"{LOAD}\nc = pl.store(t, [0, o], c)",
                    main_body=f"for i in pl.range(3):\n    c = self.k(a, c, i * {mul})",
                    kernel_sig=runtime_sig))
        add("offset_runtime_view", f"view_{i}", "run-error exceed",
            program(f"{LOAD}\n{STORE}",
                    main_body=f"for i in pl.range(3):\n    v = pl.slice(a, [64, 64], [i * {mul}, 0])"
                    "\n    c = self.k(v, c)"))

    # 3. Tile and tensor sizes whose byte count overflows, or that exceed the memory spaces.
    overflow = "compile-error integer overflow in the size"
    for i, (shape, dtype) in enumerate([("[4294967296, 4294967296]", "FP32"),
                                        ("[2305843009213693952, 1]", "INT32"),
                                        ("[4611686018427387904, 2]", "FP16"), (f"[{I64_MAX}, {I64_MAX}]", "FP32"),
                                        ("[2147483648, 2147483648, 4]", "INT64"),
                                        ("[1152921504606846976, 8]", "BOOL")]):
        add("tile_size_overflow", f"create_{i}", overflow,
            kernel(f"z = pl.create_tile({shape}, dtype=pl.{dtype})", LOAD, STORE))
        add("tensor_size_overflow", f"param_{i}", overflow,
            kernel(LOAD, STORE, kernel_sig=scalar_sig(f"x: pl.Tensor[{shape}, pl.{dtype}]")))
        add("tensor_size_overflow", f"create_{i}", overflow,
            program(LOAD + "\n" + STORE,
                    main_body=f"x = pl.create_tensor({shape}, dtype=pl.{dtype})\nc = self.k(a, c)"))
    for i, shape in enumerate(["[1048576, 1048576]", "[512, 512]", "[65536, 64]", "[1099511627776, 1048576]"]):
        add("tile_capacity", f"create_{i}", "compile-error does not fit in Vec",
            kernel(f"z = pl.create_tile({shape}, dtype=pl.FP32)", LOAD,
                   "u = pl.assemble(z, t, [0, 0])",
                   "c = pl.store(pl.slice(u, [64, 64], [0, 0]), [0, 0], c)"))

    # 4. Shapes that are not positive integers.
    for i, shape in enumerate(["[128.7, 64]", "[64.0, 64]", "[1e3, 64]", "[True, 64]", "[N, 64]",
                               "[64, -64]", "[0, 64]", "[64 // 0, 64]", "[BIG * BIG, 1]",
                               "[-BIG * BIG, 1]"]):
        expect = "compile-error " + ("integer overflow" if "BIG" in shape else "")
        add("shape_values", f"annotation_{i}", expect,
            kernel(LOAD, STORE, prelude="N = 64.5\nBIG = 1099511627776",
                   kernel_sig=scalar_sig(f"x: pl.Tensor[{shape}, pl.FP32]")))
        add("shape_values", f"op_{i}", expect,
            kernel(f"z = pl.create_tile({shape}, dtype=pl.FP32)", LOAD, STORE,
                   prelude="N = 64.5\nBIG = 1099511627776"))

    # 5. Trip counts: no hang, no silently dropped loop.
    trip_counts = {
        "unroll": [("-9223372036854775807, 9223372036854775807", "compile-error budget"),
                   ("0, 9223372036854775807, 4611686018427387904", "ok"),
                   ("0, 9223372036854775807, 4611686018427387905", "ok"),
                   ("9223372036854775807, -9223372036854775807, -4611686018427387904", "ok"),
                   ("9223372036854775807", "compile-error budget"),
                   ("0, 10, 0", "compile-error step must not be zero"),
                   ("-9223372036854775807 - 1, 9223372036854775807, 1", "compile-error budget"),
                   ("10, 0", "ok")],
        "range": [("0, 9223372036854775807, 4611686018427387904", "ok"),
                  ("9223372036854775807, 0, -4611686018427387904", "ok"),
                  ("-9223372036854775807, 9223372036854775807, 9223372036854775807", "ok"),
                  ("0, 10, 0", "compile-error step")],
    }
    for loop, loop_cases in trip_counts.items():
        for i, (args, expect) in enumerate(loop_cases):
            add(f"{loop}_trip_count", f"{loop}_{i}", expect,
                kernel(LOAD, f"for i in pl.{loop}({args}):", "    t = pl.add(t, 1.0)", STORE))

    # 6. Budgets: unrolling that would make the program too large fails with the limit named.
    for i, (loops, body, expect) in enumerate([
            (["pl.unroll(25000)"], "y = x * 3 + i", "ok"),
            (["pl.unroll(300000)"], "y = x * 3 + i", "compile-error PYPTO_MAX_STATEMENTS"),
            (["pl.unroll(60000)", "pl.unroll(60000)"], "y = x * 3 + i",
             "compile-error PYPTO_MAX_STATEMENTS"),
            (["pl.unroll(1000)", "pl.unroll(1000)", "pl.unroll(1000)"], "y = i",
             "compile-error PYPTO_MAX_STATEMENTS"),
            (["pl.unroll(200)", "pl.unroll(200)", "pl.unroll(200)"], "pass",
             "compile-error PYPTO_MAX_STATEMENTS"),
            (["pl.unroll(1000000000)"], "pass", "compile-error PYPTO_MAX_STATEMENTS")]):
        lines = []
        for depth, loop in enumerate(loops):
            var = "i" if depth == len(loops) - 1 else f"j{depth}"
            lines.append("    " * depth + f"for {var} in {loop}:")
        lines.append("    " * len(loops) + body)
        add("unroll_budget", f"budget_{i}", expect,
            program(LOAD + "\n" + STORE, main_body="x = 1\n" + "\n".join(lines) + "\nc = self.k(a, c)"))

    # 7. Deep nesting (10^5 levels) of every kind the parser and the IR have.
    deep = 100000
    nested = "compile-error too deeply nested"
    add("deep_nesting", "parens", nested, kernel(LOAD, "x = " + "(" * deep + "1" + ")" * deep, STORE))
    add("deep_nesting", "unary", nested, kernel(LOAD, "x = " + "-" * deep + "1", STORE))
    add("deep_nesting", "calls", nested,
        kernel(LOAD, "u = " + "pl.neg(" * deep + "t" + ")" * deep, STORE))
    add("deep_nesting", "lists", nested,
        kernel("t = pl.load(a, " + "[" * deep + "0" + "]" * deep + ", [64, 64])", STORE))
    add("deep_nesting", "subscripts", "compile-error only tuple values can be indexed",
        kernel(LOAD, "n = 1", "x = n" + "[0]" * deep, STORE))
    # Indentation makes blocks quadratic in text: 3000 levels, one tab each.
    ifs = [LOAD] + ["\t" * d + "if 1 < 2:" for d in range(3000)] + ["\t" * 3000 + "pass", STORE]
    add("deep_nesting", "ifs", nested, kernel(*ifs))
    loops = [LOAD] + ["\t" * d + f"for i{d} in pl.range(1):" for d in range(3000)]
    add("deep_nesting", "loops", nested, kernel(*(loops + ["\t" * 3000 + "pass", STORE])))
    scopes = ["\t" * d + "with pl.at(level=pl.Level.CORE_GROUP):" for d in range(3000)]
    add("deep_nesting", "scopes", nested,
        program(LOAD + "\n" + STORE, main_body="\n".join(scopes + ["\t" * 3000 + "pass",
                                                                     "c = self.k(a, c)"])))
    add("deep_nesting", "chain_add", "compile-error expression too long",
        kernel(LOAD, "x = 1" + " + 1" * deep, STORE))
    add("deep_nesting", "chain_tile", "compile-error expected a scalar operand",
        kernel(LOAD, "u = t" + " + t" * deep, STORE))
    add("deep_nesting", "chain_compare", "compile-error expression too long",
        kernel(LOAD, "x = 1" + " < 2" * (deep // 10), STORE))  # Python's compile is slow here
    add("deep_nesting", "chain_and", "compile-error expression too long",
        kernel(LOAD, "x = True" + " and True" * (deep // 10), STORE))
    for depth in (50, 95):
        add("deep_nesting", f"parens_{depth}", "ok",
            kernel(LOAD, "x = " + "(" * depth + "1" + ")" * depth, STORE))
    add("deep_nesting", "fold_chain", "ok",
        program(LOAD + "\n" + STORE,
                main_body="x = 1\nfor i in pl.unroll(20000):\n    x = x * 3 + i\nc = self.k(a, c)"))
    add("deep_nesting", "tile_chain", "ok",
        kernel(LOAD, "for i in pl.unroll(5000):", "    t = pl.add(pl.mul(t, 3.0), 1.0)", STORE))

    # 8. Program size: many statements compile (in seconds, not minutes).
    # (50,000 statements compile in seconds: test_compiler_limits.py times that.)
    stmts = [LOAD] + [f"x{i} = {i} * 2 + 1" for i in range(20000)] + [STORE]
    add("program_size", "statements_20000", "ok", kernel(*stmts))
    add("program_size", "statements_210000", "compile-error PYPTO_MAX_STATEMENTS",
        kernel(*([LOAD] + ["x = 1"] * 210000 + [STORE])))
    add("program_size", "tiles_5000", "ok",
        kernel(*([LOAD] + ["t = pl.add(t, 1.0)"] * 5000 + [STORE])))
    add("program_size", "long_line", "",
        kernel(LOAD, "x = [" + ", ".join(["1"] * 200000) + "]", STORE))
    add("program_size", "many_functions", "ok",
        "import pypto.language as pl\n\n\n@pl.program\nclass P:\n" + "".join(
            f"    @pl.function(type=pl.FunctionType.InCore)\n    def k{i}({SIG}:\n"
            f"        {LOAD}\n        {STORE}\n        return c\n\n" for i in range(300))
        + f"    @pl.function(type=pl.FunctionType.Orchestration)\n    def main({SIG}:\n"
        + "".join(f"        c = self.k{i}(a, c)\n" for i in range(300)) + "        return c\n")

    # 9. Bytes that are not UTF-8, NUL bytes, and non-ASCII text.
    base = kernel(LOAD, STORE).encode()
    for i, (where, junk) in enumerate([("comment", b"# \xff\xfe bad\n"),
                                       ("overlong", b"# \xc0\xaf\n"),
                                       ("surrogate", b"# \xed\xa0\x80\n"),
                                       ("truncated", b"# \xe2\x82\n"),
                                       ("latin1", b"# caf\xe9\n")]):
        add("non_utf8", f"{where}_{i}", "", junk + base)
    add("non_utf8", "in_string", "",
        base.replace(b"@pl.program", b'X = "\xff"\n\n\n@pl.program'))
    add("non_utf8", "nul_byte", "compile-error", base.replace(b"t = pl.load", b"t =\x00 pl.load"))
    add("non_utf8", "nul_comment", "", b"# \x00\n" + base)
    add("non_utf8", "bom", "", b"\xef\xbb\xbf" + base)
    # Invalid UTF-8 in names that reach the outputs (kernel_config.json, generated code).
    add("non_utf8", "kernel_name", "ok", base.replace(b"def k(", b"def k\xff(").replace(
        b"self.k(", b"self.k\xff("))
    add("non_utf8", "param_name", "ok", base.replace(b"a: pl.Tensor", b"a\xfe: pl.Tensor").replace(
        b"pl.load(a,", b"pl.load(a\xfe,").replace(b"self.k(a,", b"self.k(a\xfe,"))

    # 10. Columns count characters: the caret stands under the offending character.
    for i, name in enumerate(["\u00e9l\u00e9ment", "\u53d8\u91cf", "\u0394x", "\U0001d465"]):
        add("utf8_columns", f"name_{i}", "compile-error expected Tile or Tensor, got Scalar",
            kernel(LOAD, f"{name} = 1  # \u00fc\u00f1\u00ee", f"u = pl.exp({name})", STORE))
        add("utf8_columns", f"string_{i}", "compile-error",
            kernel(LOAD, f's = "{name}"; u = pl.add(s, t)', STORE))

    # 11. Where errors are reported: docstrings quoting `class P:` and other look-alikes.
    for i, doc in enumerate(['    """Example:\n\nclass P:\n    pass\n"""\n',
                             '    """\n    class P:\n    """\n',
                             "    '''class P(object):'''\n",
                             '    """class P: x = 1"""\n']):
        add("docstring_class", f"doc_{i}", "compile-error got Tile in argument 2 of pl.add",
            program(f"{LOAD}\nu = pl.add(a, t)\n{STORE}", doc=doc))

    # 12. Literals and constants that overflow.
    for i, lit in enumerate(["99999999999999999999", "2**64", "-2**63 - 1", "9223372036854775808",
                             f"{I64_MAX} + 1", f"-{I64_MAX} - 2", "2**63 // 1", "1 << 64"]):
        add("literal_overflow", f"offset_{i}", "compile-error",
            kernel(f"t = pl.load(a, [0, {lit}], [64, 64])", STORE))
        add("literal_overflow", f"shape_{i}", "compile-error",
            kernel(f"z = pl.create_tile([{lit}, 1], dtype=pl.FP32)", LOAD, STORE))

    # 13. Hostile MemRef annotations in program text (as the printer writes them).
    for i, (size, addr) in enumerate([(I64_MAX, 0), (16384, I64_MAX), (I64_MAX, I64_MAX),
                                      (-1, -1), (16384, 2**62)]):
        add("memref_annotation", f"memref_{i}", "",
            kernel(f"t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(0, {size}, {addr})]"
                   " = pl.load(a, [0, 0], [64, 64])", STORE))

    # 14. Division and modulo by zero in constants.
    for i, expr in enumerate(["64 // 0", "64 % 0", "64 / 0", "1.0 / 0.0", "(-2**63) // -1"]):
        add("division_by_zero", f"offset_{i}", "compile-error",
            kernel(f"t = pl.load(a, [0, {expr}], [64, 64])", STORE))

    # Run-time division by zero: a fault on the device as in the interpreter.
    div_sig = scalar_sig("z: pl.Scalar[pl.INT64]")
    for i, expr in enumerate(["64 // z", "64 % z", "(z + 64) // (z * 0)"]):
        add("division_by_zero", f"runtime_{i}", "run-error by zero",
            program(f"t = pl.load(a, [0, {expr}], [64, 64])\n{STORE}",
                    main_body="c = self.k(a, c, 0)", kernel_sig=div_sig))

    # 15. Type errors and misuse of ops.
    for i, line in enumerate(["u = pl.add(a, t)", "u = pl.matmul(t, a)", "u = pl.load(t, [0, 0], [64, 64])",
                              "u = pl.store(a, [0, 0], c)", "u = pl.row_max(t, t, t)",
                              "u = pl.cast(t, target_type=pl.Tile)", "u = pl.add(t)",
                              "u = pl.add(t, t, t)", "u = pl.exp(1)", "u = pl.move(t)"]):
        add("op_misuse", f"op_{i}", "compile-error", kernel(LOAD, line, STORE))

    # 16. Syntax the DSL does not have, and broken syntax.
    for i, line in enumerate(["x = lambda: 1", "x = (y := 1)", "x = 1 if True else 2",
                              "x = [i for i in t]", "x = [i for i in range(3) if i]",
                              "x = {1: 2}", "x = 2 ** 3", "x = ~1",
                              "try:\n    pass\nexcept Exception:\n    pass", "x = (1", "x = 1)", "\tx = 1",
                              "x = '''unterminated", "import os", "global x", "x = 1 ; ; y = 2",
                              "def f(): pass", "x = yield 1", "assert False", "del t", "x = ..."]):
        add("syntax", f"line_{i}", "compile-error", kernel(LOAD, line, STORE))

    # 17. Recursion between functions, and calls of unknown functions.
    rec = ("import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
           f"    @pl.function(type=pl.FunctionType.Orchestration)\n    def main({SIG}:\n"
           "        c = self.main(a, c)\n        return c\n")
    add("recursion", "self_call", "compile-error", rec)
    add("recursion", "unknown", "compile-error", program(LOAD + "\n" + STORE, main_body="c = self.nope(a, c)"))
    add("recursion", "kernel_self", "compile-error", kernel(LOAD, STORE, "c = self.k(a, c)"))

    # 18. Tuple indices and multi-result calls.
    two = ("self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]], "
           "d: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> tuple[pl.Tensor[[64, 64], pl.FP32], "
           "pl.Tensor[[64, 64], pl.FP32]]")
    for i, index in enumerate(["2", "-3", str(I64_MAX), "99999999999999999999", "0.5"]):
        add("tuple_index", f"index_{i}", "compile-error",
            program(LOAD + "\n" + STORE, main_body=f"r = self.k(a, c)\nc = r[{index}]"))
    add("tuple_index", "not_a_tuple", "compile-error", kernel(LOAD, "n = 1", "x = n[0]", STORE))
    add("tuple_index", "bad_return", "compile-error",
        kernel(LOAD, STORE, kernel_sig=two))

    # 19. Constants from the module that are not what a shape or offset needs.
    for i, value in enumerate(["1e308 * 10", "float('nan')", "-0.0", "True", "2.5",
                               str(I64_MAX), "-" + str(I64_MAX)]):
        add("module_constants", f"const_{i}", "compile-error",
            kernel(LOAD, "c = pl.store(t, [0, K], c)", prelude=f"K = {value}"))

    # 20. pl.yield_ and init_values used wrongly.
    for i, lines in enumerate([
            ["for i, (x,) in pl.range(2, init_values=(t,)):", "    y = pl.add(x, 1.0)"],
            ["for i, (x,) in pl.range(2, init_values=(t,)):", "    y = pl.yield_(x, x)"],
            ["y = pl.yield_(t)"],
            ["for i, (x, z) in pl.range(2, init_values=(t,)):", "    w = pl.yield_(x)"],
            ["for i, (x,) in pl.unroll(3, init_values=(t,)):", "    w = pl.yield_(1)"]]):
        add("yield_misuse", f"yield_{i}", "compile-error", kernel(LOAD, *lines, STORE))

    # 21. Scopes in the wrong place or of the wrong kind.
    for i, (where, line) in enumerate([("kernel", "with pl.at(level=pl.Level.CORE_GROUP):"),
                                       ("main", "with pl.at(level=pl.Level.NOPE):"),
                                       ("main", "with pl.at():"), ("main", "with open('x'):")]):
        body = f"{line}\n    x = 1"
        if where == "kernel":
            add("scope_misuse", f"scope_{i}", "", kernel(LOAD, body, STORE))
        else:
            add("scope_misuse", f"scope_{i}", "compile-error",
                program(LOAD + "\n" + STORE, main_body=body + "\nc = self.k(a, c)"))

    # 22. Matmul shapes that do not agree or overflow.
    for i, (l, r) in enumerate([("[64, 32]", "[64, 32]"), ("[1, 4611686018427387904]", "[1, 2]"),
                                ("[64, 64]", "[32, 64]")]):
        add("matmul_shapes", f"matmul_{i}", "compile-error",
            kernel(f"x = pl.create_tile({l}, dtype=pl.FP32, target_memory=pl.MemorySpace.Left)",
                   f"y = pl.create_tile({r}, dtype=pl.FP32, target_memory=pl.MemorySpace.Right)",
                   "z = pl.matmul(x, y)", "c = pl.store(z, [0, 0], c)"))

    # 23. Degenerate programs.
    add("degenerate", "empty", "compile-error", "")
    add("degenerate", "no_program", "compile-error", "import pypto.language as pl\nX = 1\n")
    add("degenerate", "empty_class", "compile-error",
        "import pypto.language as pl\n\n\n@pl.program\nclass P:\n    pass\n")
    add("degenerate", "two_programs", "", kernel(LOAD, STORE) + kernel(LOAD, STORE).replace(
        "import pypto.language as pl\n", "").replace("class P", "class Q"))
    add("degenerate", "only_main", "",
        "import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
        f"    @pl.function(type=pl.FunctionType.Orchestration)\n    def main({SIG}:\n"
        "        return c\n")
    return out


def write_suite(directory, max_bytes=None):
    """Writes the suite under `directory`; returns [(path, class, expectation)]."""
    directory = pathlib.Path(directory)
    written = []
    for cls, name, expect, text in cases():
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        if max_bytes is not None and len(data) > max_bytes:
            continue
        path = directory / cls / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"# expect: {expect}\n".encode() + data)
        written.append((path, cls, expect))
    return written


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--corpus":
        # The fuzzer's seed corpus: the small programs, without the expectation line.
        target = pathlib.Path(sys.argv[2])
        target.mkdir(parents=True, exist_ok=True)
        n = 0
        for cls, name, _expect, text in cases():
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            if len(data) <= 4096:
                (target / f"hostile_{cls}_{name}.py").write_bytes(data)
                n += 1
        print(f"{n} programs written to {target}")
    else:
        suite = write_suite(sys.argv[1] if len(sys.argv) > 1 else "hostile_suite")
        print(f"{len(suite)} programs in {len({c for _, c, _ in suite})} classes")
