// The trust store (stepback/https/tls/trust_store.hpp) without a network:
//   - OpenSSL's subject-name hashes (current and old) against `openssl x509 -subject_hash
//     -subject_hash_old` for names of every string type, multi-valued RDNs, odd spacing and
//     case (certificates made by the openssl CLI and by mbedTLS at test time);
//   - chains verified through mbedTLS's CA callback (mbedtls_x509_crt_verify_with_ca_cb) with
//     a hashed directory of 150 roots made here (the leaf's root among them), the root
//     missing, the root behind a colliding hash, `openssl rehash`'s own layout, Android's
//     layout (old hash, text after the PEM), a bundle, DER and PEM in memory, and an issuer
//     that only matches in canonical form;
//   - public-key pins against OkHttp's recipe computed by the openssl CLI;
//   - the heap trap over lookups: every byte goes to the TLS arena;
//   - the arena peak of one verification: single anchor loaded, all 150 loaded, callback.
// No certificate is committed: all are generated in a temporary folder and removed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ecp.h"
#include "mbedtls/entropy.h"
#include "mbedtls/pk.h"
#include "mbedtls/platform.h"
#include "mbedtls/x509_crt.h"
#include "psa/crypto.h"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/https/tls/trust_store.hpp"
#include "tests/support/heap_trap.hpp"

#ifndef STEPBACK_TEST_OPENSSL
#define STEPBACK_TEST_OPENSSL ""
#endif

