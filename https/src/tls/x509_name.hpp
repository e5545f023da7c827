// The subject-name hashes and the index key of a name that the trust store and its
// certificate scanner share (canonical_name() itself is public, in trust_store.hpp).
#ifndef STEPBACK_HTTPS_SRC_TLS_X509_NAME_HPP_
#define STEPBACK_HTTPS_SRC_TLS_X509_NAME_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/types.hpp"

namespace stepback::https::detail {

// The first four bytes of SHA-1 over `data`, little-endian (X509_NAME_hash over a canonical
// name).
std::uint32_t sha1_hash32(const std::uint8_t* data, std::size_t size);

// The first four bytes of MD5 over `data`, little-endian (X509_NAME_hash_old over a DER name).
std::uint32_t md5_hash32(const std::uint8_t* data, std::size_t size);

// 32-bit FNV-1a, the index key of a name that has no canonical form here.
std::uint32_t fnv1a(const std::uint8_t* data, std::size_t size);

// The index key of a name: its subject-name hash when it has a canonical form (so names that
// match only canonically share a key), else FNV-1a of its bytes. `scratch` holds
// kMaxCanonicalNameBytes.
std::uint32_t index_key(ConstBytes name, std::uint8_t* scratch);

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_TLS_X509_NAME_HPP_
