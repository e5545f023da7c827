#!/usr/bin/env python3
"""Runs an app built on the installed package once against a loopback HTTPS server.

The apps: examples/installed_app (one https::Client request) and the find_package
consumer's download (one transfer::Download); both take URL and CA file, write the body to
stdout and one line per attempt to stderr.

The server is the integration tests' scripted_server.py with a certificate from their
make_certs.sh; it answers 503 first, then 200, so the app's one request is retried once.
Passes when the app exits 0, printed the body, and reported the 503 attempt.

Usage: installed_app_request.py --integration-dir DIR --openssl EXE --work DIR -- APP...
(APP may start with an emulator command, for cross builds.)
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--integration-dir", required=True)
    p.add_argument("--openssl", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("app", nargs="+")
    args = p.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    certs = os.path.join(args.work, "certs")
    subprocess.run(["bash", os.path.join(args.integration_dir, "make_certs.sh"), args.openssl,
                    certs], check=True)
    script = os.path.join(args.work, "script.json")
    with open(script, "w", encoding="utf-8") as f:
        json.dump([{"status": 503, "reason": "Service Unavailable"},
                   {"status": 200, "body": "hello from loopback\n"}], f)
    port_file = os.path.join(args.work, "port")
    server = subprocess.Popen([sys.executable, os.path.join(args.integration_dir, "scripted_server.py"),
                               "--script", script, "--port-file", port_file,
                               "--log-file", os.path.join(args.work, "server.log"),
                               "--cert", os.path.join(certs, "server.pem"),
                               "--key", os.path.join(certs, "server.key"), "--lifetime", "100"])
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file):
            if time.monotonic() > deadline or server.poll() is not None:
                print("the scripted server did not start", file=sys.stderr)
                return 1
            time.sleep(0.05)
        with open(port_file, encoding="utf-8") as f:
            port = int(f.read().strip())
        url = f"https://127.0.0.1:{port}/hello"
        cmd = args.app + [url, os.path.join(certs, "ca.pem")]
        print("+", " ".join(cmd), flush=True)
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
        print(run.stdout, end="")
        print(run.stderr, end="", file=sys.stderr)
        ok = (run.returncode == 0 and "hello from loopback" in run.stdout
              and "503" in run.stderr)
        name = os.path.basename(args.app[-1])
        print(f"{name} request:", "ok" if ok else f"FAILED (exit {run.returncode})")
        return 0 if ok else 1
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    sys.exit(main())
