#!/usr/bin/env python3
"""Lengths of the C and C++ functions defined in the files named, for scripts/check_sizes.sh.

    scripts/function_sizes.py FILE...     one line per function body: "FILE:LINE NAME LINES"
    scripts/function_sizes.py --self-test checks the measure on the snippets below

A function's length is the number of lines from the "{" that opens its body to the "}" that
closes it, both counted (blank and comment lines included; one more than clang-tidy's
readability-function-size counts). The measure is lexical, not a
parser: comments, string and character literals (raw strings too) and preprocessor lines are
blanked first; then, at namespace, class or file scope, a "{" whose head (the text since the
previous ";", "{" or "}" at that scope) holds a parameter list opens a function body, found
by brace matching. A class, struct, union or namespace body is searched inside; any other
brace (an enum, an initializer, a lambda at namespace scope) is skipped whole. Braces of a
constructor's member initializers ("x_{a}") are part of the head. The name is the one before
the parameter list, qualified as written ("CaresResolver::finish") and prefixed by the
classes it is defined in ("Client::body_resume" for a definition inside class Client).
Overloads share a name. When the braces balance only with the #elif and #else branches left
out ("#if A / int p() { / #else / int p(int) { / #endif"), those branches are left out; a file
whose braces balance neither way is an error (exit 2).
"""

