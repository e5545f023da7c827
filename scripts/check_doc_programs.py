#!/usr/bin/env python3
"""Checks README.md and docs/*.md: every relative link names a file that exists (and a heading
of it, when the link names one), and every block marked as a complete program compiles and
links against an installed stepback.

A complete program is a fenced block whose info string is `cpp program`; a plain `cpp` block
is a fragment and is not compiled. `cpp program PATH` (or `c program PATH`, `kotlin program
PATH`, ...) says the block is the file PATH of the tree (an example its tests build and run):
the two must be the same text, checked with the links. Each program becomes one executable of a small CMake
project that takes stepback the way the README tells a user to (find_package(stepback),
stepback::stepback), so what a reader copies is what is checked. Each file starts with a
#line directive: a diagnostic names the document and its line.

usage: check_doc_programs.py SOURCE_DIR --links-only
       check_doc_programs.py SOURCE_DIR --work DIR --cache FILE [--generator NAME] [--config CFG]

--cache is an initial cache for `cmake -C` naming the compilers, flags and stepback_DIR of the
install to build against (tests/consumers writes one: installed.cmake). The CTest test
docs.programs runs the second form; exit 1 when a link or a program fails.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys

FENCE = re.compile(r"^(`{3,}|~{3,})\s*(.*)$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?\1")


def documents(root):
    return [root / "README.md"] + sorted((root / "docs").glob("*.md"))


def blocks_and_prose(text):
    """Yields (kind, first line number, lines): kind is a fence's info string, or None for prose."""
    lines = text.split("\n")
    prose, prose_start = [], 1
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            prose.append(lines[i])
            i += 1
            continue
        yield None, prose_start, prose
        marker, info = m.group(1), m.group(2).strip()
        start = i + 2  # the block's first line, 1-based
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(marker):
            body.append(lines[i])
            i += 1
        yield info, start, body
        i += 1
        prose, prose_start = [], i + 1
    yield None, prose_start, prose


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, blanks to -."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    seen, found = {}, set()
    for info, _, lines in blocks_and_prose(path.read_text()):
        if info is not None:
            continue
        for line in lines:
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
    return found


def check_links(root):
    errors = []
    for doc in documents(root):
        for info, start, lines in blocks_and_prose(doc.read_text()):
            if info is not None:
                continue
            prose = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), "\n".join(lines))
            for m in LINK.finditer(prose):
                target = m.group(1).strip("<>")
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:
                line = start + prose.count("\n", 0, m.start())
                where = f"{doc.relative_to(root)}:{line}"
                path_part, _, anchor = target.partition("#")
                dest = (doc.parent / path_part).resolve() if path_part else doc
                if not dest.exists():
                    errors.append(f"{where}: link to {target}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    errors.append(f"{where}: link to {target}: no heading #{anchor} there")
    return errors


def check_copies(root):
    """Blocks marked `cpp program PATH` must be PATH's text, so that what a reader copies is
    the example the tests run."""
    errors = []
    for doc in documents(root):
        for info, start, lines in blocks_and_prose(doc.read_text()):
            words = info.split() if info is not None else []
            if len(words) < 3 or words[1] != "program":
                continue
            where = f"{doc.relative_to(root)}:{start}"
            source = root / words[2]
            if not source.is_file():
                errors.append(f"{where}: the block says it is {words[2]}, which does not exist")
            elif source.read_text() != "\n".join(lines) + "\n":
                errors.append(f"{where}: the block differs from {words[2]} (copy the file in)")
    return errors


def programs(root):
    found = []
    for doc in documents(root):
        for info, start, lines in blocks_and_prose(doc.read_text()):
            if info is not None and info.split()[:2] == ["cpp", "program"]:
                found.append((doc.relative_to(root), start, lines))
    return found


def check_programs(root, args):
    found = programs(root)
    if not found:
        return ["no block marked `cpp program` in README.md or docs/*.md (the README has one)"]
    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    (work / "src").mkdir(parents=True)
    targets = []
    cmake = [
        "cmake_minimum_required(VERSION 3.25)",
        "project(stepback_doc_programs LANGUAGES CXX)",
        "find_package(stepback 0.1 CONFIG REQUIRED)",
        "if(CMAKE_CXX_COMPILER_ID MATCHES \"GNU|Clang\")",
        "  add_compile_options(-Wall -Wextra -Werror)",
        "endif()",
    ]
    for doc, start, lines in found:
        name = re.sub(r"[^A-Za-z0-9]", "_", str(doc)) + f"_L{start}"
        source = work / "src" / f"{name}.cpp"
        source.write_text(f'#line {start} "{root / doc}"\n' + "\n".join(lines) + "\n")
        cmake.append(f"add_executable({name} src/{name}.cpp)")
        cmake.append(f"target_link_libraries({name} PRIVATE stepback::stepback)")
        targets.append((name, f"{doc}:{start}"))
    (work / "CMakeLists.txt").write_text("\n".join(cmake) + "\n")

    configure = ["cmake", "-S", str(work), "-B", str(work / "build"), "-C", args.cache]
    if args.generator:
        configure += ["-G", args.generator]
    if subprocess.run(configure).returncode != 0:
        return ["the programs' project did not configure (is the install there?)"]
    errors = []
    for name, where in targets:
        build = ["cmake", "--build", str(work / "build"), "--target", name]
        if args.config:
            build += ["--config", args.config]
        print(f"-- {where}: building {name}", flush=True)
        if subprocess.run(build).returncode != 0:
            errors.append(f"{where}: the block marked `cpp program` does not compile and link")
    print(f"-- {len(targets) - len(errors)} of {len(targets)} programs built")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source_dir")
    parser.add_argument("--links-only", action="store_true")
    parser.add_argument("--work")
    parser.add_argument("--cache")
    parser.add_argument("--generator")
    parser.add_argument("--config")
    args = parser.parse_args()
    root = pathlib.Path(args.source_dir).resolve()
    if not args.links_only and not (args.work and args.cache):
        parser.error("--work and --cache are needed unless --links-only")

    errors = check_links(root)
    print(f"-- links: {len(errors)} broken in {len(documents(root))} documents")
    copies = check_copies(root)
    print(f"-- copies of files: {len(copies)} differ")
    errors += copies
    if not args.links_only:
        errors += check_programs(root, args)
    for e in errors:
        print(f"check_doc_programs: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
