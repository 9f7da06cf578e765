"""Reading the text summaries a program prints (pipeline_profile.txt's format): which profiles a
stream holds and which stages each one shows."""

import re

HEADER = "PyPTO Compile Profile"
# "  name   1.23ms  (45.6%)  ..." : the indent, the name (which may hold spaces, e.g.
# "verify (11×)"), then the time column.
_STAGE_LINE = re.compile(r"^( +)(\S.*?)\s{2,}[0-9.]+(?:ns|µs|ms|s)\s+\(")


def profiles(text):
    """The summaries in `text`, each as a list of (depth, name) of its stage lines; depth 0 is a
    root stage. Lines that are not part of a summary are skipped."""
    found = []
    for line in text.splitlines():
        if line == HEADER:
            found.append([])
            continue
        match = _STAGE_LINE.match(line)
        if found and match:
            found[-1].append((len(match.group(1)) // 2 - 1, match.group(2)))
    return found


def root_stages(profile):
    return [name for depth, name in profile if depth == 0]


def stage_names(profile):
    return {name for _, name in profile}
