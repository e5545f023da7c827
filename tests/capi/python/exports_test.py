"""capi.shared_exports: libstepback.so exports exactly the functions stepback.h declares
(nm -D --defined-only): each of them, and no other symbol (the C++ library, mbedTLS, c-ares,
nanopb's tables and the GCM engine inside stay local).

usage: exports_test.py NM LIBSTEPBACK HEADER
"""

import re
import subprocess
import sys

NM, LIB, HEADER = sys.argv[1], sys.argv[2], sys.argv[3]


def main():
    with open(HEADER) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    # A declared function's name is followed by "(" (a function pointer type's by ")").
    declared = set(re.findall(r"\b(stepback_[a-z0-9_]+)\s*\(", text))
    out = subprocess.run([NM, "-D", "--defined-only", LIB], capture_output=True, text=True,
                         check=True, timeout=30).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    if len(declared) < 40:
        sys.exit(f"FAIL: only {len(declared)} functions found in {HEADER}")
    missing, extra = sorted(declared - exported), sorted(exported - declared)
    if missing or extra:
        sys.exit(f"FAIL: not exported: {missing}; exported but not in the header: {extra}")
    print(f"shared_exports: ok ({len(exported)} functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
