"""What the examples' test drivers (examples/*/run_example.py) share: their arguments, a
self-signed certificate for 127.0.0.1, and nginx serving HTTPS on a free loopback port.
Each driver puts this folder on sys.path and imports it; it brings tests/tools/cli_support.py
(as `support`) along."""

import argparse
import os
import socket
import subprocess
import sys


def parse(doc, nginx=True):
    """The drivers' arguments: --nginx (when `nginx`), --openssl, --tests and the example's
    command (an emulator may come first). Returns (opts, cli_support)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    if nginx:
        p.add_argument("--nginx", required=True)
    p.add_argument("--openssl", required=True)
    p.add_argument("--tests", required=True)
    p.add_argument("app", nargs="+")
    opts = p.parse_args()
    sys.path.insert(0, os.path.join(opts.tests, "tools"))
    import cli_support  # noqa: E402 (tests/tools/cli_support.py)
    return opts, cli_support


def self_signed(openssl, tmp):
    """A P-256 certificate for 127.0.0.1 (its own CA) in tmp; returns (cert, key) paths."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=30)
    return cert, key


def start_nginx(support, nginx, tmp, log_format, server):
    """nginx on a free loopback port with tmp's cert.pem and key.pem, `server` a server block
    with {port} and {dir} (tmp) to fill; returns (process, port) once it answers."""
    port = support.free_port()

    def answers():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    conf = support.nginx_conf(tmp, log_format, server.format(port=port, dir=tmp))
    return support.start_nginx(nginx, tmp, conf, answers), port