namespace stepback::https {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kArenaBytes = std::size_t{2} * 1024 * 1024;
alignas(16) std::uint8_t g_arena[kArenaBytes];

constexpr int kRoots = 150;  // Roots in the generated store, the leaf's own included.

const char* openssl() { return STEPBACK_TEST_OPENSSL; }
bool have_openssl() { return openssl()[0] != '\0' && ::access(openssl(), X_OK) == 0; }

#define REQUIRE_OPENSSL()                                                          \
  do {                                                                             \
    if (!have_openssl()) {                                                         \
      if (std::getenv("CI") != nullptr) FAIL() << "openssl not found (CI is set)"; \
      GTEST_SKIP() << "openssl not found; scripts/setup.sh installs it";           \
    }                                                                              \
  } while (false)

// A fresh folder under $TMPDIR, removed with its contents.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && base[0] != '\0' ? base : "/tmp") + "/stepback-trust-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) != nullptr) path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Runs a shell command; its stdout, or "" (and *ok false) when it fails.
std::string shell(const std::string& command, bool* ok) {
  std::string out;
  std::FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) {
    *ok = false;
    return out;
  }
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *ok = ::pclose(p) == 0;
  return out;
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string hex8(std::uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

ConstBytes bytes(const std::string& s) {
  return ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A parsed certificate, freed on destruction.
struct Crt {
  mbedtls_x509_crt crt;
  Crt() { mbedtls_x509_crt_init(&crt); }
  ~Crt() { mbedtls_x509_crt_free(&crt); }
  Crt(const Crt&) = delete;
  Crt& operator=(const Crt&) = delete;
  bool parse(const std::string& pem_or_der) {
    std::string buf = pem_or_der;
    if (buf.find("-----BEGIN") != std::string::npos) buf.push_back('\0');
    return mbedtls_x509_crt_parse(&crt, reinterpret_cast<const unsigned char*>(buf.data()),
                                  buf.size()) == 0;
  }
  ConstBytes subject() const { return ConstBytes{crt.subject_raw.p, crt.subject_raw.len}; }
  ConstBytes issuer() const { return ConstBytes{crt.issuer_raw.p, crt.issuer_raw.len}; }
  std::string der() const {
    return std::string(reinterpret_cast<const char*>(crt.raw.p), crt.raw.len);
  }
};

// One generated certificate.
struct Cert {
  std::string subject;  // mbedTLS's string form, e.g. "CN=...,O=...".
  std::string pem;
  std::string der;
  std::uint32_t hash = 0;      // subject_name_hash of its subject.
  std::uint32_t hash_old = 0;  // subject_name_hash_old.
};

// The generated PKI shared by the tests: a root and its leaf, and kRoots - 1 decoy roots
// (one shared key, distinct names), all made with mbedTLS on the TLS arena.
class World {
 public:
  static World& get() {
    static World w;
    return w;
  }
  bool ok = false;
  Cert root;
  Cert leaf;
  std::vector<Cert> decoys;
  std::string pem_of_leaf_issued_in_other_case;  // Issuer spelled as PrintableString, upper case.
  mbedtls_ctr_drbg_context drbg;

 private:
  World() {
    if (tls_arena_init(g_arena, sizeof g_arena) != Status::kOk) return;
    if (psa_crypto_init() != PSA_SUCCESS) return;
    mbedtls_entropy_init(&entropy_);
    mbedtls_ctr_drbg_init(&drbg);
    if (mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy_, nullptr, 0) != 0) return;
    mbedtls_pk_init(&root_key_);
    mbedtls_pk_init(&leaf_key_);
    mbedtls_pk_init(&decoy_key_);
    if (!gen_key(&root_key_) || !gen_key(&leaf_key_) || !gen_key(&decoy_key_)) return;
    const std::string root_name = "CN=stepback trust test root,O=stepback tests";
    root = make(root_name, root_name, &root_key_, &root_key_, true, 1);
    leaf = make("CN=localhost,O=stepback tests", root_name, &leaf_key_, &root_key_, false, 2);
    // PrintableString (0x13) "STEPBACK TRUST TEST ROOT" where the root says UTF8String lower
    // case: the same name in canonical form, different bytes.
    const Cert odd = make("CN=localhost,O=stepback tests",
                          "CN=#1318535445504241434b205452555354205445535420524f4f54,"
                          "O=stepback tests",
                          &leaf_key_, &root_key_, false, 3);
    pem_of_leaf_issued_in_other_case = odd.pem;
    for (int i = 1; i < kRoots; ++i) {
      char name[96];
      std::snprintf(name, sizeof name, "CN=stepback decoy root %03d,O=stepback tests", i);
      decoys.push_back(make(name, name, &decoy_key_, &decoy_key_, true, 100 + i));
    }
    ok = !root.pem.empty() && !leaf.pem.empty() && !odd.pem.empty() &&
         decoys.size() == kRoots - 1 && !decoys.back().pem.empty();
  }

  bool gen_key(mbedtls_pk_context* pk) {
    return mbedtls_pk_setup(pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) == 0 &&
           mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(*pk),
                               mbedtls_ctr_drbg_random, &drbg) == 0;
  }

  Cert make(const std::string& subject, const std::string& issuer, mbedtls_pk_context* key,
            mbedtls_pk_context* issuer_key, bool ca, int serial) {
    Cert c;
    c.subject = subject;
    mbedtls_x509write_cert w;
    mbedtls_x509write_crt_init(&w);
    mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
    mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
    mbedtls_x509write_crt_set_subject_key(&w, key);
    mbedtls_x509write_crt_set_issuer_key(&w, issuer_key);
    // A leading 0x01 keeps the INTEGER minimal (OpenSSL refuses a leading zero byte).
    unsigned char serial_bytes[3] = {0x01, static_cast<unsigned char>(serial >> 8),
                                     static_cast<unsigned char>(serial & 0xFF)};
    unsigned char pem[4096];
    const bool made =
        mbedtls_x509write_crt_set_serial_raw(&w, serial_bytes, 3) == 0 &&
        mbedtls_x509write_crt_set_subject_name(&w, subject.c_str()) == 0 &&
        mbedtls_x509write_crt_set_issuer_name(&w, issuer.c_str()) == 0 &&
        mbedtls_x509write_crt_set_validity(&w, "20240101000000", "20991231235959") == 0 &&
        mbedtls_x509write_crt_set_basic_constraints(&w, ca ? 1 : 0, -1) == 0 &&
        mbedtls_x509write_crt_set_key_usage(
            &w, ca ? (MBEDTLS_X509_KU_KEY_CERT_SIGN | MBEDTLS_X509_KU_CRL_SIGN)
                   : MBEDTLS_X509_KU_DIGITAL_SIGNATURE) == 0 &&
        mbedtls_x509write_crt_pem(&w, pem, sizeof pem, mbedtls_ctr_drbg_random, &drbg) == 0;
    mbedtls_x509write_crt_free(&w);
    if (!made) return c;
    c.pem = reinterpret_cast<const char*>(pem);
    Crt parsed;
    if (!parsed.parse(c.pem)) {
      c.pem.clear();
      return c;
    }
    c.der = parsed.der();
    (void)subject_name_hash(parsed.subject(), &c.hash);
    (void)subject_name_hash_old(parsed.subject(), &c.hash_old);
    return c;
  }

  mbedtls_entropy_context entropy_;
  mbedtls_pk_context root_key_;
  mbedtls_pk_context leaf_key_;
  mbedtls_pk_context decoy_key_;
};

// Writes `certs` into `dir` as c_rehash links would name them (<hash>.<n>, n counting up
// within a hash), `old` choosing the hash; `suffix` is appended to every file (Android's
// cacerts files carry the certificate's text dump after the PEM).
void write_hashed(const std::string& dir, const std::vector<const Cert*>& certs, bool old,
                  const std::string& suffix = "") {
  for (const Cert* c : certs) {
    const std::string base = dir + "/" + hex8(old ? c->hash_old : c->hash) + ".";
    int n = 0;
    while (fs::exists(base + std::to_string(n))) ++n;
    write_file(base + std::to_string(n), c->pem + suffix);
  }
}

std::vector<const Cert*> all_roots(bool with_root = true) {
  std::vector<const Cert*> out;
  World& w = World::get();
  for (std::size_t i = 0; i < w.decoys.size(); ++i) {
    if (with_root && i == w.decoys.size() / 2) out.push_back(&w.root);  // Somewhere inside.
    out.push_back(&w.decoys[i]);
  }
  return out;
}

// Verifies `leaf` through the store's CA callback: mbedTLS's flags (0: trusted), or ~0 when
// verification could not run.
std::uint32_t verify(TrustStore& store, mbedtls_x509_crt* leaf) {
  std::uint32_t flags = 0;
  const int ret = mbedtls_x509_crt_verify_with_ca_cb(leaf, &TrustStore::ca_callback, &store,
                                                     &mbedtls_x509_crt_profile_default, "localhost",
                                                     &flags, nullptr, nullptr);
  if (ret != 0 && ret != MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) return ~0U;
  return flags;
}

std::uint32_t verify(TrustStore& store, const std::string& leaf_pem) {
  Crt leaf;
  if (!leaf.parse(leaf_pem)) return ~0U;
  return verify(store, &leaf.crt);
}

class TrustStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(World::get().ok) << "could not generate the test PKI"; }
  World& w() { return World::get(); }
};

// ---------------------------------------------------------------------------------------
// Subject-name hashes.

struct HashCase {
  const char* subject;  // openssl req -subj
  const char* options;  // extra req options
  const char* mask;     // string_mask of the config
};

