"""The test jvm.transfers: stepback's JVM binding (bindings/jvm) on the host JVM.

usage: run_jvm_test.py --kotlinc K --java J --library-dir D --nginx N --openssl O --repo R --work W

Compiles the binding's Kotlin classes and bindings/jvm/sample/Sample.kt with one kotlinc
invocation, then runs the sample with libstepback_jni.so from D:
  - retry: a RetryMachine through a 503, a wait and a 200, and a policy refused;
  - download: from nginx over TLS (a self-signed certificate), paused after 1 MiB and resumed
    in the same process, its run hint PAUSED then DONE: progress lines, "paused"/"resumed",
    the file equal to the server's; nginx's log shows the resume as a 206, and the options'
    user agent and header on every request;
  - options: a policy with no retries against a location that answers 503 ends
    RETRIES_EXHAUSTED after one attempt (one request in nginx's log); a policy with
    multiplier 1, a header too long and 33 headers are refused with StepbackException;
  - the download with a CA that did not sign the server: it fails, with no file;
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
import subprocess
import sys
import tempfile

SIZE = 4 * 1024 * 1024
UPLOAD_SIZE = 1024 * 1024 + 12345
LOG_FORMAT = "$request_method $uri $status $body_bytes_sent [$http_user_agent] [$http_x_sample]"
SERVER = """  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    root {dir}/www;
    limit_rate 1m;
    location = /unavailable {{ return 503; }}
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


def check_download(opts, support, example_support, jar, tmp, ca):
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    served = random.Random(7).randbytes(SIZE)
    with open(os.path.join(www, "big.bin"), "wb") as f:
        f.write(served)
    nginx, port = example_support.start_nginx(support, opts.nginx, tmp, LOG_FORMAT, SERVER)
    url = f"https://127.0.0.1:{port}/big.bin"
    log = os.path.join(tmp, "access.log")
    try:
        out = os.path.join(tmp, "big.bin")
        code, stdout, _ = sample(opts, support, jar, "download", url, out, ca, str(1024 * 1024))
        support.check(code == 0, f"the download exited {code}")
        support.check("paused at byte " in stdout and "\nresumed\n" in stdout,
                      "no pause and resume")
        support.check(f"of {SIZE} bytes" in stdout, "no progress events")
        with open(out, "rb") as f:
            support.check(f.read() == served, "the file differs from the server's")
        support.check(not os.path.exists(out + ".part"), "the part file is left")
        with open(log) as f:
            gets = [line.split() for line in f if line.startswith("GET ")]
        statuses = [fields[2] for fields in gets]
        support.check(statuses[:1] == ["200"] and statuses[-1] == "206",
                      f"nginx answered {statuses}: no resume by Range")
        support.check(all(fields[4:] == ["[stepback-sample/1]", "[jvm]"] for fields in gets),
                      f"the user agent and the header did not reach nginx: {gets}")
        print("download with options, pause and resume: ok", flush=True)

        open(log, "w").close()
        out = os.path.join(tmp, "unavailable.bin")
        code, stdout, _ = sample(opts, support, jar, "options", f"https://127.0.0.1:{port}/unavailable",
                                 out, ca)
        support.check(code == 0 and "options: ok" in stdout, f"the options: exit {code}")
        with open(log) as f:
            requests = [line.split()[:3] for line in f]
        support.check(requests == [["GET", "/unavailable", "503"]],
                      f"with no retries nginx saw {requests}, not one request")
        print("options: ok", flush=True)

        out = os.path.join(tmp, "untrusted.bin")
        other = os.path.join(tmp, "other")
        os.makedirs(other)
        other_ca, _ = example_support.self_signed(opts.openssl, other)
        code, stdout, _ = sample(opts, support, jar, "download", url, out, other_ca, str(SIZE))
        support.check(code == 1 and "tls_verify" in stdout and not os.path.exists(out),
                      f"a server the CA did not sign: exit {code}")
        print("untrusted server: ok", flush=True)
    finally:
        nginx.kill()
        nginx.wait(10)


def check_upload(opts, support, jar, tmp, ca, key):
    objects = os.path.join(tmp, "objects")
    os.makedirs(objects)
    port_file = os.path.join(tmp, "upload_port")
    server = os.path.join(opts.repo, "tests", "transfer", "upload_server.py")
    proc, port = support.start_server(
        [sys.executable, server, "--port-file", port_file, "--objects", objects,
         "--log-file", os.path.join(tmp, "upload_requests.log"),
         "--lifetime", "120", "--cert", ca, "--key", key],
        port_file, "the upload server", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        body = random.Random(8).randbytes(UPLOAD_SIZE)
        path = os.path.join(tmp, "upload.bin")
        with open(path, "wb") as f:
            f.write(body)
        url = f"https://127.0.0.1:{port}/upload?uploadType=resumable&name=jvm.bin"
        code, stdout, _ = sample(opts, support, jar, "upload", url, path, ca)
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
    sys.path.insert(0, os.path.join(opts.repo, "examples"))
    import cli_support as support  # noqa: E402 (tests/tools/cli_support.py)
    import example_support  # noqa: E402 (examples/example_support.py: nginx, a certificate)

    support.check(glob.glob(os.path.join(opts.library_dir, "libstepback_jni.*")),
                  f"no libstepback_jni in {opts.library_dir}")
    shutil.rmtree(opts.work, ignore_errors=True)
    jar = compile_sources(opts, support)
    check_doc_blocks(opts, support)

    code, stdout, _ = sample(opts, support, jar, "retry")
    support.check(code == 0 and "retry: ok" in stdout, f"the retry machine: exit {code}")

    with tempfile.TemporaryDirectory() as tmp:
        # The server's certificate is its own CA; the upload server uses it too.
        ca, key = example_support.self_signed(opts.openssl, tmp)
        check_download(opts, support, example_support, jar, tmp, ca)
        check_upload(opts, support, jar, tmp, ca, key)
    print("jvm: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
