"""The test jvm.transfers: stepback's JVM binding (bindings/jvm) on the host JVM.

usage: run_jvm_test.py --kotlinc K --java J --library-dir D --nginx N --openssl O --repo R --work W

Compiles the binding's Kotlin classes and bindings/jvm/sample/Sample.kt with one kotlinc
invocation, then runs the sample with libstepback_jni.so from D:
  - retry: a RetryMachine through a 503, a wait and a 200, and a policy refused;
  - download: from nginx over TLS (a throwaway CA), paused after 1 MiB and resumed in the same
    process: progress lines, "paused"/"resumed", the file equal to the server's, and nginx's
    log shows the resume as a 206;
  - the same download with a CA that did not sign the server: it fails, with no file;
  - upload: to tests/transfer/upload_server.py over TLS in 256 KiB chunks: the stored object
    equals the file.
Every wait is bounded: each subprocess has a timeout, each poll a limit.
"""

import argparse
import glob
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile

SIZE = 4 * 1024 * 1024
UPLOAD_SIZE = 1024 * 1024 + 12345
LOG_FORMAT = "$request_method $uri $status $body_bytes_sent"
SERVER = """  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {pki}/server.pem;
    ssl_certificate_key {pki}/server.key;
    root {dir}/www;
    limit_rate 1m;
  }}"""


def compile_sources(opts, support):
    """One kotlinc run over the binding, the sample and the Kotlin files of docs/android.md
    (examples/android/kotlin/, against compile-only stand-ins of android.*: kotlinc reads the
    .java stand-ins for their declarations and compiles none); returns the jar."""
    jar = os.path.join(opts.work, "stepback_sample.jar")
    here = os.path.join(opts.repo, "bindings", "jvm")
    sources = [os.path.join(here, "kotlin"), os.path.join(here, "sample"),
               os.path.join(here, "test", "android_stubs"),
               os.path.join(opts.repo, "examples", "android", "kotlin")]
    os.makedirs(opts.work, exist_ok=True)
    p = subprocess.run([opts.kotlinc, "-include-runtime", "-d", jar] + sources,
                       capture_output=True, text=True, timeout=240)
    print(f"+ kotlinc -> exit {p.returncode}\n{p.stderr[-3000:]}", flush=True)
    support.check(p.returncode == 0 and os.path.exists(jar), "kotlinc failed")
    return jar


def check_doc_blocks(opts, support):
    """Every `kotlin` block of docs/android.md is the text of a file compile_sources built."""
    texts = []
    for root in ("bindings/jvm/kotlin", "bindings/jvm/sample", "examples/android/kotlin"):
        for path in glob.glob(os.path.join(opts.repo, root, "**", "*.kt"), recursive=True):
            with open(path) as f:
                texts.append(f.read())
    with open(os.path.join(opts.repo, "docs", "android.md")) as f:
        blocks = re.findall(r"```kotlin\n(.*?)```", f.read(), re.S)
    support.check(len(blocks) >= 3, f"docs/android.md has {len(blocks)} kotlin blocks")
    for block in blocks:
        support.check(any(block in text for text in texts),
                      "a kotlin block of docs/android.md is in no compiled file:\n" + block[:300])
    print(f"docs/android.md: {len(blocks)} kotlin blocks, each a compiled file's text", flush=True)


def sample(opts, support, jar, *args, timeout=150):
    p = subprocess.run([opts.java, f"-Djava.library.path={opts.library_dir}", "-Xcheck:jni",
                        "-cp", jar, "dev.stepback.sample.SampleKt", *args],
                       capture_output=True, text=True, timeout=timeout)
    lines = p.stdout.splitlines()
    shown = "\n".join(lines if len(lines) < 40 else lines[:10] + ["..."] + lines[-20:])
    print(f"+ Sample {' '.join(args[:1])} -> exit {p.returncode}\n{shown}\n{p.stderr[-3000:]}",
          flush=True)
    # -Xcheck:jni reports a misuse of JNI as a warning; here it is a failure.
    support.check("WARNING in native method" not in p.stderr, "-Xcheck:jni warned")
    return p.returncode, p.stdout, p.stderr