TEST_F(TrustStoreTest, SubjectHashesMatchOpenssl) {
  REQUIRE_OPENSSL();
  TempDir dir;
  const HashCase cases[] = {
      {"/CN=stepback test CA", "", "utf8only"},
      {"/C=DE/O=  Mixed   CASE\tOrg  /OU=Unit/CN=Host.Example.COM", "", "utf8only"},
      {"/O=b org+OU=A Unit/CN=multi valued", "-multivalue-rdn", "utf8only"},
      {"/CN=zz+CN=a+O=Mid Length/OU=x", "-multivalue-rdn", "utf8only"},
      {"/CN=Gr\xc3\xbc\xc3\x9f"
       "e \xc3\x84\xc3\x96\xc3\x9c Stra\xc3\x9f"
       "e/O=\xc3\x89"
       "COLE",
       "-utf8", "utf8only"},
      {"/CN=Gr\xc3\xbc\xc3\x9f"
       "e  BIG/O=Org",
       "-utf8", "nombstr"},
      {"/CN=  BMP  Name  /O=Wide Org", "-utf8", "MASK:0x800"},
      {"/CN=Univ \xc3\x84 Name/O=Wide", "-utf8", "MASK:0x100"},
      {"/emailAddress=Admin@Example.COM/CN=mail", "", "default"},
      {"/DC=Example/DC=COM/serialNumber=ABC  123/CN=a", "", "default"},
      {"/CN=   ", "", "utf8only"},
  };
  for (const HashCase& c : cases) {
    SCOPED_TRACE(c.subject);
    const std::string cnf = dir.file("req.cnf");
    write_file(cnf,
               std::string("[req]\ndistinguished_name = dn\nstring_mask = ") + c.mask + "\n[dn]\n");
    const std::string pem = dir.file("c.pem");
    bool ok = false;
    (void)shell(std::string(openssl()) +
                    " req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1" +
                    " -nodes -keyout " + dir.file("k.pem") + " -out " + pem + " -days 2 -config " +
                    cnf + " " + c.options + " -subj " + quoted(c.subject) + " 2>&1",
                &ok);
    ASSERT_TRUE(ok) << "openssl req failed";
    const std::string expected = shell(
        std::string(openssl()) + " x509 -noout -subject_hash -subject_hash_old -in " + pem, &ok);
    ASSERT_TRUE(ok);
    Crt crt;
    ASSERT_TRUE(crt.parse(read_file(pem)));
    std::uint32_t hash = 0;
    std::uint32_t hash_old = 0;
    ASSERT_EQ(subject_name_hash(crt.subject(), &hash), Status::kOk);
    ASSERT_EQ(subject_name_hash_old(crt.subject(), &hash_old), Status::kOk);
    EXPECT_EQ(hex8(hash) + "\n" + hex8(hash_old) + "\n", expected);
  }
}

TEST_F(TrustStoreTest, SubjectHashesOfMbedtlsNamesAndRawTypesMatchOpenssl) {
  REQUIRE_OPENSSL();
  TempDir dir;
  // Our generated roots, and values of a type that is not canonicalized (BIT STRING, copied as
  // it is) or rarely seen (T61String with a Latin-1 byte). mbedTLS's parser takes no other
  // types in names (no NumericString, VisibleString).
  std::vector<std::string> pems = {w().root.pem, w().leaf.pem, w().decoys[0].pem};
  const char* const names[] = {
      "CN=bits,2.5.4.45=#0303004142",               // x500UniqueIdentifier BIT STRING.
      "CN=#1406474f20e92041,O=t61",                 // T61String "GO \xe9 A" (Latin-1).
      "CN=#0c0548454c4c4f,OU=#130548656c6c6f,O=x",  // UTF8String / PrintableString.
  };
  for (const char* name : names) {
    mbedtls_pk_context key;
    mbedtls_pk_init(&key);
    ASSERT_EQ(mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)), 0);
    ASSERT_EQ(mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key),
                                  mbedtls_ctr_drbg_random, &w().drbg),
              0);
    mbedtls_x509write_cert crt;
    mbedtls_x509write_crt_init(&crt);
    mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
    mbedtls_x509write_crt_set_subject_key(&crt, &key);
    mbedtls_x509write_crt_set_issuer_key(&crt, &key);
    unsigned char serial = 7;
    unsigned char pem[4096];
    ASSERT_EQ(mbedtls_x509write_crt_set_serial_raw(&crt, &serial, 1), 0);
    ASSERT_EQ(mbedtls_x509write_crt_set_subject_name(&crt, name), 0) << name;
    ASSERT_EQ(mbedtls_x509write_crt_set_issuer_name(&crt, name), 0);
    ASSERT_EQ(mbedtls_x509write_crt_set_validity(&crt, "20240101000000", "20991231235959"), 0);
    // mbedTLS writes an empty extension list without one, which its parser refuses.
    ASSERT_EQ(mbedtls_x509write_crt_set_basic_constraints(&crt, 0, -1), 0);
    ASSERT_EQ(mbedtls_x509write_crt_pem(&crt, pem, sizeof pem, mbedtls_ctr_drbg_random, &w().drbg),
              0);
    mbedtls_x509write_crt_free(&crt);
    mbedtls_pk_free(&key);
    pems.emplace_back(reinterpret_cast<const char*>(pem));
  }
  for (const std::string& text : pems) {
    const std::string path = dir.file("c.pem");
    write_file(path, text);
    bool ok = false;
    const std::string expected = shell(
        std::string(openssl()) + " x509 -noout -subject_hash -subject_hash_old -in " + path, &ok);
    ASSERT_TRUE(ok);
    Crt crt;
    ASSERT_TRUE(crt.parse(text)) << text;
    std::uint32_t hash = 0;
    std::uint32_t hash_old = 0;
    ASSERT_EQ(subject_name_hash(crt.subject(), &hash), Status::kOk);
    ASSERT_EQ(subject_name_hash_old(crt.subject(), &hash_old), Status::kOk);
    EXPECT_EQ(hex8(hash) + "\n" + hex8(hash_old) + "\n", expected) << text;
  }
}

