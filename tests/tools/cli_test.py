"""Runs the built `stepback` program and checks its output and exit codes.

usage: cli_test.py STEPBACK_BINARY EXPECTED_VERSION CASE
Each CASE is one CTest test (see tests/tools/CMakeLists.txt).
"""

import json
import re
import subprocess
import sys

from cli_support import check

BINARY = sys.argv[1]
VERSION = sys.argv[2]
PROFILES = ["desktop", "mobile"]
STRATEGIES = ["seed", "full", "equal", "decorrelated", "none"]
STOPS = {"retries_exhausted", "deadline"}
SEED_RANGE = "0..18446744073709551615"


def run(*args):
    """Runs the program; returns (exit code, stdout, stderr)."""
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def run_ok(*args):
    code, out, err = run(*args)
    check(code == 0, f"{list(args)} exited {code}, stderr: {err!r}")
    return out


def parse_json_lines(out, args):
    """Checks one object per line: rows n = 0, 1, ... with running sums, then a stop."""
    lines = out.splitlines()
    check(len(lines) >= 1, f"{args}: no output")
    objects = [json.loads(line) for line in lines]
    rows, last = objects[:-1], objects[-1]
    total = 0
    for i, row in enumerate(rows):
        check(set(row) == {"n", "wait_ms", "cumulative_ms"}, f"{args}: bad row keys {row}")
        check(all(type(v) is int and v >= 0 for v in row.values()), f"{args}: bad row {row}")
        total += row["wait_ms"]
        check(row["n"] == i, f"{args}: row {i} has n={row['n']}")
        check(row["cumulative_ms"] == total, f"{args}: row {i} cumulative {row} != {total}")
    check(set(last) == {"stop"} and last["stop"] in STOPS, f"{args}: bad last line {last}")
    return rows, last["stop"]


def case_json_parses():
    for profile in PROFILES:
        for strategy in STRATEGIES:
            for seed in ["0", "1", "18446744073709551615"]:
                args = ["schedule", "--profile", profile, "--strategy", strategy, "--seed", seed,
                        "--json"]
                rows, stop = parse_json_lines(run_ok(*args), args)
                max_retries = 14 if profile == "desktop" else 16
                check(len(rows) <= max_retries, f"{args}: {len(rows)} rows")
                if stop == "retries_exhausted":
                    check(len(rows) == max_retries, f"{args}: stopped early as {stop}")
    # The default profile and strategy, seeded by the OS.
    parse_json_lines(run_ok("schedule", "--json"), ["schedule", "--json"])


def case_desktop_seed_rows():
    args = ["schedule", "--profile", "desktop", "--strategy", "seed", "--seed", "3", "--json"]
    rows, stop = parse_json_lines(run_ok(*args), args)
    # min(2^n s + U[0, 1 s], 100 s): 1 + 2 + ... + 64 s, then 100 s three times; a fourth
    # would end past the 480 s deadline.
    check(len(rows) == 10 and stop == "deadline", f"{args}: {len(rows)} rows, {stop}")
    for n, row in enumerate(rows):
        low = 1000 * 2**n
        check(min(low, 100000) <= row["wait_ms"] <= min(low + 1000, 100000), f"{args}: {row}")


def case_deterministic():
    for extra in [[], ["--json"]]:
        a = run_ok("schedule", "--profile", "mobile", "--seed", "1", *extra)
        b = run_ok("schedule", "--profile", "mobile", "--seed", "1", *extra)
        c = run_ok("schedule", "--profile", "mobile", "--seed", "2", *extra)
        check(a == b, f"same seed, different output {extra}:\n{a}\n{b}")
        check(a != c, f"seeds 1 and 2 gave the same output {extra}:\n{a}")


def case_random_without_seed():
    # Sixteen full-jitter draws over thousands of values: a collision is vanishingly unlikely.
    a = run_ok("schedule", "--profile", "mobile", "--json")
    b = run_ok("schedule", "--profile", "mobile", "--json")
    check(a != b, "two unseeded runs gave the same schedule:\n" + a)


def case_text():
    out = run_ok("schedule", "--profile", "mobile", "--seed", "1")
    lines = out.splitlines()
    check(lines[0].startswith("profile mobile, strategy full, cap 128000 ms, max retries 16, "
                              "deadline 900000 ms"), "bad header: " + lines[0])
    check(lines[1].split() == ["n", "wait_ms", "cumulative_ms"], "bad column header: " + lines[1])
    rows = lines[2:-1]
    check(len(rows) == 16, f"{len(rows)} rows:\n{out}")
    check(len({len(r) for r in rows} | {len(lines[1])}) == 1, "columns not aligned:\n" + out)
    json_rows, _ = parse_json_lines(run_ok("schedule", "--profile", "mobile", "--seed", "1",
                                           "--json"), ["--json"])
    for row, text in zip(json_rows, rows):
        check(text.split() == [str(row["n"]), str(row["wait_ms"]), str(row["cumulative_ms"])],
              f"text row {text!r} differs from JSON {row}")
    check(lines[-1].startswith("stop after 16 retries: retries_exhausted ("), "bad stop: " + lines[-1])


def expect_usage_error(args, *parts):
    code, out, err = run(*args)
    check(code == 2, f"{args}: exit code {code}, want 2; stderr {err!r}")
    check(out == "", f"{args}: wrote to stdout: {out!r}")
    check(err.count("\n") == 1, f"{args}: want one line on stderr, got {err!r}")
    for part in parts:
        check(part in err, f"{args}: stderr {err!r} lacks {part!r}")