def check_download(opts, support, jar, tmp, pki):
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    served = random.Random(7).randbytes(SIZE)
    with open(os.path.join(www, "big.bin"), "wb") as f:
        f.write(served)
    port = support.free_port()

    def answers():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    nginx = support.start_nginx(opts.nginx, tmp, support.nginx_conf(
        tmp, LOG_FORMAT, SERVER.format(port=port, pki=pki, dir=tmp)), answers)
    url = f"https://127.0.0.1:{port}/big.bin"
    try:
        out = os.path.join(tmp, "big.bin")
        code, stdout, _ = sample(opts, support, jar, "download", url, out, os.path.join(pki, "ca.pem"),
                                 str(1024 * 1024))
        support.check(code == 0, f"the download exited {code}")
        support.check("paused at byte " in stdout and "\nresumed\n" in stdout,
                      "no pause and resume")
        support.check(f"of {SIZE} bytes" in stdout, "no progress events")
        with open(out, "rb") as f:
            support.check(f.read() == served, "the file differs from the server's")
        support.check(not os.path.exists(out + ".part"), "the part file is left")
        with open(os.path.join(tmp, "access.log")) as f:
            statuses = [line.split()[2] for line in f if line.startswith("GET ")]
        support.check(statuses[:1] == ["200"] and statuses[-1] == "206",
                      f"nginx answered {statuses}: no resume by Range")
        print("download with pause and resume: ok", flush=True)

        out = os.path.join(tmp, "untrusted.bin")
        code, stdout, _ = sample(opts, support, jar, "download", url, out, os.path.join(pki, "other_ca.pem"),
                                 str(SIZE))
        support.check(code == 1 and "tls_verify" in stdout and not os.path.exists(out),
                      f"a server the CA did not sign: exit {code}")
        print("untrusted server: ok", flush=True)
    finally:
        nginx.kill()
        nginx.wait(10)


def check_upload(opts, support, jar, tmp, pki):
    objects = os.path.join(tmp, "objects")
    os.makedirs(objects)
    port_file = os.path.join(tmp, "upload_port")
    server = os.path.join(opts.repo, "tests", "transfer", "upload_server.py")
    proc, port = support.start_server(
        [sys.executable, server, "--port-file", port_file, "--objects", objects,
         "--log-file", os.path.join(tmp, "upload_requests.log"),
         "--lifetime", "120", "--cert", os.path.join(pki, "server.pem"),
         "--key", os.path.join(pki, "server.key")],
        port_file, "the upload server", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        body = random.Random(8).randbytes(UPLOAD_SIZE)
        path = os.path.join(tmp, "upload.bin")
        with open(path, "wb") as f:
            f.write(body)
        url = f"https://127.0.0.1:{port}/upload?uploadType=resumable&name=jvm.bin"
        code, stdout, _ = sample(opts, support, jar, "upload", url, path, os.path.join(pki, "ca.pem"))
        support.check(code == 0, f"the upload exited {code}")
        support.check(f"server holds {UPLOAD_SIZE} bytes" in stdout, "no committed events")
        stored = os.path.join(objects, "jvm.bin")
        support.check(os.path.exists(stored), "the server stored no object")
        with open(stored, "rb") as f:
            support.check(f.read() == body, "the stored object differs from the file")
        print("upload: ok", flush=True)
    finally:
        proc.kill()
        proc.wait(10)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("kotlinc", "java", "library-dir", "nginx", "openssl", "repo", "work"):
        p.add_argument("--" + name, required=True)
    opts = p.parse_args()
    sys.path.insert(0, os.path.join(opts.repo, "tests", "tools"))
    import cli_support as support  # noqa: E402 (tests/tools/cli_support.py)

    support.check(glob.glob(os.path.join(opts.library_dir, "libstepback_jni.*")),
                  f"no libstepback_jni in {opts.library_dir}")
    shutil.rmtree(opts.work, ignore_errors=True)
    jar = compile_sources(opts, support)
    check_doc_blocks(opts, support)

    code, stdout, _ = sample(opts, support, jar, "retry")
    support.check(code == 0 and "retry: ok" in stdout, f"the retry machine: exit {code}")

    with tempfile.TemporaryDirectory() as tmp:
        pki = os.path.join(tmp, "pki")
        subprocess.run(["bash", os.path.join(opts.repo, "tests", "integration", "make_certs.sh"),
                        opts.openssl, pki], check=True, capture_output=True, timeout=60)
        check_download(opts, support, jar, tmp, pki)
        check_upload(opts, support, jar, tmp, pki)
    print("jvm: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