TEST_F(TrustStoreTest, CanonicalNameRejectsMalformedAndOversizedNames) {
  std::uint8_t out[kMaxCanonicalNameBytes];
  std::size_t size = 0;
  const std::uint8_t not_a_sequence[] = {0x31, 0x00};
  EXPECT_EQ(canonical_name({not_a_sequence, sizeof not_a_sequence}, {out, sizeof out}, &size),
            Status::kInvalidArgument);
  const std::uint8_t truncated[] = {0x30, 0x10, 0x31, 0x0e, 0x30, 0x0c};
  EXPECT_EQ(canonical_name({truncated, sizeof truncated}, {out, sizeof out}, &size),
            Status::kInvalidArgument);
  // An empty name canonicalizes to nothing (OpenSSL hashes the empty string).
  const std::uint8_t empty[] = {0x30, 0x00};
  EXPECT_EQ(canonical_name({empty, sizeof empty}, {out, sizeof out}, &size), Status::kOk);
  EXPECT_EQ(size, 0U);
  // A UTF8String that is not UTF-8.
  const std::uint8_t bad_utf8[] = {0x30, 0x0c, 0x31, 0x0a, 0x30, 0x08, 0x06,
                                   0x03, 0x55, 0x04, 0x03, 0x0c, 0x01, 0xff};
  EXPECT_EQ(canonical_name({bad_utf8, sizeof bad_utf8}, {out, sizeof out}, &size),
            Status::kInvalidArgument);
  Crt root;
  ASSERT_TRUE(root.parse(w().root.pem));
  EXPECT_EQ(canonical_name(root.subject(), {out, 8}, &size), Status::kBufferTooSmall);
  ASSERT_EQ(canonical_name(root.subject(), {out, sizeof out}, &size), Status::kOk);
  // Lower case, as UTF8String (0x0c).
  const std::string text(reinterpret_cast<const char*>(out), size);
  EXPECT_NE(text.find("stepback trust test root"), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// Lookups.

TEST_F(TrustStoreTest, HashedDirectoryOf150RootsFindsTheLeafsRoot) {
  TempDir dir;
  write_hashed(dir.path(), all_roots(), false);
  TrustStore store;
  ASSERT_EQ(store.add_directory(dir.path().c_str()), Status::kOk);
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(store.stats().lookups, 1U);
  EXPECT_EQ(store.stats().certificates_parsed, 1U);  // Only the root, of 150.
  EXPECT_LE(store.stats().files_opened, 2U);
  // Nothing stays parsed between handshakes: the arena is back where it was.
  const TlsArenaUsage before = tls_arena_usage();
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(tls_arena_usage().current_bytes, before.current_bytes);
}

TEST_F(TrustStoreTest, MissingRootIsNotTrustedAndParsesNothing) {
  TempDir dir;
  write_hashed(dir.path(), all_roots(/*with_root=*/false), false);
  TrustStore store;
  ASSERT_EQ(store.add_directory(dir.path().c_str()), Status::kOk);
  const std::uint32_t flags = verify(store, w().leaf.pem);
  EXPECT_NE(flags, ~0U);
  EXPECT_NE(flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED, 0U);
  EXPECT_EQ(store.stats().certificates_parsed, 0U);
}

TEST_F(TrustStoreTest, RootBehindACollidingHashIsFound) {
  TempDir dir;
  // <root hash>.0 is another subject (as if its hash collided); the root is <root hash>.1.
  const std::string base = dir.file(hex8(w().root.hash));
  write_file(base + ".0", w().decoys[3].pem);
  write_file(base + ".1", w().root.pem);
  TrustStore store;
  ASSERT_EQ(store.add_directory(dir.path().c_str()), Status::kOk);
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(store.stats().files_opened, 2U);
  EXPECT_EQ(store.stats().certificates_scanned, 2U);
  EXPECT_EQ(store.stats().certificates_parsed, 1U);  // The decoy was read, never parsed.
}

TEST_F(TrustStoreTest, OpensslRehashedDirectory) {
  REQUIRE_OPENSSL();
  TempDir dir;
  int i = 0;
  for (const Cert* c : all_roots())
    write_file(dir.file("root" + std::to_string(i++) + ".pem"), c->pem);
  bool ok = false;
  (void)shell(std::string(openssl()) + " rehash " + dir.path() + " 2>&1", &ok);
  ASSERT_TRUE(ok) << "openssl rehash failed";
  TrustStore store;
  ASSERT_EQ(store.add_directory(dir.path().c_str()), Status::kOk);
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(store.stats().certificates_parsed, 1U);
}

TEST_F(TrustStoreTest, AndroidLayoutOldHashWithTextAfterThePem) {
  TempDir dir;
  const std::string text =
      "Certificate:\n    Data:\n        Version: 3 (0x2)\n-----\n        Subject: CN=x\n"
      "SHA1 Fingerprint=00:11:22\n";
  write_hashed(dir.path(), all_roots(), /*old=*/true, text);
  TrustStore store;
  ASSERT_EQ(store.add_directory(dir.path().c_str(), DirectoryHash::kSubjectHashOld), Status::kOk);
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(store.stats().certificates_parsed, 1U);
  // The current hash finds nothing there; kBoth tries both.
  TrustStore current;
  ASSERT_EQ(current.add_directory(dir.path().c_str()), Status::kOk);
  EXPECT_NE(verify(current, w().leaf.pem) & MBEDTLS_X509_BADCERT_NOT_TRUSTED, 0U);
  TrustStore both;
  ASSERT_EQ(both.add_directory(dir.path().c_str(), DirectoryHash::kBoth), Status::kOk);
  EXPECT_EQ(verify(both, w().leaf.pem), 0U);
}

TEST_F(TrustStoreTest, BundleIsIndexedAndOnlyTheMatchDecoded) {
  TempDir dir;
  std::string bundle = "# a comment line before anything\n";
  for (const Cert* c : all_roots()) bundle += c->subject + "\n" + c->pem + "\n";
  write_file(dir.file("bundle.pem"), bundle);
  TrustStore store;
  ASSERT_EQ(store.add_bundle(dir.file("bundle.pem").c_str()), Status::kOk);
  EXPECT_EQ(store.stats().files_opened, 0U);  // Set-up is not counted.
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(store.stats().files_opened, 1U);
  EXPECT_EQ(store.stats().full_scans, 0U);
  EXPECT_EQ(store.stats().certificates_scanned, 1U);  // The index led straight to it.
  EXPECT_EQ(store.stats().certificates_parsed, 1U);
  // A missing issuer costs one open and no decoding.
  store.reset_stats();
  Crt other;
  ASSERT_TRUE(other.parse(w().leaf.pem));
  mbedtls_x509_crt* found = nullptr;
  ASSERT_EQ(store.find_issuers(other.subject(), &found), Status::kOk);  // "CN=localhost": no root.
  EXPECT_EQ(found, nullptr);
  EXPECT_EQ(store.stats().certificates_scanned, 0U);
  // CRLF line ends.
  std::string crlf;
  for (const char c : bundle) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  TrustStore dos;
  ASSERT_EQ(dos.add_memory(bytes(crlf)), Status::kOk);
  EXPECT_EQ(verify(dos, w().leaf.pem), 0U);
}

TEST_F(TrustStoreTest, ChangedBundleIsScannedWhole) {
  TempDir dir;
  std::string bundle;
  for (const Cert* c : all_roots()) bundle += c->pem;
  const std::string path = dir.file("bundle.pem");
  write_file(path, bundle);
  TrustStore store;
  ASSERT_EQ(store.add_bundle(path.c_str()), Status::kOk);
  // Rewritten in another order and size: the offsets no longer hold.
  write_file(path, "# updated\n" + w().root.pem + bundle);
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(store.stats().full_scans, 1U);
  EXPECT_EQ(store.stats().certificates_parsed, 2U);  // The root is in it twice now.
  // Gone: not trusted, and no error.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_NE(verify(store, w().leaf.pem) & MBEDTLS_X509_BADCERT_NOT_TRUSTED, 0U);
}

TEST_F(TrustStoreTest, SourcesBeyondTheIndexAreScannedWhole) {
  std::string der;
  for (int copy = 0; copy < 4; ++copy) {  // 4 x 150 > kMaxIndexed.
    for (const Cert* c : all_roots()) der += c->der;
  }
  TrustStore store;
  ASSERT_EQ(store.add_memory(bytes(der)), Status::kOk);
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(store.stats().full_scans, 1U);
  EXPECT_EQ(store.stats().certificates_parsed, 4U);  // Four copies of the root.
  // The index space it did not take is still there for the next source.
  TrustStore two;
  ASSERT_EQ(two.add_memory(bytes(der)), Status::kOk);
  ASSERT_EQ(two.add_memory(bytes(w().root.pem)), Status::kOk);
  Crt root;
  ASSERT_TRUE(root.parse(w().root.pem));
  two.reset_stats();
  mbedtls_x509_crt* found = nullptr;
  ASSERT_EQ(two.find_issuers(root.subject(), &found), Status::kOk);
  ASSERT_NE(found, nullptr);
  mbedtls_x509_crt_free(found);
  mbedtls_free(found);
  EXPECT_EQ(two.stats().full_scans, 1U);           // Only the first source.
  EXPECT_EQ(two.stats().certificates_parsed, 5U);  // 4 copies scanned, 1 through the index.
}

TEST_F(TrustStoreTest, MemorySourcesInDerAndPem) {
  std::string der;
  for (const Cert* c : all_roots()) der += c->der;  // Concatenated DER.
  TrustStore store;
  ASSERT_EQ(store.add_memory(bytes(der)), Status::kOk);
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  EXPECT_EQ(store.stats().certificates_scanned, 1U);
  EXPECT_EQ(store.stats().certificates_parsed, 1U);
  TrustStore pem;
  ASSERT_EQ(pem.add_memory(bytes(w().root.pem)), Status::kOk);
  EXPECT_EQ(verify(pem, w().leaf.pem), 0U);
  TrustStore decoys_only;
  ASSERT_EQ(decoys_only.add_memory(bytes(w().decoys[0].pem)), Status::kOk);
  EXPECT_NE(verify(decoys_only, w().leaf.pem) & MBEDTLS_X509_BADCERT_NOT_TRUSTED, 0U);
}

TEST_F(TrustStoreTest, MalformedCertificatesAreSkipped) {
  const std::string& root = w().root.pem;
  const std::string& decoy = w().decoys[0].pem;
  const std::size_t body = decoy.find('\n') + 1;
  std::string bad_char = decoy;
  bad_char[body + 10] = '*';
  const std::string cases[] = {
      decoy.substr(0, decoy.size() / 2) + "\n" + root,                    // Cut, no END.
      bad_char + root,                                                    // Not base64.
      "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n" + root,  // Empty.
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----BEGIN CERTIFICATE-----\n" + root,
      std::string(300, '\n') + std::string(5000, 'x') + "\n" + root,  // Long lines.
      decoy.substr(0, body) + "MIIB====\nMII\n-----END CERTIFICATE-----\n" + root,
      root + decoy.substr(0, decoy.size() - 30),  // Ends mid-certificate.
  };
  int i = 0;
  for (const std::string& text : cases) {
    SCOPED_TRACE(i++);
    TrustStore store;
    ASSERT_EQ(store.add_memory(bytes(text)), Status::kOk);
    EXPECT_EQ(verify(store, w().leaf.pem), 0U);
  }
  // DER: a bogus length, a truncated certificate.
  const std::string der = w().root.der;
  const std::string bad_der[] = {std::string("\x30\x83\xff\xff\xff", 5) + der,
                                 der.substr(0, der.size() - 1)};
  for (const std::string& text : bad_der) {
    TrustStore store;
    if (store.add_memory(bytes(text)) != Status::kOk) continue;  // No certificate found.
    EXPECT_NE(verify(store, w().leaf.pem) & MBEDTLS_X509_BADCERT_NOT_TRUSTED, 0U);
  }
}

TEST_F(TrustStoreTest, SourcesAreSearchedInOrder) {
  TempDir empty_dir;
  write_hashed(empty_dir.path(), {&w().decoys[0]}, false);
  TrustStore store;
  ASSERT_EQ(store.add_directory(empty_dir.path().c_str()), Status::kOk);
  ASSERT_EQ(store.add_memory(bytes(w().root.pem)), Status::kOk);
  EXPECT_EQ(store.source_count(), 2U);
  EXPECT_STREQ(store.source_path(0), empty_dir.path().c_str());
  EXPECT_STREQ(store.source_path(1), "");
  EXPECT_EQ(verify(store, w().leaf.pem), 0U);
}

TEST_F(TrustStoreTest, IssuerMatchingOnlyInCanonicalFormIsACandidate) {
  // The leaf names its issuer "STEPBACK TRUST TEST ROOT" as a PrintableString; the root's
  // subject is the lower-case UTF8String. OpenSSL's hash is the same, and mbedTLS accepts the
  // pair (it compares such strings case-insensitively).
  Crt odd;
  ASSERT_TRUE(odd.parse(w().pem_of_leaf_issued_in_other_case));
  Crt root;
  ASSERT_TRUE(root.parse(w().root.pem));
  ASSERT_NE(odd.issuer().size == root.subject().size &&
                std::memcmp(odd.issuer().data, root.subject().data, odd.issuer().size) == 0,
            true);
  std::uint32_t h1 = 0;
  std::uint32_t h2 = 0;
  ASSERT_EQ(subject_name_hash(odd.issuer(), &h1), Status::kOk);
  ASSERT_EQ(subject_name_hash(root.subject(), &h2), Status::kOk);
  EXPECT_EQ(h1, h2);
  TempDir dir;
  write_hashed(dir.path(), all_roots(), false);
  TrustStore in_dir;
  ASSERT_EQ(in_dir.add_directory(dir.path().c_str()), Status::kOk);
  EXPECT_EQ(verify(in_dir, w().pem_of_leaf_issued_in_other_case), 0U);
  EXPECT_EQ(in_dir.stats().certificates_parsed, 1U);
  TrustStore in_memory;
  ASSERT_EQ(in_memory.add_memory(bytes(w().root.pem)), Status::kOk);
  EXPECT_EQ(verify(in_memory, w().pem_of_leaf_issued_in_other_case), 0U);
}

TEST_F(TrustStoreTest, SetUpRejectsWhatCannotBeUsed) {
  TempDir dir;
  TrustStore store;
  EXPECT_EQ(store.add_directory("/nonexistent/stepback"), Status::kInvalidArgument);
  write_file(dir.file("root.pem"), w().root.pem);  // A folder without c_rehash names.
#if defined(__linux__)
  EXPECT_EQ(store.add_directory(dir.path().c_str()), Status::kInvalidArgument);
#endif
  EXPECT_EQ(store.add_bundle(dir.file("missing.pem").c_str()), Status::kInvalidArgument);
  write_file(dir.file("empty.pem"), "no certificate here\n");
  EXPECT_EQ(store.add_bundle(dir.file("empty.pem").c_str()), Status::kInvalidArgument);
  EXPECT_EQ(store.add_bundle(dir.path().c_str()), Status::kInvalidArgument);  // A folder.
  EXPECT_EQ(store.add_memory(bytes("text")), Status::kInvalidArgument);
  EXPECT_EQ(store.add_directory(std::string(TrustStore::kMaxPathBytes, 'a').c_str()),
            Status::kInvalidArgument);
  EXPECT_EQ(store.source_count(), 0U);
  for (std::size_t i = 0; i < TrustStore::kMaxSources; ++i) {
    ASSERT_EQ(store.add_memory(bytes(w().root.pem)), Status::kOk);
  }
  EXPECT_EQ(store.add_memory(bytes(w().root.pem)), Status::kBufferTooSmall);
}

TEST_F(TrustStoreTest, PlatformDefaultOnThisMachine) {
  TrustStore store;
  const Status s = store.add_platform_default();
#if defined(__linux__) && !defined(__ANDROID__)
  if (s != Status::kOk) GTEST_SKIP() << "no system CA store on this machine";
  ASSERT_EQ(store.source_count(), 1U);
  std::printf("platform default: %s\n", store.source_path(0));
  // Every root of the system store can be found again by its own subject.
  const std::string dir = "/etc/ssl/certs";
  TrustStore bundle;  // The same roots through Debian's bundle and its index.
  const bool have_bundle = bundle.add_bundle("/etc/ssl/certs/ca-certificates.crt") == Status::kOk;
  int checked = 0;
  if (std::string(store.source_path(0)) == dir) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.size() != 10 || name.substr(8) != ".0") continue;
      Crt crt;
      if (!crt.parse(read_file(entry.path().string()))) continue;
      mbedtls_x509_crt* found = nullptr;
      ASSERT_EQ(store.find_issuers(crt.subject(), &found), Status::kOk) << name;
      EXPECT_NE(found, nullptr) << name;
      mbedtls_x509_crt_free(found);
      mbedtls_free(found);
      if (have_bundle) {
        found = nullptr;
        ASSERT_EQ(bundle.find_issuers(crt.subject(), &found), Status::kOk) << name;
        EXPECT_NE(found, nullptr) << name << " not found in the bundle";
        mbedtls_x509_crt_free(found);
        mbedtls_free(found);
      }
      ++checked;
    }
    std::printf("found each of %d system roots by its subject (bundle too: %s, %u full scans)\n",
                checked, have_bundle ? "yes" : "no", bundle.stats().full_scans);
    EXPECT_EQ(bundle.stats().full_scans, 0U);
    EXPECT_GT(checked, 50);
  }
