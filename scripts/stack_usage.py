#!/usr/bin/env python3
"""Stack frames of the functions in the sources named, as GCC's -fstack-usage reports them.

    scripts/stack_usage.py [-p BUILD_DIR] SOURCE...   (BUILD_DIR: build/desktop by default)

Each source is compiled again with its command from BUILD_DIR/compile_commands.json plus
-fstack-usage, into a temporary folder (the build is left as it is); prints one line per
function, "BYTES KIND FUNCTION", largest first. A frame is one function's own; a call chain's
stack is the sum of the frames along it (docs/performance.md).
"""

import json
import os
import shlex
import subprocess
import sys
import tempfile


def main(argv):
    build = "build/desktop"
    if argv[:1] == ["-p"] and len(argv) > 1:
        build, argv = argv[1], argv[2:]
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        commands = {os.path.realpath(e["file"]): e for e in json.load(f)}
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for n, source in enumerate(argv):
            entry = commands.get(os.path.realpath(source))
            if entry is None:
                print(f"stack_usage: {source} is not in {build}/compile_commands.json", file=sys.stderr)
                return 1
            args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
            args = list(args)
            args[args.index("-o") + 1] = os.path.join(out, f"{n}.o")
            args.insert(1, "-fstack-usage")
            subprocess.run(args, cwd=entry["directory"], check=True)
            with open(os.path.join(out, f"{n}.su"), encoding="utf-8") as su:
                for line in su:
                    where, size, kind = line.rstrip("\n").split("\t")
                    rows.append((int(size), kind, where.split(":", 3)[-1]))
    for size, kind, function in sorted(rows, key=lambda r: -r[0]):
        print(f"{size} {kind} {function}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
