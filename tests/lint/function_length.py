#!/usr/bin/env python3
"""List the C functions longer than a limit (default 150 lines): the
host's rule is that none is.

A function runs from the first line of its declarator (the line before a
column-0 "{") to its column-0 "}". Usage: funclen.py [--max N] DIR|FILE...
Exit status 1 when any function is longer than the limit.
"""
import os
import re
import sys


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            # the declarator: back to the line that starts at column 0
            start = i - 1
            while start > 0 and lines[start][:1] in (" ", "\t"):
                start -= 1
            m = re.search(r"(\w+)\s*\(", lines[start])
            j = i + 1
            while j < len(lines) and lines[j] != "}" and \
                    not lines[j].startswith("};"):
                j += 1
            if m:
                yield m.group(1), start + 1, j - start + 1
            i = j
        i += 1


def main(argv):
    limit = 150
    if len(argv) > 1 and argv[1] == "--max":
        limit = int(argv[2])
        argv = argv[2:]
    bad = 0
    for top in argv[1:]:
        files = [top] if os.path.isfile(top) else sorted(
            os.path.join(d, n) for d, _, ns in os.walk(top) for n in ns
            if n.endswith(".c"))
        for path in files:
            for name, line, n in functions(path):
                if n > limit:
                    print(f"{path}:{line}: {name}: {n} lines")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