import re
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")
SCOPE_KEYWORD = re.compile(r"(?<![\w:])(enum\s+)?(namespace|class|struct|union|extern\s*\"\s*\")(?!\w)")
CLASS_NAME = re.compile(r"\s*(?:\[\[[^\]]*\]\]\s*|alignas\s*\([^()]*\)\s*)*([A-Za-z_]\w*)")
NOT_NAMES = {"decltype", "alignas", "noexcept", "sizeof", "alignof", "__attribute__",
             "__declspec", "static_assert", "if", "while", "for", "switch", "return", "requires"}


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines
    kept, so line numbers hold); a literal keeps its quotes."""
    out = []
    i, n = 0, len(text)
    line_start = True  # only whitespace since the last newline
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            i += 1
            line_start = True
            continue
        if line_start and c == "#":
            # A directive, with its continuation lines (comments inside are blanked too).
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                if text.startswith("/*", i):
                    end = text.find("*/", i + 2)
                    end = n if end < 0 else end + 2
                    out.append(re.sub(r"[^\n]", " ", text[i:end]))
                    i = end
                    continue
                out.append(" ")
                i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            # A line comment ending in a backslash goes on; rare enough to ignore.
            out.append(" " * (end - i))
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + raw.group(1) + '"'
            end = text.find(close, i + raw.end())
            end = n if end < 0 else end + len(close)
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:end - 1]) + '"')
            i = end
            continue
        if c == "'" and i > 0 and text[i - 1].isalnum() and re.match(r"[0-9A-Fa-f]", text[i + 1:i + 2] or " "):
            # A digit separator (1'000) when the run before it is a number.
            j = i - 1
            while j >= 0 and (text[j].isalnum() or text[j] in "_'"):
                j -= 1
            if text[j + 1].isdigit():
                out.append(c)
                i += 1
                continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            out.append(c + " " * (end - i - 2) + c if end - i >= 2 else c)
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def first_branches(text):
    """The blanked text with the lines of every #elif and #else branch blanked too, for a
    file whose braces balance only so (both branches open a function's body)."""
    lines = blank(text).split("\n")
    raw = text.split("\n")
    stack = []
    for k, line in enumerate(raw):
        d = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b", line)
        if d and d.group(1).startswith("if"):
            stack.append(False)
        elif d and d.group(1) in ("elif", "else") and stack:
            stack[-1] = True
        elif d and d.group(1) == "endif" and stack:
            stack.pop()
        elif any(stack):
            lines[k] = " " * len(lines[k])
    return "\n".join(lines)


def measure(text):
    """functions() of the blanked text; of its first branches when only they balance."""
    try:
        return functions(blank(text))
    except ValueError:
        return functions(first_branches(text))


def match(text, i, open_char, close_char):
    """Index of the character closing the bracket at text[i], or -1."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_char:
            depth += 1
        elif text[j] == close_char:
            depth -= 1
            if depth == 0:
                return j
    return -1


def scope_of(head):
    """For a head that opens a body to search inside: "namespace", "extern" or the class's
    name; "enum" for an enum; None for anything else."""
    keywords = list(SCOPE_KEYWORD.finditer(head))
    if not keywords or "(" in re.sub(r"alignas\s*\([^()]*\)", "", head[keywords[-1].end():]):
        return None
    last = keywords[-1]
    if last.group(1):
        return "enum"
    if last.group(2) == "namespace":
        return "namespace"
    if last.group(2).startswith("extern"):
        return "extern"
    name = CLASS_NAME.match(head, last.end())
    return name.group(1) if name else "namespace"


def parameter_list(head):
    """(name, index of "(") of the parameter list in a head, or None. The list is the first
    "(" after a name that is not a keyword; for operators, the one after the operator."""
    op = re.search(r"((?:[A-Za-z_]\w*\s*::\s*)*operator\s*(?:\(\s*\)|\[\s*\]|[^\s(]+|\s\w[\w\s:<>*&]*?))\s*\(", head)
    if op:
        name = re.sub(r"operator(?=[A-Za-z_])", "operator ", re.sub(r"\s+", "", op.group(1)))
        return name, op.end() - 1
    for m in re.finditer(r"((?:~\s*)?[A-Za-z_]\w*(?:\s*<[^;{}()<>]*>)?(?:\s*::\s*~?\s*[A-Za-z_]\w*(?:\s*<[^;{}()<>]*>)?)*)\s*\(", head):
        name = m.group(1)
        last = re.split(r"::", name)[-1].strip()
        if last in NOT_NAMES or last.startswith("__attribute"):
            continue
        return re.sub(r"\s+", "", name), m.end() - 1
    return None


def functions(text):
    """[(line, name, lines)] of the function bodies in the (blanked) text."""
    found = []

    def line_of(i):
        return text.count("\n", 0, i) + 1

    def scan(start, end, prefix):
        head_start = start
        i = start
        while i < end:
            c = text[i]
            if c in ";}":
                head_start = i + 1
                i += 1
                continue
            if c != "{":
                i += 1
                continue
            head = text[head_start:i]
            close = match(text, i, "{", "}")
            if close < 0 or close > end:
                raise ValueError(f"line {line_of(i)}: unbalanced braces")
            scope = scope_of(head)
            params = parameter_list(head) if not scope else None
            if scope == "enum":
                pass
            elif scope:
                inner = prefix + (scope + "::" if scope not in ("namespace", "extern") else "")
                scan(i + 1, close, inner)
                head_start = close + 1
                i = close + 1
                continue
            if params and "=" not in re.sub(r"operator\s*\S+|<[^<>]*>|\([^()]*\)", "", head[:params[1]]):
                name, paren = params
                paren_close = match(text, head_start + paren, "(", ")")
                after = text[paren_close + 1:i] if 0 <= paren_close < i else ""
                # In a constructor's member initializers, "x_{a}" is a member's brace.
                if re.search(r"(?<!:):(?!:)", after) and re.search(r"[\w>]\s*$", after):
                    i = close + 1
                    continue
                found.append((line_of(i), prefix + name, line_of(close) - line_of(i) + 1))
            head_start = close + 1
            i = close + 1
            # "struct S {...} s;" and "int a[] = {...};" end at the ";" that follows.

    scan(0, len(text), "")
    if text.count("{") != text.count("}"):
        raise ValueError("unbalanced braces")
    return found


SELF_TESTS = [
    # (snippet, expected [(name, lines)])
    ("int f(int a) {\n  return a;\n}\n", [("f", 3)]),
    ("void g() { }\n", [("g", 1)]),
    ('void s() {\n  const char* x = "}{";\n  char c = \'{\';\n}\n', [("s", 4)]),
    ("void c() {\n  // }\n  /* { */\n}\n", [("c", 4)]),
    ('void r() {\n  auto x = R"x(})x";\n}\n', [("r", 3)]),
    ("int d() {\n  return 1'000'000;\n}\n", [("d", 3)]),
    ("namespace a {\nnamespace {\nvoid h()\n{\n  if (x) {\n  }\n}\n}  // namespace\n}\n",
     [("h", 4)]),
    ("class K : public B {\n public:\n  int get() const { return x_; }\n  void set(int v);\n"
     " private:\n  int x_{0};\n  struct In { void f() {} };\n};\n",
     [("K::get", 1), ("K::In::f", 1)]),
    ("K::K(int a) noexcept : a_{a}, b_(a), c_{{1, 2}} {\n  x();\n}\n", [("K::K", 3)]),
    ("K::~K() {\n}\n", [("K::~K", 2)]),
    ("bool operator==(const A& a, const B& b) {\n  return true;\n}\n", [("operator==", 3)]),
    ("int A::operator()(int x) const {\n  return x;\n}\n", [("A::operator()", 3)]),
    ("template <typename T>\nauto m(T t) -> decltype(t + 1) {\n  return t;\n}\n", [("m", 3)]),
    ("enum class E { a, b };\nconstexpr int t[] = {1, 2};\nconst auto l = [](int) {\n  return 1;\n};\n"
     "static_assert(sizeof(int) == 4, \"{\");\n", []),
    ("template <class T>\nstruct alignas(8) S final : B<T> {\n  void f() {}\n};\n"
     "enum class E : int { a = 1 };\nstruct {\n  int g() { return 0; }\n} s;\n",
     [("S::f", 1), ("g", 1)]),
    ('extern "C" {\nint cf(void) {\n  return 0;\n}\n}\n', [("cf", 3)]),
    ("#define OPEN {\n#if A\nint p() {\n#else\nint p(int) {\n#endif\n  return 0;\n}\n",
     [("p", 6)]),
    ("void lam() {\n  auto f = [&] {\n    return 1;\n  };\n}\nint after() { return 0; }\n",
     [("lam", 5), ("after", 1)]),
    ("template <>\nvoid Tpl<int>::run(int) {\n}\n", [("Tpl<int>::run", 2)]),
]


def self_test():
    failures = 0
    for snippet, expected in SELF_TESTS:
        try:
            got = [(name, lines) for _, name, lines in measure(snippet)]
        except ValueError as e:
            got = [("error", str(e))]
        if got != expected:
            failures += 1
            print(f"function_sizes: self-test FAILED on:\n{snippet}    expected {expected}\n    got      {got}",
                  file=sys.stderr)
    if functions_unbalanced_is_an_error():
        failures += 1
    if failures:
        sys.exit(1)
    print(f"function_sizes: self-test ok ({len(SELF_TESTS) + 1} cases)")


def functions_unbalanced_is_an_error():
    try:
        measure("void f() {\n")
    except ValueError:
        return False
    print("function_sizes: self-test FAILED: unbalanced braces were not an error", file=sys.stderr)
    return True


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return 0
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    status = 0
    for path in argv:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            for line, name, lines in measure(text):
                print(f"{path}:{line} {name} {lines}")
        except ValueError as e:
            print(f"function_sizes: {path}: {e}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
