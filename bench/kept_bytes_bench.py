"""What reading back a kept part costs on resume (transfer::check_kept_bytes).

usage: kept_bytes_bench.py STEPBACK_BINARY [MIB] [RUNS]
  e.g. bench/kept_bytes_bench.py build/linux-armhf-mobile/tools/stepback 64 3
  (a cross build's binary runs under qemu-user through binfmt, as the tests run it)

A plain-HTTP server on 127.0.0.1 sends an object of 2 * MIB MiB and cuts the first response
after MIB MiB; `stepback get -o FILE --max-retries 0` keeps FILE.part and its checkpoint.
The same command is then run again with --trace, and the server answers 503 at once: the
time from the process start to the first attempt event is what the start costs, reading
back the part included. Done twice: once with x-goog-hash on the responses (the checkpoint
carries digests: the part is hashed again, CRC-32C and MD5) and once without (nothing is
read). Prints the median of RUNS for each and the difference per MiB.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
from cli_support import RespondingServer, http_response  # noqa: E402

BINARY = sys.argv[1]
MIB = int(sys.argv[2]) if len(sys.argv) > 2 else 64
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
KEPT = MIB << 20
CHUNK = bytes(range(256)) * 4096  # 1 MiB.
# Well-formed digests; their values do not matter here (the run never reaches the end).
HASH = "crc32c=AAAAAA==,md5=AAAAAAAAAAAAAAAAAAAAAA=="


class Server:
    """Serves the object as the module says: the request while `first` is set gets the head
    (with x-goog-hash while `hashed` is) and MIB MiB of body, then the connection closes;
    every later one a 503."""

    def __init__(self):
        self.hashed, self.first = True, True
        self.http = RespondingServer(self.respond)
        self.port = self.http.port

    def respond(self, n, head):
        if not self.first:
            return http_response("503 Service Unavailable", [], b"", close=True)
        self.first = False
        fields = [("ETag", '"k"')] + ([("x-goog-hash", HASH)] if self.hashed else [])
        whole = http_response("200 OK", fields, CHUNK * (2 * MIB), close=True)
        return whole[: len(whole) - KEPT]  # Cut after MIB MiB of body.


def start_cost(server, hashed, tmp):
    out = os.path.join(tmp, "obj")
    for leftover in (out, out + ".part", out + ".part.state"):
        if os.path.exists(leftover):
            os.remove(leftover)
    server.hashed, server.first = hashed, True
    url = f"http://127.0.0.1:{server.port}/o"
    first = subprocess.run([BINARY, "get", url, "-o", out, "--max-retries", "0"],
                           capture_output=True, timeout=600)
    if first.returncode != 3 or os.path.getsize(out + ".part") != KEPT:
        sys.exit(f"the first run did not keep {KEPT} bytes: exit {first.returncode}")
    again = subprocess.run([BINARY, "get", url, "-o", out, "--max-retries", "0", "--trace"],
                           capture_output=True, text=True, timeout=600)
    for line in again.stderr.splitlines():
        e = json.loads(line)
        if e["event"] == "attempt":
            return e["t_ms"]
    sys.exit(f"no attempt event: {again.stderr[-400:]}")


def main():
    server = Server()
    with tempfile.TemporaryDirectory() as tmp:
        with_digests = [start_cost(server, True, tmp) for _ in range(RUNS)]
        without = [start_cost(server, False, tmp) for _ in range(RUNS)]
    a, b = statistics.median(with_digests), statistics.median(without)
    print(f"{MIB} MiB kept, {RUNS} runs each: first attempt at {a} ms with digests "
          f"(read back and hashed again), {b} ms without; {(a - b) / MIB:.2f} ms per MiB")


if __name__ == "__main__":
    main()
