"""What the scripts that test the built `stepback` program share (tests/tools/*_test.py):
the failure check and the reader of --trace output. Imported from the scripts' own folder."""
import json
import sys


def check(condition, message):
    """Ends the test with FAIL: message when condition is false."""
    if not condition:
        sys.exit("FAIL: " + message)


def trace_events(err, args):
    """Parses --trace output: one JSON object per line, each with an event name and a t_ms
    that never goes back; `args` names the run in failure messages."""
    events = []
    last_t = 0
    for line in err.splitlines():
        try:
            e = json.loads(line)
        except json.JSONDecodeError as x:
            sys.exit(f"FAIL: {args}: not JSON ({x}): {line!r}")
        check(isinstance(e.get("event"), str), f"{args}: no event in {e}")
        check(type(e.get("t_ms")) is int and e["t_ms"] >= last_t, f"{args}: bad t_ms in {e}")
        last_t = e["t_ms"]
        events.append(e)
    return events
