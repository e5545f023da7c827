// Trust anchors found when a handshake needs them, not loaded up front.
//
// mbedTLS normally verifies against a list of parsed roots kept for the life of the
// configuration: for a system store of ~150 roots that is ~600 KB of TLS arena, on every
// request of an app that needs one of them. A TrustStore is consulted instead through
// mbedTLS's CA callback (mbedtls_ssl_conf_ca_cb, MBEDTLS_X509_TRUSTED_CERTIFICATE_CALLBACK):
// for each certificate being verified it looks the certificate's issuer up in its sources
// and hands mbedTLS a freshly parsed chain of just the roots whose subject matches, which
// mbedTLS frees when the verification ends. Between handshakes it holds no parsed root.
//
//   static stepback::https::TrustStore store;              // 17.3 KiB of fixed buffers
//   if (store.add_platform_default() != Status::kOk) ...   // or add_directory / add_bundle
//   tls.use_trust_store(store);                            // TlsClientConfig (tls.hpp)
//
// Sources, searched in the order added (at most kMaxSources):
//   - a hashed certificate directory (OpenSSL's `c_rehash` / `openssl rehash` layout: one
//     certificate file per root named <8 hex digits of the subject-name hash>.<n>, n = 0, 1,
//     ... for roots whose hashes collide). The lookup opens <hash>.0, <hash>.1, ... until one
//     is missing and parses only the certificates whose subject matches the issuer. Debian's
//     /etc/ssl/certs uses OpenSSL's current hash (`openssl x509 -subject_hash`); Android's
//     cacerts directories use the pre-1.0 one (`-subject_hash_old`), see DirectoryHash.
//   - a bundle: a file of concatenated PEM certificates (or DER certificates). add_bundle()
//     reads it once and keeps an index, the offset and the subject-name hash of each
//     certificate (8 bytes each, kMaxIndexed for all sources together; nothing parsed is
//     kept), so a lookup seeks to the certificates whose hash matches and decodes only
//     those. A bundle that changed since (size, modification time or inode differ) or that
//     did not fit the index is scanned whole instead, decoding each certificate only as far
//     as its subject. Text between PEM blocks is skipped (Android's cacerts files append
//     `openssl x509 -text` output to the PEM).
//   - memory: the same formats in a caller-owned buffer (a bundle shipped in an APK's
//     assets, a pinned private CA compiled in), indexed the same way.
//
// "Matches" means the subject and the issuer are the same name: byte-for-byte, or equal in
// OpenSSL's canonical form (case-folded, white space collapsed; what the hash is computed
// from). mbedTLS then checks each candidate's name, signature and validity itself.
//
// Memory: files are read with open()/read() into this object's fixed buffers (no stdio, no
// heap); every parsed certificate lives in mbedTLS's allocator, i.e. the TLS arena
// (tls_arena.hpp), and only while the verification runs. Not thread-safe: one handshake at
// a time per store (like the arena itself).
//
// Platform defaults (add_platform_default()):
//   - Android: /apex/com.android.conscrypt/cacerts (Android 14+, updated through Google Play),
//     else /system/etc/security/cacerts (earlier releases); both hashed with the old hash.
//     User-installed CAs (/data/misc/user/<id>/cacerts-added) are not trusted, as for apps
//     targeting API 24+ by default.
//   - Linux: the first of the hashed directories /etc/ssl/certs (Debian, Ubuntu, Alpine,
//     Arch, SUSE) and /etc/pki/ca-trust/extracted/pem/directory-hash (Fedora, RHEL 9) that
//     holds hash-named files, else the first bundle that exists of
//     /etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt,
//     /etc/ssl/ca-bundle.pem, /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem,
//     /etc/ssl/cert.pem (the list Go's crypto/x509 uses).
//   - Apple and Windows: not built here (kInvalidArgument); the system store there is an API,
//     not files. The seam is the same pair of mbedTLS hooks (details in docs/trust_store.md):
//       Windows: the CA callback asks the ROOT system store for the issuer,
//         CertFindCertificateInStore(CertOpenSystemStoreW(0, L"ROOT"), X509_ASN_ENCODING, 0,
//         CERT_FIND_SUBJECT_NAME, &issuer_blob, previous), and parses each match's
//         pbCertEncoded with mbedtls_x509_crt_parse_der(). Windows installs some roots only
//         when a chain is built, so the complete route is the verify callback below with
//         CertGetCertificateChain + CertVerifyCertificateChainPolicy(CERT_CHAIN_POLICY_SSL).
//       Apple: roots cannot be enumerated on iOS. A CA callback that returns no candidate,
//         and a verify callback (mbedtls_ssl_set_verify) that clears
//         MBEDTLS_X509_BADCERT_NOT_TRUSTED at depths > 0 and, at depth 0 (called last, with
//         the leaf, whose ->next list is the chain as presented), builds a SecTrustRef
//         (SecCertificateCreateWithData, SecPolicyCreateSSL(true, host)) and sets
//         MBEDTLS_X509_BADCERT_NOT_TRUSTED unless SecTrustEvaluateWithError() trusts it.
//
// Public-key pinning (PublicKeyPin and its functions) is declared in pins.hpp, included here.
#ifndef STEPBACK_HTTPS_TLS_TRUST_STORE_HPP_
#define STEPBACK_HTTPS_TLS_TRUST_STORE_HPP_

