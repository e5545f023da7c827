"""Runs example_memorystore against the local Memorystore for Redis, once per set of faults.

usage: run_example.py EXAMPLE OPENSSL TESTS_DIR
The server is TESTS_DIR/integration/memorystore/memorystore_server.py. Each scenario injects
faults on the create, its polls, the read, the delete and its polls, and says how the example
must end: created, read and deleted (exit 0, the instance on stdout) through every retryable
fault, a lost create answer met by 409 ALREADY_EXISTS and then read and deleted, or an
operation that ends in error (exit 1, its code named). (A stall takes the profile's 30 s read timeout to
show; tests/integration/memorystore covers it with short timeouts.)
"""

import json
import os
import subprocess
import sys
import tempfile
import time

EXAMPLE, OPENSSL, TESTS = sys.argv[1], sys.argv[2], sys.argv[3]
TOKEN = "ya29.example-token"

# (name, faults, exit code, what stderr must say, actions the server must have taken, and
# extra server flags)
SCENARIOS = [
    ("a fault on every step",
     [{"match": {"kind": "create"}, "status": 503, "retry_delay": 0.2},
      {"match": {"kind": "operation", "nth": 1}, "expire_token": True},
      {"match": {"kind": "get"}, "reset": True},
      {"match": {"kind": "operation", "nth": 4}, "lose_response": True}],
     0, ["retrying in", "done after"], ["status", "expire_token", "reset", "lose_response"], []),
    ("429 with RetryInfo, 503 on polls, resets on the delete",
     [{"match": {"kind": "create"}, "status": 429, "retry_delay": 0.3},
      {"match": {"kind": "operation", "nth": 2}, "status": 503, "retry_after": 1},
      {"match": {"kind": "get"}, "status": 500},
      {"match": {"kind": "delete"}, "reset": True},
      {"match": {"kind": "operation", "nth": 5}, "reset": True}],
     0, ["attempt 1: HTTP 429", "attempt 1: HTTP 503", "done after"], ["status", "reset"], []),
    # Nobody polls the first create's operation: it finishes by time, and the example reads the
    # instance until it is no longer CREATING.
    ("the create's answer is lost after it landed",
     [{"match": {"kind": "create"}, "lose_response": True}],
     0, ["already exists", "still CREATING", "deleting the instance"], ["lose_response"],
     ["--op-seconds", "2"]),
    ("the operation ends in error",
     [{"match": {"kind": "create"},
       "operation_error": {"code": 9, "message": "Zone has no capacity"}}],
     1, ["the operation failed: 9 FAILED_PRECONDITION: Zone has no capacity"],
     ["operation_error"], []),
]


def run(tmp, pki, faults, extra):
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w", encoding="utf-8") as f:
        f.write(TOKEN + "\n")
    port_file, log_file = os.path.join(tmp, "port"), os.path.join(tmp, "requests.log")
    for f in (port_file, log_file):
        if os.path.exists(f):
            os.remove(f)
    server = subprocess.Popen(
        [sys.executable,
         os.path.join(TESTS, "integration", "memorystore", "memorystore_server.py"),
         "--cert", os.path.join(pki, "server.pem"), "--key", os.path.join(pki, "server.key"),
         "--port-file", port_file, "--log-file", log_file, "--token", TOKEN,
         "--op-polls", "2", "--faults-json", json.dumps(faults), *extra])
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
    return p, log


def main():
    with tempfile.TemporaryDirectory(prefix="stepback-example-") as tmp:
        pki = os.path.join(tmp, "pki")
        subprocess.run(["bash", os.path.join(TESTS, "integration", "make_certs.sh"), OPENSSL, pki],
                       check=True, capture_output=True)
        for name, faults, code, says, actions, extra in SCENARIOS:
            p, log = run(tmp, pki, faults, extra)
            sys.stderr.write("--- %s\n%s" % (name, p.stderr))
            if p.returncode != code:
                sys.exit("FAIL (%s): the example exited %d, not %d\n%s"
                         % (name, p.returncode, code, log))
            for text in says:
                if text not in p.stderr:
                    sys.exit("FAIL (%s): stderr does not say %r" % (name, text))
            for action in actions:
                if "action=" + action not in log:
                    sys.exit("FAIL (%s): fault %s never struck\n%s" % (name, action, log))
            if TOKEN in p.stdout + p.stderr:
                sys.exit("FAIL (%s): the token was printed" % name)
            if code == 0:
                instance = json.loads(p.stdout)
                if instance.get("state") != "READY" or \
                        not instance["name"].endswith("/instances/example"):
                    sys.exit("FAIL (%s): unexpected instance %r" % (name, p.stdout))
                if "kind=delete" not in log:
                    sys.exit("FAIL (%s): the instance was never deleted\n%s" % (name, log))
            elif p.stdout:
                sys.exit("FAIL (%s): stdout should be empty: %r" % (name, p.stdout))
    print("ok: %d scenarios ended as they should" % len(SCENARIOS))


if __name__ == "__main__":
    main()
