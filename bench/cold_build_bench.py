"""Cold build of the examples' generated programs: the build as it was against the build as it is.

A cold ``run()`` of an example spends most of its time in ``binary_compilation``: the host C++
compiler building the generated translation unit into a library (95% of a cold ffn run). Two
changes cut that build, and this benchmark times the compiler command before and after them on
the same generated source, in interleaved rounds (bench_rounds.py), medians and their ratio:

- the link: a default build used to link the C++ library's defaults (libstdc++, libgcc_s), which
  generated code never uses; it now links libc, libm and libgcc only (binary_cache.cpp,
  default_link_libraries);
- a program with cross-core pipes used to include device/pto_pipe.h, whose simulation of the pipes
  needed the C++ thread library's headers (<thread>, <map>, <functional>, ...); the pipes are now
  runtime code (src/runtime/cluster_pipes.cpp) reached through the ISA table. "Before" for such a
  program is its generated source after those same standard headers, which is what the old header
  added to the compile (its own few hundred lines aside).

"After" is read from a run's profile metadata (``compiler``), so it is what the runtime really
runs; "before" is the previous defaults. Each side writes its own library; nothing is cached.

    python bench/cold_build_bench.py [--rounds 15] [--examples ../shared/examples]
"""

import argparse
import contextlib
import glob
import io
import os
import runpy
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_rounds import interleaved, medians, timed  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PIPE_PROGRAM = os.path.join(REPO, "tests", "conformance", "programs", "pipe_bidirectional.py")

BEFORE_FLAGS = ["-O2", "-fno-exceptions", "-shared", "-fPIC", "-std=c++17"]
OLD_PIPE_HEADERS = ["chrono", "condition_variable", "cstdlib", "algorithm", "cstring", "deque",
                    "functional", "map", "mutex", "set", "string", "thread", "utility", "vector"]


def programs(examples_dir):
    """(label, program class, specs, golden, uses pipes) of every example, then the pipe program."""
    from pypto.ir.program import Program

    found, seen = [], set()
    sys.path.insert(0, examples_dir)  # an example may import another
    for path in sorted(glob.glob(os.path.join(examples_dir, "*.py"))):
        with contextlib.redirect_stdout(io.StringIO()):  # what an example prints on import
            names = runpy.run_path(path, run_name="bench")
        for value in names.values():
            if isinstance(value, Program) and value.name not in seen:
                seen.add(value.name)
                found.append((os.path.basename(path), value, names.get("SPECS"), False))
    names = runpy.run_path(PIPE_PROGRAM, run_name="bench")
    found += [(os.path.basename(PIPE_PROGRAM), v, None, True) for k, v in names.items()
              if k == "PipeBoth"]
    return found


def after_command(program, specs, golden, work):
    """The compiler and flags the runtime uses (a profiled run's metadata) and the include dir."""
    from pypto.runtime import RunConfig, run

    result = run(program, specs, golden, RunConfig(compile_profiling=True, work_dir=work))
    words = shlex.split(result.profile["metadata"]["compiler"])
    include = glob.glob(os.path.join(os.environ["PYPTO_CACHE_DIR"], "include-*"))[0]
    return words, include


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--examples", default=os.path.join(REPO, "..", "shared", "examples"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="cold_build_bench_") as work:
        os.environ["PYPTO_CACHE_DIR"] = os.path.join(work, "cache")
        import pypto

        add = runpy.run_path(os.path.join(args.examples, "add.py"), run_name="bench")
        after_words, include = after_command(add["AddProgram"], add["SPECS"], add["golden"],
                                             os.path.join(work, "out"))
        compiler = after_words[0]
        after_flags = [w for w in after_words[1:] if not w.startswith(("-l", "-Wl,"))]
        after_libraries = [w for w in after_words[1:] if w.startswith(("-l", "-Wl,"))]
        print(f"cold build of each program's generated source, {args.rounds} interleaved rounds, "
              f"medians")
        print(f"  before: {compiler} {' '.join(BEFORE_FLAGS)}")
        print(f"  after:  {' '.join(after_words)}")
        print(f"{'program':<34} {'before':>10} {'after':>10} {'ratio':>7}")
        totals = [0.0, 0.0]
        for label, program, _specs, pipes in programs(args.examples):
            source = pypto.ir.compile(program, output_dir=os.path.join(work, "ir"),
                                      dump_passes=False).translation_unit
            src_after = os.path.join(work, f"{program.name}_after.cpp")
            src_before = os.path.join(work, f"{program.name}_before.cpp")
            with open(src_after, "w") as f:
                f.write(source)
            with open(src_before, "w") as f:
                if pipes:
                    f.write("".join(f"#include <{h}>\n" for h in OLD_PIPE_HEADERS))
                f.write(source)
            before_cmd = [compiler, *BEFORE_FLAGS, "-I" + include, src_before, "-o",
                          os.path.join(work, "before.so")]
            after_cmd = [compiler, *after_flags, "-I" + include, src_after, *after_libraries,
                         "-o", os.path.join(work, "after.so")]

            def build(cmd):
                return lambda: timed(lambda: subprocess.run(cmd, check=True))

            before_times, after_times = interleaved(build(before_cmd), build(after_cmd),
                                                    args.rounds)
            before, after, ratio = medians(before_times, after_times)
            if not pipes:
                totals[0] += before
                totals[1] += after
            name = f"{label}: {program.name}"
            print(f"{name:<34} {before * 1e3:>8.1f}ms {after * 1e3:>8.1f}ms {ratio:>6.2f}x")
        print(f"{'examples, sum of medians':<34} {totals[0] * 1e3:>8.1f}ms "
              f"{totals[1] * 1e3:>8.1f}ms {totals[1] / totals[0]:>6.2f}x")


if __name__ == "__main__":
    main()
