#!/usr/bin/env python3
"""Doxygen's INPUT_FILTER for the public headers (docs/api/Doxyfile.in).

The headers document their API in plain comments: a `//` block directly above a declaration,
`// text` after a member, and a file-header comment at the top. Doxygen reads none of those,
so this filter rewrites them on the fly (the headers stay as they are):

  - the file header (the comment lines before the first line of code) becomes `///` lines
    ending in `\\file`, the file's description;
  - a `//` block directly above a declaration, at namespace, class or enum scope, becomes `///`;
  - `code;  // text` at such a scope becomes `code;  ///< text`, and comment lines below it
    whose `//` stands in the same column continue it;
  - in what is converted, what Doxygen would read as a command or markup (`\\`, `@`, `<`, `>`,
    `&`, `#`, `%`, `$`, a `::` that starts a name, an unpaired backtick) is escaped, so plain text stays plain; text
    between a pair of backticks stays as written (Markdown code).

Comments inside function bodies, free-standing comments (a blank line, or a preprocessor
line other than an #if, below them) and comments above access specifiers, `static_assert` and closing braces stay
plain, so Doxygen ignores them. Every input line gives exactly one output line: Doxygen's
warnings name the header's own line numbers.

Usage: doxygen_filter.py <header>      (the filtered text on stdout, as Doxygen runs it)
       doxygen_filter.py --self-test   (checks the rules above on samples; exit 1 on a mismatch)
"""

import re
import sys

SCOPE_KEYWORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")
# What a comment block above it does not document: doxygen would attach the block to
# something else (the next member, the enclosing scope) or warn. Above an #if, the block
# documents the declaration that follows it, whichever branch holds it.
NOT_A_DECLARATION = re.compile(r"^(}|(public|private|protected)\s*:|static_assert\b|#(?!\s*if))")
ESCAPES = {c: "\\" + c for c in "\\@<>&#%$"}


def escape(text):
    """Escapes Doxygen's command and markup characters outside paired backticks."""
    out = []
    parts = text.split("`")
    paired = len(parts) - 1 - (len(parts) - 1) % 2  # backticks that have a partner
    for i, part in enumerate(parts):
        inside = i % 2 == 1 and i <= paired
        if not inside:
            part = "".join(ESCAPES.get(c, c) for c in part)
            # `::name` not after a name is an explicit link request to a global.
            part = re.sub(r"(?<![\w>])::", r"\\::", part)
        out.append(part)
        if i < len(parts) - 1:
            out.append("`" if i < paired else "\\`")
    return "".join(out)


def strip_template_heads(stmt):
    """Drops `template <...>` (nested angles included), whose `class` names no scope."""
    while True:
        m = re.search(r"\btemplate\s*<", stmt)
        if not m:
            return stmt
        depth, i = 1, m.end()
        while i < len(stmt) and depth:
            depth += {"<": 1, ">": -1}.get(stmt[i], 0)
            i += 1
        stmt = stmt[: m.start()] + stmt[i:]


def brace_kind(stmt):
    """'enum', 'scope' (namespace, class, extern "C") or 'body' for the `{` ending stmt."""
    stmt = strip_template_heads(stmt)
    m = SCOPE_KEYWORDS.search(stmt)
    if m and not re.search(r"[(=]", stmt[: m.start()]):
        return "enum" if m.group(1) == "enum" else "scope"
    if re.search(r'\bextern\s*""\s*$', stmt):
        return "scope"
    return "body"


class Line:
    def __init__(self, text):
        self.text = text
        self.code = ""  # the line's code, strings emptied, comments removed
        self.comment_col = -1  # column of a `//` comment, -1 if none
        self.in_body = False  # at its start, inside a function body or an initializer
        self.enum = False  # at its start, directly inside an enum


def scan(texts):
    """Splits each line into code and `//` comment and records the scope it starts in."""
    lines = [Line(t) for t in texts]
    stack, stmt, in_block = [], "", False
    for line in lines:
        t = line.text
        line.in_body = "body" in stack
        line.enum = bool(stack) and stack[-1] == "enum"
        code, i = [], 0
        while i < len(t):
            c = t[i]
            if in_block:
                if t.startswith("*/", i):
                    in_block, i = False, i + 2
                else:
                    i += 1
                continue
            if t.startswith("//", i):
                line.comment_col = i
                break
            if t.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            if c == '"' or (c == "'" and not re.search(r"\b\d[\w']*$", t[:i])):
                j = i + 1
                while j < len(t) and t[j] != c:
                    j += 2 if t[j] == "\\" else 1
                code.append(c + c)
                stmt += c + c
                i = j + 1
                continue
            code.append(c)
            if c == "{":
                stack.append("body" if "body" in stack else brace_kind(stmt))
                stmt = ""
            elif c == "}":
                if stack:
                    stack.pop()
                stmt = ""
            elif c == ";":
                stmt = ""
            elif not (t.lstrip().startswith("#")):
                stmt += c
            i += 1
        stmt += " "
        line.code = "".join(code).strip()
    return lines


def comment_only(line):
    return line.code == "" and line.comment_col >= 0 and not line.text.lstrip().startswith("///")


