#!/usr/bin/env bash
# Generates the integration tests' throwaway PKI into OUT_DIR with the openssl CLI:
#
#   ca.pem / ca.key              the CA the clients trust ("stepback test CA")
#   other_ca.pem                 a CA no server certificate chains to (the untrusted case)
#   server.pem / server.key      localhost + 127.0.0.1, signed by ca, valid now
#   wrong_host.pem / .key        other.example only, signed by ca (the host name case)
#   expired.pem / expired.key    localhost + 127.0.0.1, signed by ca, valid 2020-2021 only
#
# OpenSSL 3.0 (Debian 12) has no -not_before/-not_after, so the expired certificate is signed
# with `openssl ca -startdate/-enddate` and a throwaway CA database. Keys are P-256 and never
# leave OUT_DIR (a temporary folder the test fixture removes).
#
# Usage: make_certs.sh OPENSSL OUT_DIR
set -euo pipefail

openssl=$1
out=$2
mkdir -p "$out"
cd "$out"

ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

cat >ext.cnf <<'EOF'
[ca_ext]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[leaf_local]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
authorityKeyIdentifier = keyid

[leaf_other]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:other.example
authorityKeyIdentifier = keyid
EOF

# make_ca NAME CN: a self-signed CA.
make_ca() {
  "$openssl" req -x509 "${ec[@]}" -keyout "$1.key" -out "$1.pem" -days 3 -subj "/CN=$2" \
    -config ext.cnf -extensions ca_ext 2>/dev/null
}

# make_leaf NAME CN EXTENSIONS: a key and CSR, signed by ca for a few days from now.
make_leaf() {
  "$openssl" req -new "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
  "$openssl" x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -set_serial "0x$(
    "$openssl" rand -hex 8)" -days 3 -extfile ext.cnf -extensions "$3" -out "$1.pem" 2>/dev/null
}

make_ca ca "stepback test CA"
make_ca other_ca "stepback other CA"
make_leaf server localhost leaf_local
make_leaf wrong_host other.example leaf_other

# The expired leaf: `openssl ca` takes explicit validity dates.
mkdir -p ca_db
: >ca_db/index.txt
echo 1000 >ca_db/serial
cat >ca.cnf <<EOF
[ca]
default_ca = throwaway
[throwaway]
dir = $out/ca_db
database = \$dir/index.txt
serial = \$dir/serial
new_certs_dir = \$dir
certificate = $out/ca.pem
private_key = $out/ca.key
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
commonName = supplied
[leaf_local]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
authorityKeyIdentifier = keyid
EOF
"$openssl" req -new "${ec[@]}" -keyout expired.key -out expired.csr -subj "/CN=localhost" 2>/dev/null
"$openssl" ca -batch -config ca.cnf -extensions leaf_local -notext \
  -startdate 20200101000000Z -enddate 20210101000000Z -in expired.csr -out expired.pem 2>/dev/null

for f in ca other_ca server wrong_host expired; do
  [ -s "$f.pem" ] || { echo "make_certs: $f.pem was not made" >&2; exit 1; }
done
