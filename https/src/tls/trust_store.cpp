#include "stepback/https/tls/trust_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)  // Linux and Android: getdents64 lists a directory without the heap.
#include <sys/syscall.h>
#endif

#include <mbedtls/platform.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

#include "tls/cert_scanner.hpp"
#include "tls/x509_name.hpp"

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

namespace stepback::https {
namespace {

bool is_hex_lower(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Whether `name` is "<8 hex digits>.<digits>", a c_rehash certificate link.
bool is_hash_name(const char* name) {
  for (int i = 0; i < 8; ++i) {
    if (!is_hex_lower(name[i])) return false;
  }
  if (name[8] != '.' || name[9] < '0' || name[9] > '9') return false;
  for (const char* c = name + 10; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return false;
  }
  return true;
}

bool is_directory(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_readable_file(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISREG(st.st_mode) && ::access(path, R_OK) == 0;
}

// Whether directory `path` holds a file named like a c_rehash link. Where listing needs the
// heap (opendir), it cannot be checked and counts as yes. `buffer` is scratch.
bool has_hash_names(const char* path, std::uint8_t* buffer, std::size_t size) {
#if defined(__linux__) && defined(SYS_getdents64)
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool found = false;
  for (;;) {
    const auto n = ::syscall(SYS_getdents64, fd, buffer, size);
    if (n <= 0) break;
    // struct linux_dirent64: u64 d_ino, s64 d_off, u16 d_reclen, u8 d_type, char d_name[].
    for (std::remove_cv_t<decltype(n)> at = 0; at < n && !found;) {
      std::uint16_t reclen = 0;
      std::memcpy(&reclen, buffer + at + 16, sizeof reclen);
      if (reclen == 0) break;
      found = is_hash_name(reinterpret_cast<const char*>(buffer + at + 19));
      at += reclen;
    }
    if (found) break;
  }
  ::close(fd);
  return found;
#else
  (void)path;
  (void)buffer;
  (void)size;
  return true;
#endif
}

}  // namespace

Status TrustStore::add_path(Kind kind, const char* path, DirectoryHash hash) {
  if (path == nullptr) return Status::kInvalidArgument;
  const std::size_t len = std::strlen(path);
  if (len == 0 || len >= kMaxPathBytes) return Status::kInvalidArgument;
  if (count_ == kMaxSources) return Status::kBufferTooSmall;
  Source& s = sources_[count_];
  s = Source{};
  s.kind = kind;
  s.hash = hash;
  std::memcpy(s.path, path, len + 1);
  // "dir/" and "dir" name the same folder; keep one form.
  if (kind == Kind::kDirectory && len > 1 && s.path[len - 1] == '/') s.path[len - 1] = '\0';
  ++count_;
  return Status::kOk;
}

Status TrustStore::add_directory(const char* path, DirectoryHash hash) {
  if (path == nullptr || std::strlen(path) >= kMaxPathBytes || !is_directory(path)) {
    return Status::kInvalidArgument;
  }
  if (!has_hash_names(path, read_, sizeof read_)) return Status::kInvalidArgument;
  return add_path(Kind::kDirectory, path, hash);
}

Status TrustStore::add_bundle(const char* path) {
  if (path == nullptr || std::strlen(path) >= kMaxPathBytes || !is_readable_file(path)) {
    return Status::kInvalidArgument;
  }
  Status s = add_path(Kind::kBundle, path, DirectoryHash::kSubjectHash);
  if (s == Status::kOk) s = index_source(&sources_[count_ - 1]);
  if (s != Status::kOk && count_ > 0 && sources_[count_ - 1].kind == Kind::kBundle) --count_;
  return s;
}

Status TrustStore::add_memory(ConstBytes certificates) {
  if (certificates.data == nullptr || certificates.size == 0) return Status::kInvalidArgument;
  if (count_ == kMaxSources) return Status::kBufferTooSmall;
  Source& source = sources_[count_++];
  source = Source{};
  source.kind = Kind::kMemory;
  source.memory = certificates;
  const Status s = index_source(&source);
  if (s != Status::kOk) --count_;
  return s;
}

// Reads the source once, recording each certificate's offset and subject key. kInvalidArgument
// when it holds no certificate. A source that does not fit the index stays unindexed (scanned
// whole on each lookup).
Status TrustStore::index_source(Source* source) {
  mbedtls_x509_crt* none = nullptr;
  Scan scan(*this, ConstBytes{}, nullptr, 0, &none);
  detail::IndexBuild index{index_offset_ + indexed_, index_key_ + indexed_, kMaxIndexed - indexed_};
  scan.set_index(&index);
  scan.begin(false);
  if (source->kind == Kind::kMemory) {
    scan.feed(source->memory.data, source->memory.size);
  } else {
    const int fd = ::open(source->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::kInvalidArgument;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return Status::kInvalidArgument;
    }
    source->size = static_cast<std::int64_t>(st.st_size);
    source->mtime = static_cast<std::int64_t>(st.st_mtime);
    source->inode = static_cast<std::uint64_t>(st.st_ino);
    read_all(fd, scan);
    ::close(fd);
  }
  if (scan.seen() == 0) return Status::kInvalidArgument;
  source->indexed = !index.overflow;
  if (source->indexed) {
    source->first = static_cast<std::uint16_t>(indexed_);
    source->count = static_cast<std::uint16_t>(index.count);
    indexed_ += index.count;
  }
  return Status::kOk;
}

Status TrustStore::add_platform_default() {
#if defined(__ANDROID__)
  // Android 14+ reads the roots from the Conscrypt APEX (updatable); earlier releases from
  // /system. Both name files with the old (MD5) subject hash.
  static const char* const kDirectories[] = {"/apex/com.android.conscrypt/cacerts",
                                             "/system/etc/security/cacerts"};
  for (const char* dir : kDirectories) {
    if (add_directory(dir, DirectoryHash::kSubjectHashOld) == Status::kOk) return Status::kOk;
  }
  return Status::kInvalidArgument;
#elif defined(__linux__)
  static const char* const kDirectories[] = {
      "/etc/ssl/certs",                                  // Debian, Ubuntu, Alpine, Arch, SUSE.
      "/etc/pki/ca-trust/extracted/pem/directory-hash",  // Fedora, RHEL 9.
  };
  for (const char* dir : kDirectories) {
    if (add_directory(dir, DirectoryHash::kSubjectHash) == Status::kOk) return Status::kOk;
  }
  static const char* const kBundles[] = {
      "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Gentoo, Arch.
      "/etc/pki/tls/certs/ca-bundle.crt",                   // Fedora, RHEL 6.
      "/etc/ssl/ca-bundle.pem",                             // OpenSUSE.
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // CentOS, RHEL 7.
      "/etc/ssl/cert.pem",                                  // Alpine.
  };
  for (const char* bundle : kBundles) {
    if (add_bundle(bundle) == Status::kOk) return Status::kOk;
  }
  return Status::kInvalidArgument;
#else
  // Apple and Windows keep their roots behind an API: see docs/trust_store.md.
  return Status::kInvalidArgument;
#endif
}

const char* TrustStore::source_path(std::size_t i) const {
  return i < count_ ? sources_[i].path : "";
}

void TrustStore::read_all(int fd, Scan& scan) {
  for (;;) {
    const ssize_t n = ::read(fd, read_, sizeof read_);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    scan.feed(read_, static_cast<std::size_t>(n));
    if (scan.done()) break;
  }
}

Status TrustStore::search_file(const char* path, Scan& scan) {
  int fd = -1;
  do {
    fd = ::open(path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno == ENOENT ? Status::kClosed : Status::kError;
  ++stats_.files_opened;
  read_all(fd, scan);
  ::close(fd);
  return Status::kOk;
}

Status TrustStore::search_bundle(const Source& source, std::uint32_t key, Scan& scan) {
  int fd = -1;
  do {
    fd = ::open(source.path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Status::kError;
  ++stats_.files_opened;
  struct stat st {};
  const bool unchanged = source.indexed && ::fstat(fd, &st) == 0 &&
                         static_cast<std::int64_t>(st.st_size) == source.size &&
                         static_cast<std::int64_t>(st.st_mtime) == source.mtime &&
                         static_cast<std::uint64_t>(st.st_ino) == source.inode;
  if (!unchanged) {
    ++stats_.full_scans;
    scan.begin(false);
    read_all(fd, scan);
  } else {
    for (std::size_t i = source.first; i < source.first + source.count && !scan.full(); ++i) {
      if (index_key_[i] != key) continue;
      if (::lseek(fd, static_cast<off_t>(index_offset_[i]), SEEK_SET) < 0) break;
      scan.begin(/*first_only=*/true);
      read_all(fd, scan);
    }
  }
  ::close(fd);
  return Status::kOk;
}

void TrustStore::search_memory(const Source& source, std::uint32_t key, Scan& scan) {
  if (!source.indexed) {
    ++stats_.full_scans;
    scan.begin(false);
    scan.feed(source.memory.data, source.memory.size);
    return;
  }
  for (std::size_t i = source.first; i < source.first + source.count && !scan.full(); ++i) {
    if (index_key_[i] != key || index_offset_[i] >= source.memory.size) continue;
    scan.begin(/*first_only=*/true);
    scan.feed(source.memory.data + index_offset_[i], source.memory.size - index_offset_[i]);
  }
}

Status TrustStore::search_directory(const Source& source, std::uint32_t hash, Scan& scan) {
  // "<dir>/<8 hex digits>.<n>", built by hand: no snprintf on the lookup path.
  char path[kMaxPathBytes + 16];
  const std::size_t dir_len = std::strlen(source.path);
  std::memcpy(path, source.path, dir_len);
  std::size_t at = dir_len;
  path[at++] = '/';
  static const char kHex[] = "0123456789abcdef";
  for (int shift = 28; shift >= 0; shift -= 4) path[at++] = kHex[(hash >> shift) & 0xF];
  path[at++] = '.';
  for (unsigned n = 0; n < kMaxHashCollisions && !scan.full(); ++n) {
    std::size_t end = at;
    if (n >= 10) path[end++] = static_cast<char>('0' + n / 10);
    path[end++] = static_cast<char>('0' + n % 10);
    path[end] = '\0';
    scan.begin(/*first_only=*/true);  // c_rehash links one certificate per name.
    const Status s = search_file(path, scan);
    if (s == Status::kClosed) break;  // No <hash>.<n>: no more collisions.
  }
  return Status::kOk;
}

Status TrustStore::find_issuers(ConstBytes issuer, mbedtls_x509_crt** candidates) {
  ++stats_.lookups;
  if (candidates == nullptr || issuer.data == nullptr || issuer.size == 0) {
    return Status::kInvalidArgument;
  }
  std::size_t canonical_len = 0;
  const bool have_canonical =
      canonical_name(issuer, MutableBytes{issuer_canonical_, sizeof issuer_canonical_},
                     &canonical_len) == Status::kOk;
  bool hashed = false;
  bool hashed_old = false;
  std::uint32_t hash = 0;
  std::uint32_t hash_old = 0;
  if (have_canonical) {
    hash = detail::sha1_hash32(issuer_canonical_, canonical_len);
    hashed = true;
  }
  // The index key: the same function as index_key() computed at set-up.
  const std::uint32_t key = have_canonical ? hash : detail::fnv1a(issuer.data, issuer.size);
  Scan scan(*this, issuer, have_canonical ? issuer_canonical_ : nullptr, canonical_len, candidates);
  for (std::size_t i = 0; i < count_ && !scan.full(); ++i) {
    const Source& source = sources_[i];
    switch (source.kind) {
      case Kind::kDirectory:
        if (source.hash != DirectoryHash::kSubjectHashOld && hashed) {
          (void)search_directory(source, hash, scan);
        }
        if (source.hash != DirectoryHash::kSubjectHash) {
          if (!hashed_old) hash_old = detail::md5_hash32(issuer.data, issuer.size);
          hashed_old = true;
          (void)search_directory(source, hash_old, scan);
        }
        break;
      case Kind::kBundle:
        (void)search_bundle(source, key, scan);
        break;
      case Kind::kMemory:
        search_memory(source, key, scan);
        break;
    }
  }
  // A chain head that nothing was parsed into is no candidate.
  if (*candidates != nullptr && (*candidates)->version == 0) {
    mbedtls_x509_crt_free(*candidates);
    mbedtls_free(*candidates);
    *candidates = nullptr;
  }
  return scan.status();
}

int TrustStore::ca_callback(void* store, const mbedtls_x509_crt* child,
                            mbedtls_x509_crt** candidates) {
  *candidates = nullptr;
  auto* self = static_cast<TrustStore*>(store);
  const Status s =
      self->find_issuers(ConstBytes{child->issuer_raw.p, child->issuer_raw.len}, candidates);
  // Nothing found is not an error: mbedTLS then reports the chain as not trusted. Running out
  // of arena is (mbedTLS turns any non-zero value into MBEDTLS_ERR_X509_FATAL_ERROR).
  return s == Status::kBufferTooSmall ? MBEDTLS_ERR_X509_ALLOC_FAILED : 0;
}

}  // namespace stepback::https