#else
  (void)s;
  GTEST_SKIP() << "checked on Linux hosts only";
#endif
}

TEST_F(TrustStoreTest, TlsClientConfigTakesTheStoreBeforeOrAfterInit) {
  TrustStore store;
  ASSERT_EQ(store.add_memory(bytes(w().root.pem)), Status::kOk);
  TrustStore empty;
  TlsClientConfig before;
  EXPECT_EQ(before.use_trust_store(empty), Status::kInvalidArgument);
  EXPECT_FALSE(before.has_trust_anchors());
  ASSERT_EQ(before.use_trust_store(store), Status::kOk);
  ASSERT_EQ(before.init(), Status::kOk);
  EXPECT_TRUE(before.has_trust_anchors());
  // The config's own callback over the store (TlsClientConfig::store_ca_callback).
  EXPECT_NE(before.config()->MBEDTLS_PRIVATE(f_ca_cb), nullptr);
  EXPECT_EQ(before.config()->MBEDTLS_PRIVATE(p_ca_cb), &before);
  // mbedTLS uses the callback or a loaded list, never both: loading is refused from now on.
  EXPECT_EQ(before.add_ca_pem(w().root.pem.c_str(), w().root.pem.size()), Status::kInvalidArgument);
  TlsClientConfig after;
  ASSERT_EQ(after.init(), Status::kOk);
  EXPECT_EQ(after.config()->MBEDTLS_PRIVATE(f_ca_cb), nullptr);
  ASSERT_EQ(after.use_trust_store(store), Status::kOk);
  EXPECT_EQ(after.config()->MBEDTLS_PRIVATE(f_ca_cb), before.config()->MBEDTLS_PRIVATE(f_ca_cb));
  EXPECT_EQ(after.config()->MBEDTLS_PRIVATE(p_ca_cb), &after);
  const PublicKeyPin pins[2] = {};
  after.set_public_key_pins(pins, 2);
  EXPECT_EQ(after.public_key_pin_count(), 2U);
  after.set_public_key_pins(nullptr, 3);
  EXPECT_EQ(after.public_key_pin_count(), 0U);
}

