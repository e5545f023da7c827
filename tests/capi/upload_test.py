"""capi.upload_kill_resume: tests/capi/upload.c (the C API's upload with a state file)
against tests/transfer/upload_server.py, killed (SIGKILL) while its third chunk stalls and
run again: it goes on with the same session from what the server holds, the object is the
file byte for byte, and the state file is gone.

usage: upload_test.py UPLOAD_SERVER TESTS_DIR -- [EMULATOR...] PROGRAM
"""

import json
import os
import signal
import subprocess
import sys
import tempfile

SERVER, TESTS = sys.argv[1], sys.argv[2]
if sys.argv[3:4] != ["--"] or len(sys.argv) < 5:
    sys.exit(__doc__)
PROGRAM = sys.argv[4:]  # A cross build's emulator first, then the program.
sys.path.insert(0, os.path.join(TESTS, "tools"))
from cli_support import check, start_server, wait_until  # noqa: E402

CHUNK = 256 * 1024
SIZE = 6 * CHUNK + 1000


def main():
    with tempfile.TemporaryDirectory() as tmp:
        objects = os.path.join(tmp, "objects")
        os.makedirs(objects)
        script = os.path.join(tmp, "script.json")
        with open(script, "w") as f:
            json.dump([{"on": "chunk", "nth": 3, "do": "stall", "seconds": 10}], f)
        port_file, log_file = os.path.join(tmp, "port"), os.path.join(tmp, "requests.log")
        server, port = start_server(
            [sys.executable, SERVER, "--port-file", port_file, "--log-file", log_file,
             "--objects", objects, "--script", script, "--lifetime", "90"],
            port_file, "the upload server", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}/upload?uploadType=resumable&name=object"
        body = bytes((i * 7 + i // 251) & 0xFF for i in range(SIZE))
        path, state = os.path.join(tmp, "body.bin"), os.path.join(tmp, "body.state")
        with open(path, "wb") as f:
            f.write(body)

        def log():
            if not os.path.exists(log_file):
                return []
            with open(log_file) as f:
                return [json.loads(line) for line in f if line.strip()]
        try:
            proc = subprocess.Popen(PROGRAM + [url, path, state], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
            try:
                wait_until(lambda: os.path.exists(state) and sum(
                    1 for r in log() if r.get("kind") == "chunk") >= 2,
                    "two chunks and a state file within 20 s", limit=20, proc=proc)
                wait_until(lambda: os.path.getsize(state) > 0, "a state record", limit=5)
            finally:
                proc.send_signal(signal.SIGKILL)
                proc.wait(10)
                proc.stderr.close()
            check(os.path.exists(state), "the killed run left no state file")
            print("killed with the state file kept", flush=True)
            p = subprocess.run(PROGRAM + [url, path, state], capture_output=True, timeout=60)
            err = p.stderr.decode(errors="replace")
            print(err[-2000:], flush=True)
            check(p.returncode == 0, f"the second run exited {p.returncode}")
            posts = [r for r in log() if r.get("kind") == "post"]
            check(len(posts) == 1, f"{len(posts)} session POSTs: the second run did not go on")
            check(any(r.get("kind") == "query" for r in log()), "the second run asked nothing")
            with open(os.path.join(objects, "object"), "rb") as f:
                check(f.read() == body, "the object differs from the file")
            check(not os.path.exists(state), "the state file is left after success")
        finally:
            server.kill()
            server.wait()
    print("upload kill and resume: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
