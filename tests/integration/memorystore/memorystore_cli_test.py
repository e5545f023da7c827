"""Runs `stepback get --operation` against the local Memorystore for Redis over TLS.

usage: memorystore_cli_test.py STEPBACK_BINARY OPENSSL CASE
Each CASE is one CTest test (see tests/integration/memorystore/CMakeLists.txt). The
certificates come from tests/integration/make_certs.sh, the server is memorystore_server.py
beside this file.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from cli_support import check, start_server, wait_until  # noqa: E402

BINARY = sys.argv[1]
OPENSSL = sys.argv[2]
MAKE_CERTS = os.path.join(HERE, "..", "make_certs.sh")
TOKEN = "ya29.c.never-print-this-token"
OTHER_TOKEN = "ya29.c.the-rotated-token"


class Memorystore:
    """memorystore_server.py on an ephemeral port, stopped on exit."""

    def __init__(self, pki, tmp, *extra):
        self.port_file = os.path.join(tmp, "port")
        self.log_file = os.path.join(tmp, "requests.log")
        for f in (self.port_file, self.log_file):
            if os.path.exists(f):
                os.remove(f)
        self.process, self.port = start_server(
            [sys.executable, os.path.join(HERE, "memorystore_server.py"),
             "--cert", os.path.join(pki, "server.pem"), "--key", os.path.join(pki, "server.key"),
             "--port-file", self.port_file, "--log-file", self.log_file, "--lifetime", "60",
             *extra], self.port_file, "memorystore_server.py", stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        self.ca = os.path.join(pki, "ca.pem")

    def instances(self, tail=""):
        return "https://127.0.0.1:%d/v1/projects/p/locations/us-central1/instances%s" % (
            self.port, tail)

    def log(self):
        with open(self.log_file, encoding="utf-8") as f:
            return f.read()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def get(server, *args, timeout=60, token=TOKEN, operation=True):
    cmd = [BINARY, "get", "--cacert", server.ca, *(["--operation"] if operation else []), *args]
    if token is not None and "--token-file" not in args:
        cmd += ["--oauth2-bearer", token]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def create(server, instance="cache", *args, **kwargs):
    return get(server, "-X", "POST", server.instances("?instanceId=" + instance), "--data",
               '{"tier":"BASIC","memorySizeGb":1}', *args, **kwargs)


def trace_events(err):
    events = []
    for line in err.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            sys.exit("FAIL: a --trace line is not JSON: %r" % line)
    return events


def case_create_read_delete(pki, tmp):
    faults = [{"match": {"kind": "get"}, "status": 500}]  # The read is retried like any GET.
    server = Memorystore(pki, tmp, "--token", TOKEN, "--op-polls", "2",
                         "--faults-json", json.dumps(faults))
    code, out, err, _ = create(server)
    check(code == 0, "create exited %d: %s" % (code, err))
    instance = json.loads(out)
    check(instance["state"] == "READY" and instance["name"].endswith("/instances/cache"), out)
    check("operation projects/p/locations/us-central1/operations/" in err, err)
    check("(create)" in err and "Creating instance" in err and "done after 2 polls" in err, err)
    code, out, err, _ = get(server, server.instances("/cache"), operation=False)
    check(code == 0 and json.loads(out)["state"] == "READY", "read: %d %s %s" % (code, out, err))
    check("500" in err and server.log().count("kind=get") == 2, err + server.log())
    code, out, err, _ = get(server, "-X", "DELETE", server.instances("/cache"))
    check(code == 0 and "google.protobuf.Empty" in out, "delete: %d %s %s" % (code, out, err))
    check(server.log().count("kind=operation") == 4, server.log())
    server.stop()


def case_faults(pki, tmp):
    faults = [
        {"match": {"kind": "create"}, "status": 503, "retry_delay": 0.2},
        {"match": {"kind": "operation", "nth": 1}, "status": 429, "retry_delay": 0.2},
        {"match": {"kind": "operation", "nth": 3}, "reset": True},
        {"match": {"kind": "operation", "nth": 5}, "expire_token": True},
    ]
    # (A stall takes the profile's read timeout, 30 s, to show: memorystore_test covers it.)
    server = Memorystore(pki, tmp, "--token", TOKEN, "--op-polls", "3",
                         "--faults-json", json.dumps(faults))
    code, out, err, _ = create(server, "cache", "--profile", "desktop", timeout=120)
    check(code == 0, "create through faults exited %d: %s\n%s" % (code, err, server.log()))
    check(json.loads(out)["state"] == "READY", out)
    for action in ("status", "reset", "expire_token"):
        check("action=" + action in server.log(), "%s never struck: %s" % (action, server.log()))
    # 503 and 429 wait; the 401 goes again at once, and so does the reset, which strikes a
    # poll on the connection kept from the request before (a kept connection found dead).
    check(err.count("retrying in") == 2, err)
    server.stop()


def case_operation_error(pki, tmp):
    faults = [{"match": {"kind": "create"},
               "operation_error": {"code": 9, "message": "Zone has no capacity",
                                   "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                                "reason": "ZONE_RESOURCE_POOL_EXHAUSTED"}]}}]
    server = Memorystore(pki, tmp, "--op-polls", "1", "--faults-json", json.dumps(faults))
    code, out, err, _ = create(server, token=None)
    check(code == 11, "operation error exited %d: %s" % (code, err))
    check("9 FAILED_PRECONDITION: Zone has no capacity" in err, err)
    check("ZONE_RESOURCE_POOL_EXHAUSTED" in err, err)
    check(out == "", "stdout must stay empty: %r" % out)
    server.stop()


def case_gave_up_polling(pki, tmp):
    server = Memorystore(pki, tmp, "--op-polls", "0")
    code, _, err, seconds = create(server, "cache", "--deadline", "3", token=None)
    check(code == 12, "gave up polling exited %d: %s" % (code, err))
    check("gave up polling" in err and seconds < 10, "%s (%.1f s)" % (err, seconds))
    server.stop()


def case_gave_up_retrying(pki, tmp):
    faults = [{"match": {"kind": "operation"}, "status": 503, "times": -1}]
    server = Memorystore(pki, tmp, "--faults-json", json.dumps(faults))
    code, _, err, _ = create(server, "cache", "--max-retries", "1", "--max-backoff", "0.2",
                             token=None)
    check(code == 3, "gave up retrying exited %d: %s" % (code, err))
    check("a poll gave up retrying" in err, err)
    server.stop()


def case_already_exists(pki, tmp):
    faults = [{"match": {"kind": "create"}, "lose_response": True}]
    server = Memorystore(pki, tmp, "--faults-json", json.dumps(faults))
    code, out, err, _ = create(server, token=None)
    check(code == 13, "lost create exited %d: %s" % (code, err))
    check("already exists" in err and out == "", err)
    check(server.log().count("kind=create") == 2, server.log())
    server.stop()


def case_token_never_printed(pki, tmp):
    # An expired token on a poll (refreshed once), a 503 on another: every path that prints.
    faults = [{"match": {"kind": "operation", "nth": 1}, "expire_token": True},
              {"match": {"kind": "operation", "nth": 3}, "status": 503, "retry_delay": 0.1}]
    server = Memorystore(pki, tmp, "--token", TOKEN, "--op-polls", "2",
                         "--faults-json", json.dumps(faults))
    for extra in ([], ["--trace"]):
        code, out, err, _ = create(server, "cache-" + str(len(extra)), *extra)
        check(code == 0, "exited %d: %s" % (code, err))
        check(TOKEN not in out + err, "the token was printed: %s" % err)
        check("ya29" not in out + err, "part of the token was printed: %s" % err)
    events = trace_events(err)
    names = [e["event"] for e in events]
    for name in ("operation", "poll", "done"):
        check(name in names, "no %s event: %s" % (name, names))
    done = events[-1]
    check(done["event"] == "done" and done["outcome"] == "succeeded", done)
    # A second 401 in a row is final.
    faults = [{"match": {"kind": "operation"}, "expire_token": True, "times": 2}]
    server.stop()
    server = Memorystore(pki, tmp, "--token", TOKEN, "--faults-json", json.dumps(faults))
    code, out, err, _ = create(server, "cache", "--trace")
    check(code == 4, "twice-rejected token exited %d: %s" % (code, err))
    check(TOKEN not in out + err and "ya29" not in out + err, err)
    check(trace_events(err)[-1]["status"] == 401, err)
    server.stop()


def case_token_file(pki, tmp):
    # The server accepts only the token in FILE, read on every request; the file changes while
    # the operation runs, and every attempt must carry the current one (no 401 at all).
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w", encoding="utf-8") as f:
        f.write(TOKEN + "\n")
    server = Memorystore(pki, tmp, "--token-file", token_file, "--op-polls", "3")
    p = subprocess.Popen([BINARY, "get", "--cacert", server.ca, "--operation", "-X", "POST",
                          server.instances("?instanceId=cache"), "--data", "{}",
                          "--token-file", token_file],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: "kind=operation" in server.log(), lambda: "no poll seen: " + server.log(),
               20, proc=p)
    tmp_file = token_file + ".new"
    with open(tmp_file, "w", encoding="utf-8") as f:
        f.write("  " + OTHER_TOKEN + "  \n")
    os.rename(tmp_file, token_file)  # gcloud auth print-access-token > FILE, atomically.
    out, err = p.communicate(timeout=60)
    check(p.returncode == 0, "token-file run exited %d: %s\n%s" % (p.returncode, err, server.log()))
    log = server.log()
    check("auth=invalid" not in log and "auth=missing" not in log, log)
    check(log.count("auth=ok") == 4, log)
    check(TOKEN not in out + err and OTHER_TOKEN not in out + err, err)
    server.stop()


def main():
    case = sys.argv[3]
    with tempfile.TemporaryDirectory(prefix="stepback-memorystore-") as tmp:
        pki = os.path.join(tmp, "pki")
        made = subprocess.run(["bash", MAKE_CERTS, OPENSSL, pki], capture_output=True, text=True)
        check(made.returncode == 0, "make_certs.sh failed: " + made.stderr)
        globals()["case_" + case](pki, tmp)
    print("ok " + case)


if __name__ == "__main__":
    main()
