// Upload's scan of the object metadata JSON for the stored object's digests. Not part of
// the API: a header of its own so that Upload can hold the scan's state and its fuzz target
// (tests/fuzz/x_goog_hash_fuzz.cpp) can reach it.
#ifndef STEPBACK_TRANSFER_DETAIL_METADATA_SCAN_HPP_
#define STEPBACK_TRANSFER_DETAIL_METADATA_SCAN_HPP_

#include <cstdint>

#include "stepback/https/integrity/integrity.hpp"
#include "stepback/https/types.hpp"

namespace stepback::transfer::detail {

// Scans a JSON body, fed in pieces of any size, for the top-level "crc32c" and "md5Hash"
// strings (Cloud Storage's object resource) and hands each to
// IntegrityCheck::add_x_goog_hash() as "crc32c=VALUE" or "md5=VALUE". Bounded state;
// anything it does not understand (escapes, values over 32 characters, nesting) is
// skipped, never trusted. A default-constructed scan is at the start of a body.
struct MetadataDigestScan {
  // Takes the next bytes of the body; digests found go to *digests.
  void feed(https::ConstBytes data, https::IntegrityCheck* digests);

  std::uint8_t depth = 0;  // Object/array nesting (saturating).
  bool in_string = false;
  bool escape = false;
  bool key_next = false;    // The next string at depth 1 is a key.
  bool value_next = false;  // After "key": at depth 1, the next string is its value.
  std::uint8_t key = 0;     // 1: "crc32c", 2: "md5Hash", 0: another.
  std::uint8_t length = 0;  // Of text[], saturating at sizeof text + 1.
  char text[32] = {};
  bool is_key = false;  // The string being read is a key.
};

}  // namespace stepback::transfer::detail

#endif  // STEPBACK_TRANSFER_DETAIL_METADATA_SCAN_HPP_