def doc(line, marker):
    """The line with its `//` comment turned into `marker` and its text escaped."""
    col = line.comment_col
    body = line.text[col + 2 :]
    return line.text[:col] + marker + escape(body)


def trailing_documents(line):
    """Whether the `// text` after this line's code documents what the line declares."""
    code = line.code
    if line.in_body or line.comment_col < 0 or not code or code.startswith(("}", "#")):
        return False
    if code.endswith((";", ",")):
        return True
    return line.enum and re.search(r"[\w)]$", code) is not None


def convert(texts):
    lines = scan(texts)
    out = [l.text for l in lines]
    n = len(lines)
    # The file header: the comment lines at the top, ending in \file.
    i = 0
    while i < n and comment_only(lines[i]):
        out[i] = doc(lines[i], "///")
        i += 1
    if i:
        out[i - 1] += " \\file"
    trailing_col = -1  # the column of the trailing comment the next lines may continue
    while i < n:
        line = lines[i]
        if trailing_documents(line):
            out[i] = doc(line, "///<")
            trailing_col = line.comment_col
            i += 1
            continue
        if comment_only(line) and line.comment_col == trailing_col and not line.in_body:
            out[i] = doc(line, "///<")
            i += 1
            continue
        trailing_col = -1
        if comment_only(line) and not line.in_body:
            j = i
            while j < n and comment_only(lines[j]):
                j += 1
            nxt = lines[j] if j < n else None
            if nxt and nxt.code and not nxt.in_body and not NOT_A_DECLARATION.match(nxt.code):
                for k in range(i, j):
                    out[k] = doc(lines[k], "///")
            i = j
            continue
        i += 1
    return out


SELF_TEST = [
    # (name, input, expected)
    (
        "header, block, trailing, continuation, escapes",
        [
            "// The widget: <b> & 50% of #1, \\n and @param.",
            "#ifndef W_HPP_",
            "namespace w {",
            "// Returns `a<b>` for x@y (::end, A::end).",
            "int f(int x);",
            "struct S {",
            "  int a = 0;  // Bytes; 0 means <none>.",
            "              // Still about a.",
            "  // About b.",
            "  int b;",
            "};",
            "enum class E { kA,  // First.",
            "  kB  // Last, no comma.",
            "};",
            "// Above an #if: the declaration after it.",
            "#if defined(X)",
            "inline constexpr bool kX = true;",
            "#endif",
            "// Above an include: free-standing.",
            "#include <x>",
            "}  // namespace w",
            "#endif  // W_HPP_",
        ],
        [
            "/// The widget: \\<b\\> \\& 50\\% of \\#1, \\\\n and \\@param. \\file",
            "#ifndef W_HPP_",
            "namespace w {",
            "/// Returns `a<b>` for x\\@y (\\::end, A::end).",
            "int f(int x);",
            "struct S {",
            "  int a = 0;  ///< Bytes; 0 means \\<none\\>.",
            "              ///< Still about a.",
            "  /// About b.",
            "  int b;",
            "};",
            "enum class E { kA,  ///< First.",
            "  kB  ///< Last, no comma.",
            "};",
            "/// Above an \\#if: the declaration after it.",
            "#if defined(X)",
            "inline constexpr bool kX = true;",
            "#endif",
            "// Above an include: free-standing.",
            "#include <x>",
            "}  // namespace w",
            "#endif  // W_HPP_",
        ],
    ),
    (
        "function bodies, templates, free-standing comments, strings, unpaired backtick",
        [
            "// H.",
            "namespace w {",
            "// Free-standing.",
            "",
            "template <class T>",
            "inline int g(T t) {",
            "  // Why, not what.",
            "  int x = 1;  // Inside a body.",
            '  const char* s = "{ // not a comment";',
            "  return x;",
            "}",
            "// Odd ` tick.",
            "inline int h() { return 1; }",
            "class C {",
            "  // Above an access specifier.",
            " private:",
            "  int z_;  // Private, still converted.",
            "};",
            "}  // namespace w",
        ],
        [
            "/// H. \\file",
            "namespace w {",
            "// Free-standing.",
            "",
            "template <class T>",
            "inline int g(T t) {",
            "  // Why, not what.",
            "  int x = 1;  // Inside a body.",
            '  const char* s = "{ // not a comment";',
            "  return x;",
            "}",
            "/// Odd \\` tick.",
            "inline int h() { return 1; }",
            "class C {",
            "  // Above an access specifier.",
            " private:",
            "  int z_;  ///< Private, still converted.",
            "};",
            "}  // namespace w",
        ],
    ),
]


def self_test():
    failed = 0
    for name, given, expected in SELF_TEST:
        got = convert(given)
        if len(got) != len(given):
            print(f"self-test '{name}': {len(given)} lines in, {len(got)} out")
            failed += 1
            continue
        for number, (g, e) in enumerate(zip(got, expected), 1):
            if g != e:
                print(f"self-test '{name}' line {number}:\n  expected {e!r}\n  got      {g!r}")
                failed += 1
    print("doxygen_filter self-test:", "failed" if failed else "passed")
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        texts = f.read().split("\n")
    sys.stdout.write("\n".join(convert(texts)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
