// Trust anchors found when a handshake needs them, not loaded up front (docs/trust_store.md).
//
// Consulted through mbedTLS's CA callback (mbedtls_ssl_conf_ca_cb): for each certificate being
// verified it looks the issuer up in its sources (hashed directories, PEM or DER bundles,
// caller-owned memory; searched in the order added) and hands mbedTLS a freshly parsed chain of
// just the roots whose subject matches, which mbedTLS frees when the verification ends.
// Between handshakes it holds no parsed root. No stdio, no heap: files are read into its own
// fixed buffers, parsed roots live in the TLS arena. One handshake at a time per store.
//
//   static stepback::https::TrustStore store;              // fixed buffers
//   if (store.add_platform_default() != Status::kOk) ...   // or add_directory / add_bundle
//   tls.use_trust_store(store);                            // TlsClientConfig (tls.hpp)
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
  // The bytes of memory source `i` (empty for the others and out of range).
  ConstBytes source_memory(std::size_t i) const {
    return i < count_ && sources_[i].kind == Kind::kMemory ? sources_[i].memory : ConstBytes{};
  }
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
