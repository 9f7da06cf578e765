"""Frontend speed: parsing a generated DSL program of >= 10,000 lines into typed IR (C++ lexer,
parser, op type checks) against CPython's ast.parse of the same text (syntax tree only).

The two parsers are timed in the same rounds (round k: ast.parse and pypto back to back, the
order alternating; see bench_rounds.py); the figures are medians over the rounds and their ratio.

Run after `pip install .`:  python bench/parse_vs_ast_bench.py [--lines 10000] [--rounds 7]
"""

import argparse
import ast
import sys
import time

from bench_rounds import interleaved, medians

HEADER = '''"""Generated benchmark program."""
import pypto.language as pl

N = 64
HALF = N // 2


@pl.program
class BenchProgram:
'''

KERNEL = '''    @pl.function(type=pl.FunctionType.InCore)
    def kernel_{i}(
        self,
        x: pl.Tensor[[N, N], pl.FP32],
        w: pl.Tensor[[N, N], pl.FP32],
        y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        """Kernel {i}: a softmax-like chain and a K-split matmul."""
        t = pl.load(x, [0, 0], [N, N])
        scratch = pl.create_tile([N, 1], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        peak: pl.Tile[[N, 1], pl.FP32] = pl.row_max(t, scratch)
        e = pl.exp(pl.row_expand_sub(t, peak))
        total = pl.row_sum(e, scratch)
        s = pl.row_expand_div(e, total)
        s = pl.add(pl.mul(s, 0.5), 1.0)  # rebinding keeps the Var
        a0 = pl.load(x, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(w, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left),
                        pl.move(b0, target_memory=pl.MemorySpace.Right))
        for k in pl.range(1, 4):
            ak = pl.load(x, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(w, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                pl.move(bk, target_memory=pl.MemorySpace.Right))
        if k * 2 + 1 > HALF:
            s = pl.sub(s, pl.recip(pl.add(s, 2.0)))
        y = pl.store(s, [0, 0], y)
        return y

'''

MAIN_HEAD = '''    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[N, N], pl.FP32],
        w: pl.Tensor[[N, N], pl.FP32],
        y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ) -> pl.Tensor[[N, N], pl.FP32]:
'''


def generate(min_lines):
    parts = [HEADER]
    calls = []
    lines = HEADER.count("\n") + MAIN_HEAD.count("\n") + 1
    i = 0
    while lines < min_lines:
        parts.append(KERNEL.format(i=i))
        calls.append(f"        y = self.kernel_{i}(x, w, y)\n")
        lines += KERNEL.count("\n") + 1
        i += 1
    parts.append(MAIN_HEAD)
    parts.extend(calls)
    parts.append("        return y\n")
    return "".join(parts), i


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (medians)")
    args = parser.parse_args()

    from pypto import _core

    text, kernels = generate(args.lines)
    n_lines = text.count("\n")
    programs = _core.ir.parse_module(text, "bench.py", {})
    assert len(programs) == 1 and len(programs[0].functions) == kernels + 1
    ast.parse(text)

    # CPU time of this process (both parsers run on the calling thread) is the primary figure:
    # it stays meaningful on a loaded machine, where wall-clock time mostly measures waiting.
    def timed(fn, timer):
        def timing():
            start = timer()
            fn()
            return timer() - start
        return timing

    def run_pypto():
        return _core.ir.parse_module(text, "bench.py", {})

    def run_ast():
        return ast.parse(text, "bench.py")

    print(f"program: {n_lines} lines, {len(text)} bytes, {kernels + 1} functions")
    print(f"medians of {args.rounds} interleaved rounds")
    ratio = None
    for label, timer in (("cpu", time.process_time), ("wall", time.perf_counter)):
        t_ast, t_pypto, _ = medians(*interleaved(timed(run_ast, timer), timed(run_pypto, timer),
                                                 args.rounds))
        print(f"[{label}] CPython ast.parse      : {t_ast * 1e3:8.2f} ms "
              f"{n_lines / t_ast:12,.0f} lines/s  (anchor)")
        print(f"[{label}] pypto parse + typed IR : {t_pypto * 1e3:8.2f} ms "
              f"{n_lines / t_pypto:12,.0f} lines/s")
        print(f"[{label}] speed-up               : {t_ast / t_pypto:8.2f}x  (target >= 5x)")
        ratio = ratio or t_ast / t_pypto
    return 0 if ratio >= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