#include <mbedtls/x509_crt.h>

#include <cstddef>
#include <cstdint>

#include "stepback/https/tls/pins.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Longest canonical subject name (see canonical_name) the store computes, in bytes; real
// names are 50-300 bytes. Longer names are still matched byte-for-byte in bundles.
inline constexpr std::size_t kMaxCanonicalNameBytes = 1024;

// Writes OpenSSL's canonical encoding of the DER Name `name` (the whole SEQUENCE) into
// `out`, setting *size: each RDN re-encoded as a DER SET (members sorted), every string
// value of a text type turned to UTF-8, its leading and trailing white space removed, inner
// runs of white space collapsed to one space and ASCII folded to lower case, and written as
// a UTF8String; no outer SEQUENCE. kInvalidArgument for a malformed name, kBufferTooSmall
// when `out` cannot hold it.
[[nodiscard]] Status canonical_name(ConstBytes name, MutableBytes out, std::size_t* size);

// OpenSSL's X509_NAME_hash (`openssl x509 -subject_hash`, the names `openssl rehash` makes):
// the first four bytes of SHA-1 over canonical_name(), little-endian.
[[nodiscard]] Status subject_name_hash(ConstBytes name, std::uint32_t* hash);

// OpenSSL's X509_NAME_hash_old (`-subject_hash_old`, OpenSSL before 1.0 and Android's
// cacerts): the first four bytes of MD5 over the name's DER, little-endian.
[[nodiscard]] Status subject_name_hash_old(ConstBytes name, std::uint32_t* hash);

// Which hash names the files of a hashed directory.
enum class DirectoryHash : std::uint8_t {
  kSubjectHash,     // OpenSSL 1.0+ (openssl rehash, c_rehash, Debian's /etc/ssl/certs).
  kSubjectHashOld,  // Before OpenSSL 1.0 (Android's cacerts directories).
  kBoth,            // Try the current hash, then the old one (c_rehash -compat folders).
};

// The trust anchors of a client, found on demand. See the top of this file.
class TrustStore {
 public:
  static constexpr std::size_t kMaxSources = 4;
  // Longest directory or bundle path accepted, NUL included.
  static constexpr std::size_t kMaxPathBytes = 256;
  // Largest certificate (DER) a lookup can parse; bigger ones are skipped. Roots are 0.5-2 KB.
  static constexpr std::size_t kMaxCertificateBytes = std::size_t{8} * 1024;
  // Bytes read from a file at a time.
  static constexpr std::size_t kReadBytes = std::size_t{2} * 1024;
  // At most this many files per hash in a directory (<hash>.0 ... <hash>.15).
  static constexpr unsigned kMaxHashCollisions = 16;
  // At most this many candidates a lookup returns (bounds its arena use: ~2-3 KB each).
  static constexpr unsigned kMaxCandidates = 8;
  // Certificates of bundles and memory sources indexed, over all sources (8 bytes each).
  static constexpr std::size_t kMaxIndexed = 512;

  // What the lookups did, for tests and diagnostics.
  struct Stats {
    std::uint32_t lookups = 0;               // CA callback calls.
    std::uint32_t files_opened = 0;          // Directory entries and bundles opened.
    std::uint32_t certificates_scanned = 0;  // Certificates whose subject was read.
    std::uint32_t full_scans = 0;            // Bundle lookups without a usable index.
    std::uint32_t certificates_parsed = 0;   // Matching ones handed to mbedTLS.
  };

