"""What the scripts that test the built `stepback` program share (tests/tools/*_test.py):
the failure check, the reader of --trace output, and an nginx on loopback. Imported from the
scripts' own folder."""
import json
import os
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


def free_port():
    """A loopback port nothing listens on now (bound, then released)."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def nginx_conf(directory, log_format, servers):
    """An nginx.conf for one foreground nginx process with everything under `directory`: the
    access log in `log_format` (access.log) and the `servers` blocks, as text."""
    return f"""daemon off;
master_process off;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log info;
events {{ worker_connections 64; }}
http {{
  log_format sb '{log_format}';
  access_log {directory}/access.log sb;
  client_body_temp_path {directory}/client_body;
  proxy_temp_path {directory}/proxy;
  fastcgi_temp_path {directory}/fastcgi;
  uwsgi_temp_path {directory}/uwsgi;
  scgi_temp_path {directory}/scgi;
  default_type application/octet-stream;
{servers}
}}
"""


def start_nginx(nginx, directory, conf, ready):
    """Writes `conf` to directory/nginx.conf and starts `nginx` on it; returns the process once
    ready() is true (polled every 50 ms, 10 s at most: else the test fails)."""
    import subprocess
    import time
    path = os.path.join(directory, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    proc = subprocess.Popen([nginx, "-c", path, "-p", directory], stderr=subprocess.DEVNULL)
    for _ in range(200):
        if ready():
            return proc
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    sys.exit("FAIL: nginx did not come up")
