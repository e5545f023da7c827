"""Runs examples/upload against tests/transfer/upload_server.py over TLS (the test examples.upload).

usage: run_example.py --openssl OPENSSL --tests TESTS_DIR -- [EMULATOR...] EXAMPLE

The server keeps finished objects in a folder and logs every request. A file of a few MiB goes
in the example's 1 MiB chunks, with two faults on the server's side:
  - the second chunk is answered 503: the run waits, asks what the server holds and sends the
    chunk again;
  - the third chunk stalls (the server reads it, keeps none of it and says nothing): the run is
    SIGKILLed there, once its state file records two committed chunks;
then the example runs again: it goes on with the same session (one session POST in the
server's log, the second run's chunks in it), sends only what the server does not hold, and
the stored object is the file byte for byte, with the state file removed.
Every wait is bounded: each subprocess has a timeout, each poll a limit.
"""

import json
import os
import random
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import example_support  # noqa: E402 (examples/example_support.py)

CHUNK = 1024 * 1024  # The example's chunk size.
SIZE = 3 * CHUNK + 12345


def varint(data, i):
    n = shift = 0
    while True:
        n |= (data[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not data[i - 1] & 0x80:
            return n, i


def committed(state):
    """The committed offset (field 5) of a state record, framed as the library writes it:
    "SBTS", version u16, 0 u16, length u32, the protobuf message, CRC-32C u32; None when
    there is no record yet."""
    try:
        with open(state, "rb") as f:
            record = f.read()
    except FileNotFoundError:
        return None
    message = record[12:12 + int.from_bytes(record[8:12], "little")]
    i = 0
    while i < len(message):
        key, i = varint(message, i)
        wire = key & 7
        if wire == 0:
            value, i = varint(message, i)
            if key >> 3 == 5:
                return value
        elif wire == 2:
            n, i = varint(message, i)
            i += n
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
    return 0


def main():
    opts, support = example_support.parse(__doc__, nginx=False)
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = example_support.self_signed(opts.openssl, tmp)
        objects = os.path.join(tmp, "objects")
        os.makedirs(objects)
        script = os.path.join(tmp, "script.json")
        with open(script, "w") as f:
            json.dump([{"on": "chunk", "nth": 2, "do": "status", "status": 503},
                       {"on": "chunk", "nth": 4, "do": "stall", "commit": 0, "seconds": 60}], f)
        log_file = os.path.join(tmp, "requests.log")
        port_file = os.path.join(tmp, "port")
        server, port = support.start_server(
            [sys.executable, os.path.join(opts.tests, "transfer", "upload_server.py"),
             "--port-file", port_file, "--log-file", log_file, "--objects", objects,
             "--script", script, "--lifetime", "150", "--cert", cert, "--key", key],
            port_file, "the upload server", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def log():
            if not os.path.exists(log_file):
                return []
            with open(log_file) as f:
                return [json.loads(line) for line in f if line.strip()]

        body = random.Random(1).randbytes(SIZE)
        path = os.path.join(tmp, "photo.bin")
        with open(path, "wb") as f:
            f.write(body)
        state = path + ".upload.state"
        url = f"https://127.0.0.1:{port}/upload?uploadType=resumable&name=photo.bin"
        try:
            # The first run: a 503 retried, then killed in the stalled third chunk.
            with tempfile.TemporaryFile() as err1:
                proc = subprocess.Popen(opts.app + [path, url, cert], stdout=subprocess.DEVNULL,
                                        stderr=err1)
                try:
                    support.wait_until(
                        lambda: committed(state) == 2 * CHUNK and
                        any(r.get("answer") == "stall" for r in log()),
                        "no stall after two committed chunks within 60 s", limit=60, proc=proc)
                finally:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(10)
                err1.seek(0)
                err = err1.read().decode(errors="replace")
            print(f"+ first run, killed:\n{err[-2000:]}", flush=True)
            support.check("exchange 3: HTTP 503" in err and "retrying in" in err,
                          "the first run did not retry the 503")
            support.check(f"the server holds {2 * CHUNK} bytes" in err,
                          "the first run did not report two committed chunks")
            support.check(os.path.exists(state), "the killed run left no state file")
            seen = len(log())

            # Run again: the same session, only the missing bytes.
            p2 = subprocess.run(opts.app + [path, url, cert], capture_output=True, timeout=90)
            err = p2.stderr.decode(errors="replace")
            print(f"+ second run -> exit {p2.returncode}\n{err[-2000:]}", flush=True)
            support.check(p2.returncode == 0, f"the second run exited {p2.returncode}")
            support.check(f"going on with the session that held {2 * CHUNK} bytes" in err,
                          "the second run did not take up the record")
            # Progress: what the server holds after each chunk (the lines of bytes sent come
            # a quarter-second apart, which a loopback run may not last).
            support.check(f"the server holds {SIZE} bytes" in err, "no progress lines")
            with open(os.path.join(objects, "photo.bin"), "rb") as f:
                support.check(f.read() == body, "the stored object differs from the file")
            support.check(not os.path.exists(state), "the state file is left")
            records = log()
            posts = [r for r in records if r.get("kind") == "post"]
            support.check(len(posts) == 1, f"{len(posts)} sessions opened: {posts}")
            second = [r for r in records[seen:] if r.get("kind") in ("chunk", "query")]
            support.check(second and all(r.get("session") == posts[0]["session"] for r in second),
                          f"the second run used another session: {second}")
            support.check(second[0]["kind"] == "query", "the second run did not ask first")
            resent = sum(r["received"] for r in second if r["kind"] == "chunk")
            support.check(resent == SIZE - 2 * CHUNK,
                          f"the second run sent {resent} body bytes for {SIZE - 2 * CHUNK} missing")
            print(f"second run: one session, {resent} of {SIZE} bytes sent: ok", flush=True)
        finally:
            server.kill()
            server.wait(10)
    print("upload: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
