"""Hostile inputs and outputs for the `pypto profile` tool: malformed, lying or oversized profile
files, and output targets a writer must not replace (a symlink, a FIFO, a device, `-`).

Every case is (class, name, how to make it). The test (tests/python/test_hostile_profiles.py)
runs each through `pypto profile show|diff|convert|html` and checks the tool's behaviour: no
signal, no hang, exit 0, 1 or 2, no library text, output bounded, no raw control bytes.
"""

import json
import os


def _stage(name="s", seconds=0.001, children=(), **extra):
    return dict({"name": name, "seconds": seconds, "children": list(children)}, **extra)


def _profile(stages, **extra):
    return dict({"total_seconds": 0.01, "stages": list(stages)}, **extra)


def _device(cores, tasks=()):
    return _profile([_stage("execute", device={"cores": cores, "begin": 0, "end": 1,
                                               "tasks": list(tasks)})])


def _nested(depth):
    head = '{"name": "x", "seconds": 0.1, "children": ['
    return '{"total_seconds": 1, "stages": [' + head * depth + "]}" * depth + "]}"


# (class, name, file text, expected: "ok", "error", "usage" or "any" (ok or error, each well
# behaved))
def cases():
    out = []

    def add(cls, name, text, expect):
        if not isinstance(text, (str, bytes)):
            text = json.dumps(text)
        out.append((cls, name, text, expect))

    add("depth", "nested_20000", _nested(20000), "error")
    add("depth", "nested_2000", _nested(2000), "error")
    add("depth", "nested_arrays", "[" * 100000 + "]" * 100000, "error")
    add("depth", "nested_objects", '{"a":' * 50000 + "1" + "}" * 50000, "error")
    for cores in [10000000, 2147483647, 4294967300, -1, 2 ** 64 - 1, 1.5, "4"]:
        add("counts", f"cores_{cores}", _device(cores), "error")
    add("counts", "task_core_huge", _device(2, [["k", 2 ** 32, 0, 1, -1]]), "error")
    add("counts", "waited_on_huge", _device(2, [["k", 0, 0, 1, 2 ** 63]]), "error")
    add("numbers", "total_1e400", '{"total_seconds": 1e400, "stages": []}', "error")
    add("numbers", "seconds_-1e400", '{"total_seconds": 1, "stages": [{"name": "a", '
        '"seconds": -1e400, "children": []}]}', "error")
    add("numbers", "rss_uint64", _profile([_stage(rss_bytes=2 ** 64 - 1, rss_growth_bytes=0)]),
        "error")
    add("numbers", "negative_seconds", _profile([_stage(seconds=-1)]), "error")
    add("numbers", "count_zero", _profile([_stage(count=0)]), "error")
    add("types", "stages_not_list", {"total_seconds": 1, "stages": {}}, "error")
    add("types", "name_number", _profile([_stage(name=5)]), "error")
    add("types", "children_missing", {"total_seconds": 1, "stages": [{"name": "a",
                                                                      "seconds": 1}]}, "error")
    add("types", "top_level_list", "[1, 2, 3]", "error")
    add("types", "empty_file", "", "error")
    add("types", "truncated", json.dumps(_profile([_stage()]))[:-7], "error")
    add("types", "binary", bytes(range(256)) * 64, "error")
    add("types", "invalid_utf8", b'{"total_seconds": 1, "stages": [{"name": "\xff\xfe", '
        b'"seconds": 1, "children": []}]}', "any")
    add("names", "terminal_escapes", _profile([_stage("evil\x1b[2J\x1b]0;title\x07\rname")],
                                              metadata={"program": "p\x1b[31mred"}), "ok")
    add("names", "c1_controls", _profile([_stage("a\u009b31mb\u0085c")]), "ok")
    add("names", "html_script", _profile([_stage("<!--<script>"), _stage("</script><b>")]),
        "ok")
    add("names", "error_escapes", _profile([_stage("f", failed=True, error="\x1b[2Jgone")]),
        "ok")
    add("names", "long_name", _profile([_stage("n" * 100000)]), "ok")
    add("size", "many_siblings", _profile([_stage(f"s{i % 7}") for i in range(20000)]), "ok")
    return out


# Special inputs: paths on the system, never written. A folder or a missing path is no file to
# read: a usage error ("usage": exit 2, before any work), as for every command of the tool.
SPECIAL_INPUTS = [("special", "dev_zero", "/dev/zero", "error"),
                  ("special", "dev_null", "/dev/null", "error"),
                  ("special", "folder", "/", "usage"),
                  ("special", "missing", "/nonexistent/profile.json", "usage")]


def write_cases(directory):
    """Writes every case under `directory`; returns [(class, name, path, expect)]."""
    os.makedirs(directory, exist_ok=True)
    written = []
    for cls, name, text, expect in cases():
        path = os.path.join(directory, f"{cls}_{name}.json")
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        written.append((cls, name, path, expect))
    return written + SPECIAL_INPUTS


# Output targets for `-o`: (name, how to prepare it under a folder, expected). Each writer must
# leave a link, pipe or device what it was and write into what it points at; "-" is stdout.
OUTPUT_TARGETS = [
    ("new_file", "out.txt", "file"),
    ("missing_parent", "new/sub/out.txt", "file"),
    ("regular_file", "existing.txt", "replaced"),
    ("symlink_to_file", "link_to_file", "through_link"),
    ("dangling_symlink", "dangling", "through_link"),
    ("symlink_to_dev_null", "null", "device"),
    ("fifo", "pipe", "fifo"),
    ("dash", "-", "stdout"),
    ("folder", "folder", "error"),
]


def prepare_output_target(directory, name):
    """Creates what target `name` needs under `directory`; returns the path to pass to -o."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, dict((n, p) for n, p, _ in OUTPUT_TARGETS)[name])
    if name == "regular_file":
        with open(path, "w") as f:
            f.write("old")
    elif name == "symlink_to_file":
        with open(os.path.join(directory, "target.txt"), "w") as f:
            f.write("old")
        os.symlink("target.txt", path)
    elif name == "dangling_symlink":
        os.symlink("dangling_target.txt", path)
    elif name == "symlink_to_dev_null":
        os.symlink("/dev/null", path)
    elif name == "fifo":
        os.mkfifo(path)
    elif name == "folder":
        os.mkdir(path)
    elif name == "dash":
        return "-"
    return path
