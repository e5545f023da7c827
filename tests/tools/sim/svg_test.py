"""`stepback sim --svg`: the picture is well-formed XML and draws every strategy.

usage: svg_test.py STEPBACK_BINARY CASE
CASE all: a small fleet with --strategy all; one panel per strategy, each with its attempts
polyline and the dashed capacity line, exactly one marked as the profile's own.
CASE one: --strategy seed draws one panel.
"""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

BINARY, CASE = sys.argv[1], sys.argv[2]
NS = "{http://www.w3.org/2000/svg}"
STRATEGIES = ["seed", "full", "equal", "decorrelated", "none"]


def check(condition, message):
    if not condition:
        sys.exit("FAIL: " + message)


def draw(strategy):
    """Runs the command with --svg into a temporary file; returns the parsed root."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fleet.svg")
        run = subprocess.run([BINARY, "sim", "--clients", "2000", "--strategy", strategy,
                              "--svg", path], capture_output=True, text=True, timeout=120)
        check(run.returncode == 0, f"exit {run.returncode}: {run.stderr}")
        with open(path, encoding="utf-8") as f:
            text = f.read()
    check("<script" not in text and "href" not in text and "url(" not in text,
          "the SVG refers to something outside itself or has a script")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        sys.exit(f"FAIL: not well-formed XML: {e}")
    check(root.tag == NS + "svg", f"root is {root.tag}")
    check(root.get("font-family") == "sans-serif", "no sans-serif font-family on the root")
    return root


def points(polyline):
    pairs = [p.split(",") for p in polyline.get("points", "").split()]
    return [(float(x), float(y)) for x, y in pairs]


def check_panel(panel, strategy):
    """One strategy's panel: its title, attempts against the capacity line, the outage."""
    words = "".join(panel.itertext())
    check(strategy in words and "peak" in words and "lost" in words,
          f"panel of {strategy} does not name it with its figures: {words!r}")
    attempts = [p for p in panel.iter(NS + "polyline") if p.get("class") == "attempts"]
    check(len(attempts) == 1, f"{strategy}: {len(attempts)} attempts polylines")
    xy = points(attempts[0])
    check(len(xy) >= 60, f"{strategy}: only {len(xy)} points")
    check(all(a[0] < b[0] for a, b in zip(xy, xy[1:])), f"{strategy}: x not increasing")
    capacity = [l for l in panel.iter(NS + "line") if l.get("class") == "capacity"]
    check(len(capacity) == 1, f"{strategy}: {len(capacity)} capacity lines")
    check(capacity[0].get("stroke-dasharray"), f"{strategy}: the capacity line is not dashed")
    top = min(y for _, y in xy)
    bottom = max(y for _, y in xy)
    cap_y = float(capacity[0].get("y1"))
    check(top <= cap_y <= bottom, f"{strategy}: capacity line at {cap_y} outside the attempts")
    check(any(r.get("class") == "outage" for r in panel.iter(NS + "rect")),
          f"{strategy}: no outage shading")
    successes = [p for p in panel.iter(NS + "polygon") if p.get("class") == "successes"]
    check(len(successes) == 1, f"{strategy}: {len(successes)} successes areas")
    return "profile's own" in words


def main():
    strategies = STRATEGIES if CASE == "all" else ["seed"]
    root = draw(CASE if CASE == "all" else "seed")
    panels = [g for g in root.iter(NS + "g") if g.get("class") == "strategy"]
    check(len(panels) == len(strategies), f"{len(panels)} panels for {len(strategies)}")
    own = [check_panel(p, s) for p, s in zip(panels, strategies)]
    # The mobile profile's own strategy is full jitter.
    check(own == [s == "full" for s in strategies], f"own marks: {own}")
    print("ok")


main()