// ---------------------------------------------------------------------------------------
// Public-key pins.

TEST_F(TrustStoreTest, PinsMatchOkHttpsRecipe) {
  REQUIRE_OPENSSL();
  TempDir dir;
  write_file(dir.file("root.pem"), w().root.pem);
  bool ok = false;
  // https://square.github.io/okhttp/ CertificatePinner's documented recipe.
  std::string b64 = shell(std::string(openssl()) + " x509 -in " + dir.file("root.pem") +
                              " -pubkey -noout | " + openssl() + " pkey -pubin -outform der | " +
                              openssl() + " dgst -sha256 -binary | " + openssl() + " enc -base64",
                          &ok);
  ASSERT_TRUE(ok);
  while (!b64.empty() && (b64.back() == '\n' || b64.back() == '\r')) b64.pop_back();
  PublicKeyPin pin;
  ASSERT_EQ(parse_public_key_pin(("sha256/" + b64).c_str(), &pin), Status::kOk);
  PublicKeyPin bare;
  ASSERT_EQ(parse_public_key_pin(b64.c_str(), &bare), Status::kOk);
  EXPECT_EQ(std::memcmp(pin.sha256, bare.sha256, 32), 0);
  Crt root;
  ASSERT_TRUE(root.parse(w().root.pem));
  Crt leaf;
  ASSERT_TRUE(leaf.parse(w().leaf.pem));
  const PublicKeyPin own = public_key_pin_of(root.crt);
  EXPECT_EQ(std::memcmp(own.sha256, pin.sha256, 32), 0);
  EXPECT_TRUE(matches_pin(root.crt, &pin, 1));
  EXPECT_FALSE(matches_pin(leaf.crt, &pin, 1));
  EXPECT_FALSE(matches_pin(root.crt, nullptr, 0));
  // A chain whose anchor is pinned matches: OkHttp pins any certificate of the chain.
  ASSERT_TRUE(leaf.parse(w().root.pem));  // leaf.crt is now leaf -> root.
  EXPECT_TRUE(chain_matches_pins(&leaf.crt, &pin, 1));
  const PublicKeyPin other = public_key_pin_of(leaf.crt);  // The leaf's key.
  EXPECT_TRUE(chain_matches_pins(&leaf.crt, &other, 1));
  PublicKeyPin unrelated;
  unrelated.sha256[0] = 1;
  EXPECT_FALSE(chain_matches_pins(&leaf.crt, &unrelated, 1));
}