  TrustStore() = default;
  TrustStore(const TrustStore&) = delete;
  TrustStore& operator=(const TrustStore&) = delete;

  // Adds a hashed certificate directory. kInvalidArgument when `path` is not a directory or
  // too long, or (Linux and Android, where it can be checked without the heap) holds no file
  // named <8 hex digits>.<digits>: run `openssl rehash DIR` on it first. kBufferTooSmall when
  // kMaxSources are in use.
  [[nodiscard]] Status add_directory(const char* path,
                                     DirectoryHash hash = DirectoryHash::kSubjectHash);
  // Adds a bundle file (PEM or DER certificates) and indexes it. kInvalidArgument when it
  // cannot be opened or holds no certificate.
  [[nodiscard]] Status add_bundle(const char* path);
  // Adds caller-owned PEM or DER bytes, which must outlive the store and not change, and
  // indexes them. kInvalidArgument when they hold no certificate.
  [[nodiscard]] Status add_memory(ConstBytes certificates);
  // Adds the platform's system store (see the top of this file). kInvalidArgument when none
  // is found or the platform has none this store can read (Apple, Windows).
  [[nodiscard]] Status add_platform_default();

  std::size_t source_count() const { return count_; }
  // The path of source `i` ("" for memory sources and out of range).
  const char* source_path(std::size_t i) const;
  // Forgets every source.
  void clear() {
    count_ = 0;
    indexed_ = 0;
  }

  // Looks up the roots whose subject is `issuer` (a DER Name) in every source, appending each
  // to the chain at *candidates (allocated with mbedtls_calloc and initialized when null).
  // kOk whether or not any matched; kBufferTooSmall when the TLS arena ran out.
  [[nodiscard]] Status find_issuers(ConstBytes issuer, mbedtls_x509_crt** candidates);

  // mbedTLS's CA callback (mbedtls_x509_crt_ca_cb_t) with a TrustStore* as context: the
  // candidates for the issuer of `child`. Returns 0 (with *candidates null when nothing
  // matched: mbedTLS reports "not trusted"), or non-zero when the arena ran out.
  static int ca_callback(void* store, const mbedtls_x509_crt* child, mbedtls_x509_crt** candidates);

  const Stats& stats() const { return stats_; }
  void reset_stats() { stats_ = Stats{}; }

 private:
  enum class Kind : std::uint8_t { kDirectory, kBundle, kMemory };
  struct Source {
    Kind kind = Kind::kMemory;
    DirectoryHash hash = DirectoryHash::kSubjectHash;
    char path[kMaxPathBytes] = {};
    ConstBytes memory;
    // The index entries of a bundle or memory source: [first, first + count) of index_*_.
    bool indexed = false;
    std::uint16_t first = 0;
    std::uint16_t count = 0;
    // The bundle file as indexed.
    std::int64_t size = 0;
    std::int64_t mtime = 0;
    std::uint64_t inode = 0;
  };
  class Scan;  // The PEM/DER scanner of one file or buffer (src/tls/cert_scanner.hpp).

  Status add_path(Kind kind, const char* path, DirectoryHash hash);
  Status index_source(Source* source);
  Status search_directory(const Source& source, std::uint32_t hash, Scan& scan);
  Status search_bundle(const Source& source, std::uint32_t key, Scan& scan);
  void search_memory(const Source& source, std::uint32_t key, Scan& scan);
  Status search_file(const char* path, Scan& scan);
  void read_all(int fd, Scan& scan);

  Source sources_[kMaxSources];
  std::size_t count_ = 0;
  Stats stats_;
  // The index: each certificate's offset in its source and its subject's index key.
  std::uint32_t index_offset_[kMaxIndexed] = {};
  std::uint32_t index_key_[kMaxIndexed] = {};
  std::size_t indexed_ = 0;
  // Scratch of one lookup: the certificate being decoded, file bytes, the issuer's
  // canonical name and a candidate's.
  alignas(8) std::uint8_t der_[kMaxCertificateBytes] = {};
  alignas(8) std::uint8_t read_[kReadBytes] = {};
  std::uint8_t issuer_canonical_[kMaxCanonicalNameBytes] = {};
  std::uint8_t subject_canonical_[kMaxCanonicalNameBytes] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TLS_TRUST_STORE_HPP_
