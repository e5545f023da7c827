"""Runs example_memorystore against the local Memorystore for Redis, with a fault on each step.

usage: run_example.py EXAMPLE OPENSSL TESTS_DIR
The server (TESTS_DIR/memorystore/memorystore_server.py) answers the create 503 with
RetryInfo, expires the token on the first poll, resets the read, and loses the answer of the
delete's first poll; the example must still create, read and delete the instance.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

EXAMPLE, OPENSSL, TESTS = sys.argv[1], sys.argv[2], sys.argv[3]
TOKEN = "ya29.example-token"
FAULTS = [
    {"match": {"kind": "create"}, "status": 503, "retry_delay": 0.2},
    {"match": {"kind": "operation", "nth": 1}, "expire_token": True},
    {"match": {"kind": "get"}, "reset": True},
    {"match": {"kind": "operation", "nth": 4}, "lose_response": True},
]


def main():
    with tempfile.TemporaryDirectory(prefix="stepback-example-") as tmp:
        pki = os.path.join(tmp, "pki")
        subprocess.run(["bash", os.path.join(TESTS, "integration", "make_certs.sh"), OPENSSL, pki],
                       check=True, capture_output=True)
        token_file = os.path.join(tmp, "token")
        with open(token_file, "w", encoding="utf-8") as f:
            f.write(TOKEN + "\n")
        port_file, log_file = os.path.join(tmp, "port"), os.path.join(tmp, "requests.log")
        server = subprocess.Popen(
            [sys.executable, os.path.join(TESTS, "memorystore", "memorystore_server.py"),
             "--cert", os.path.join(pki, "server.pem"), "--key", os.path.join(pki, "server.key"),
             "--port-file", port_file, "--log-file", log_file, "--token", TOKEN,
             "--op-polls", "2", "--faults-json", json.dumps(FAULTS)])
        try:
            end = time.monotonic() + 10
            while not os.path.exists(port_file):
                if time.monotonic() > end or server.poll() is not None:
                    sys.exit("FAIL: the server did not start")
                time.sleep(0.05)
            with open(port_file, encoding="utf-8") as f:
                port = int(f.read())
            p = subprocess.run([EXAMPLE, "--endpoint", "https://127.0.0.1:%d" % port,
                                "--parent", "projects/p/locations/us-central1",
                                "--instance", "example", "--cacert", os.path.join(pki, "ca.pem"),
                                "--token-file", token_file],
                               capture_output=True, text=True, timeout=90)
            with open(log_file, encoding="utf-8") as f:
                log = f.read()
        finally:
            server.terminate()
            server.wait(timeout=10)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        sys.exit("FAIL: the example exited %d\n%s" % (p.returncode, log))
    instance = json.loads(p.stdout)
    if instance.get("state") != "READY" or not instance["name"].endswith("/instances/example"):
        sys.exit("FAIL: unexpected instance %r" % p.stdout)
    for action in ("status", "expire_token", "reset", "lose_response"):
        if "action=" + action not in log:
            sys.exit("FAIL: fault %s never struck\n%s" % (action, log))
    if TOKEN in p.stdout + p.stderr:
        sys.exit("FAIL: the token was printed")
    print("ok: created, read and deleted through every fault")


if __name__ == "__main__":
    main()