TEST_F(TrustStoreTest, MalformedPinsAreRejected) {
  PublicKeyPin pin;
  EXPECT_EQ(parse_public_key_pin("", &pin), Status::kInvalidArgument);
  EXPECT_EQ(parse_public_key_pin("sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=", &pin),
            Status::kInvalidArgument);
  EXPECT_EQ(parse_public_key_pin("sha256/short=", &pin), Status::kInvalidArgument);
  EXPECT_EQ(parse_public_key_pin("sha256/!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!=", &pin),
            Status::kInvalidArgument);
  EXPECT_EQ(parse_public_key_pin("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==", &pin),
            Status::kInvalidArgument);  // 31 bytes.
  EXPECT_EQ(parse_public_key_pin("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", &pin),
            Status::kOk);
  // Pins are read by the library's one strict base64 decoder: the two bits under the padding
  // must be zero ('B' leaves one set), so a pin has one spelling.
  EXPECT_EQ(parse_public_key_pin("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=", &pin),
            Status::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------
// No heap; the arena figure.

TEST_F(TrustStoreTest, LookupsUseNoHeap) {
  if (!testing::heap_trap_available()) GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  TempDir dir;
  write_hashed(dir.path(), all_roots(), false);
  std::string bundle;
  for (const Cert* c : all_roots()) bundle += c->pem;
  write_file(dir.file("bundle.crt"), bundle);
  TrustStore in_dir;
  ASSERT_EQ(in_dir.add_directory(dir.path().c_str()), Status::kOk);
  TrustStore in_bundle;
  ASSERT_EQ(in_bundle.add_bundle(dir.file("bundle.crt").c_str()), Status::kOk);
  Crt leaf;
  ASSERT_TRUE(leaf.parse(w().leaf.pem));
  // Warm-up outside the trap (first-use set-up of the C library's time functions).
  std::uint32_t flags = ~0U;
  (void)mbedtls_x509_crt_verify_with_ca_cb(&leaf.crt, &TrustStore::ca_callback, &in_dir,
                                           &mbedtls_x509_crt_profile_default, "localhost", &flags,
                                           nullptr, nullptr);
  ASSERT_EQ(flags, 0U);
  std::uint32_t dir_flags = ~0U;
  std::uint32_t bundle_flags = ~0U;
  long calls = -1;
  {
    testing::HeapTrap trap;
    (void)mbedtls_x509_crt_verify_with_ca_cb(&leaf.crt, &TrustStore::ca_callback, &in_dir,
                                             &mbedtls_x509_crt_profile_default, "localhost",
                                             &dir_flags, nullptr, nullptr);
    (void)mbedtls_x509_crt_verify_with_ca_cb(&leaf.crt, &TrustStore::ca_callback, &in_bundle,
                                             &mbedtls_x509_crt_profile_default, "localhost",
                                             &bundle_flags, nullptr, nullptr);
    calls = trap.calls();
  }
  EXPECT_EQ(dir_flags, 0U);
  EXPECT_EQ(bundle_flags, 0U);
  EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
}

// Peak arena of one verification of the leaf, from the arena's state before the anchors are
// set up: `setup` loads them, `run` verifies.
template <typename Setup, typename Run>
std::size_t peak_of(Setup setup, Run run) {
  tls_arena_reset_peak();
  const TlsArenaUsage before = tls_arena_usage();
  setup();
  run();
  const TlsArenaUsage after = tls_arena_usage();
  return after.peak_footprint_bytes() - before.current_bytes -
         before.current_blocks * kTlsArenaBlockOverheadBytes;
}

TEST_F(TrustStoreTest, ArenaPeakOfOneVerification) {
#if defined(STEPBACK_EMULATED)
  // Figures measured under qemu-user mean nothing; they are taken on the host.
  return;
#endif

  TempDir dir;
  write_hashed(dir.path(), all_roots(), false);
  Crt leaf;
  ASSERT_TRUE(leaf.parse(w().leaf.pem));
  std::uint32_t flags = ~0U;
  auto verify_with = [&](mbedtls_x509_crt* anchors) {
    flags = ~0U;
    (void)mbedtls_x509_crt_verify(&leaf.crt, anchors, nullptr, "localhost", &flags, nullptr,
                                  nullptr);
  };
  const std::size_t one = peak_of([] {},
                                  [&] {
                                    Crt anchor;
                                    ASSERT_TRUE(anchor.parse(w().root.pem));
                                    verify_with(&anchor.crt);
                                  });
  EXPECT_EQ(flags, 0U);
  const std::size_t all =
      peak_of([] {},
              [&] {
                Crt anchors;
                ASSERT_GE(mbedtls_x509_crt_parse_path(&anchors.crt, dir.path().c_str()), 0);
                verify_with(&anchors.crt);
              });
  EXPECT_EQ(flags, 0U);
  TrustStore store;
  ASSERT_EQ(store.add_directory(dir.path().c_str()), Status::kOk);
  const std::size_t callback = peak_of([] {}, [&] { flags = verify(store, &leaf.crt); });
  EXPECT_EQ(flags, 0U);
  std::printf(
      "arena peak of one verification (footprint, block headers included), %d roots:\n"
      "  single anchor loaded:        %zu B\n"
      "  all roots loaded (parse_path): %zu B\n"
      "  trust store callback (dir):  %zu B\n",
      kRoots, one, all, callback);
  EXPECT_LE(callback, one + 8 * 1024);
  EXPECT_LT(callback * 10, all);
}

}  // namespace
}  // namespace stepback::https