def case_error_bogus():
    expect_usage_error(["schedule", "--bogus"], "'--bogus'", "--profile", "--strategy", "--seed",
                       "--json")


def case_error_strategy():
    expect_usage_error(["schedule", "--strategy", "nope"], "'nope'", ", ".join(STRATEGIES))


def case_error_seed():
    expect_usage_error(["schedule", "--seed", "abc"], "'abc'", SEED_RANGE)
    expect_usage_error(["schedule", "--seed", "18446744073709551616"], "'18446744073709551616'",
                       SEED_RANGE)
    expect_usage_error(["schedule", "--seed", "-5"], "'-5'", SEED_RANGE)
    expect_usage_error(["schedule", "--seed"], "--seed needs a value", SEED_RANGE)


def case_error_profile():
    expect_usage_error(["schedule", "--profile", "tablet"], "'tablet'", "desktop, mobile")
    expect_usage_error(["schedule", "--profile"], "--profile needs a value", "desktop, mobile")


def case_error_command():
    expect_usage_error(["frobnicate"], "'frobnicate'", "schedule", "sim")


def case_help():
    for args in [["--help"], ["help"], ["-h"]]:
        out = run_ok(*args)
        check("usage: stepback" in out and "schedule" in out and "sim" in out,
              f"{args}: bad usage:\n{out}")
    for args in [["schedule", "--help"], ["help", "schedule"]]:
        out = run_ok(*args)
        check("usage: stepback schedule" in out and "--seed" in out, f"{args}: bad usage:\n{out}")
    code, out, err = run()
    check(code == 2 and "usage: stepback" in err, f"no arguments: exit {code}, stderr {err!r}")


def flag_help(out, flag):
    """The --help lines of `flag`: its own line and the indented lines that go on with it."""
    lines = out.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"  {flag} ")), None)
    check(start is not None, f"no {flag} line in:\n{out}")
    end = start + 1
    while end < len(lines) and lines[end].startswith(" " * 23) and "default:" not in lines[end]:
        end += 1
    return lines[start:end]


def case_trust_help():
    # --capath is one behaviour (load_trust: a hashed directory, looked up by subject), so
    # every subcommand that takes it says the same thing about it.
    helps = {command: run_ok(command, "--help") for command in ["get", "upload"]}
    for flag in ["--cacert", "--capath"]:
        texts = {command: flag_help(out, flag) for command, out in helps.items()}
        check(texts["get"] == texts["upload"], f"{flag} help differs: {texts}")
    capath = " ".join(flag_help(helps["get"], "--capath"))
    check("hashed directory" in capath and "openssl rehash" in capath, "--capath: " + capath)


def case_speed_help():
    # The throughput floor is one behaviour in get and upload, and the help states both
    # profiles' defaults (tools_request_flags_test checks them against profiles/).
    blocks = {}
    for command in ["get", "upload"]:
        out = run_ok(command, "--help")
        start = out.find("  --speed-limit BYTES ")
        end = out.find("\n", out.find("(default: desktop 30", start))
        check(0 <= start < end, f"{command} --help lacks --speed-limit/--speed-time:\n{out}")
        blocks[command] = out[start:end]
        check(f"[--speed-limit BYTES] [--speed-time S" in out, f"{command} usage line:\n{out}")
    check(blocks["get"] == blocks["upload"], f"the floor's help differs: {blocks}")
    check("(default: desktop 1024, mobile 100)" in blocks["get"]
          and "(default: desktop 30, mobile 60)" in blocks["get"], blocks["get"])


def case_get_help():
    # Regression: the system store's default was printed under --pin (get) and under
    # --tls-max-fragment (upload), and the synopsis left out --interface and --defer-after.
    out = run_ok("get", "--help")
    synopsis = out[: out.index("\n\n")]
    for flag in ("--interface NAME", "--defer-after SECONDS", "--connect-timeout", "-x URL",
                 "-O", "-f", "-i", "-I", "-s", "-v", "-L", "-C -", "--retry N"):
        check(flag in synopsis, f"get --help synopsis lacks {flag}:\n{synopsis}")
    for command in ["get", "upload"]:
        text = run_ok(command, "--help")
        lines = text.splitlines()
        capath = lines.index(next(line for line in lines if line.startswith("  --capath ")))
        after = "\n".join(lines[capath:capath + 5])
        check("(default: the system's store" in after and "ca-certificates.crt" in after,
              f"{command}: no default after --capath:\n{after}")
        check(text.count("ca-certificates.crt") == 1, f"{command}: the default twice:\n{text}")
        for flag in ("--pin", "--tls-max-fragment"):
            if f"  {flag} " in text:
                block = " ".join(flag_help(text, flag))
                check("ca-certificates" not in block, f"{command} {flag}: {block}")
    # Every option of the synopsis is described.
    for flag in ("--interface", "--defer-after", "--connect-timeout", "-x URL", "-O, --remote-name",
                 "-f, --fail", "-i, --include", "-I, --head", "-s, --silent", "-v, --verbose",
                 "-L, --location", "-C -", "-d DATA", "--data-binary", "--data-raw", "-A AGENT",
                 "--fail-with-body", "-o -"):
        check(f"\n  {flag}" in out, f"get --help does not describe {flag}")
    check(re.search(r"^  22 ", out, re.M), "get --help lacks exit code 22")


def case_version():
    out = run_ok("--version")
    check(out.startswith(f"stepback {VERSION} "), f"--version printed {out!r}, want {VERSION}")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    CASES[sys.argv[3]]()
    print("ok")
