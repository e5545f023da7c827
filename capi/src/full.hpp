// What the full C API's objects share: their options as the C++ layers take them (the
// profile's through stepback::app, the app's overrides on top), the retry context, and the
// translations of answers, events and results into the C structs.
#ifndef STEPBACK_CAPI_SRC_FULL_HPP_
#define STEPBACK_CAPI_SRC_FULL_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/app/defaults.hpp"
#include "stepback/app/https_stack.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/network.hpp"
#include "stepback/https/types.hpp"
#include "stepback/transfer/upload.hpp"
#include "stepback/stepback.h"

namespace stepback::capi {

// The C status of an HTTPS status (their values agree but for kError and kOk, swapped).
stepback_status to_c(https::Status s);

// The retry context of one object: the options' policy (or the profile's), the profile's
// budget size and an OS-seeded generator. Points into itself: never copied.
struct RetryParts {
  RetryParts() = default;
  RetryParts(const RetryParts&) = delete;
  RetryParts& operator=(const RetryParts&) = delete;
  // Takes `policy` (null: the profile's); false when it is not valid.
  bool set(const stepback_policy* policy);

  Policy policy;
  Xoshiro128 random{0};
  RetryBudget budget{profiles::active.budget};
  RetryContext context{policy, random, &budget};
};

// The options of one object, as given and as the C++ layers take them.
struct Settings {
  // Copies `c` (null: the defaults); false with words in *why when it cannot be taken.
  bool set(const stepback_options* c, const char** why);
  // The client's options over `buffers`: the profile's, the overrides, the events.
  https::ClientOptions client(app::Buffers& buffers, void* event_context);

  stepback_options options{};
  https::Header headers[STEPBACK_MAX_HEADERS];
  std::size_t header_count = 0;
  RetryParts retry;
};

// The events of a Client (a request's, a download's) as C events to `sink`.
void emit(const stepback_options& sink, const https::ClientEvent& e);
// The events of an Upload as C events.
void emit(const stepback_options& sink, const transfer::UploadEvent& e);
// A checkpoint event (download).
void emit_checkpoint(const stepback_options& sink, Millis at, std::uint64_t delivered);

// A step's answer as a C next; returns its kind.
stepback_next_kind answer(const https::ClientNext& n, stepback_next* out);
// A C next as the C++ one (for run hints).
https::ClientNext from_c(const stepback_next* next);
void to_c(const https::RunHint& h, stepback_run_hint* out);
void to_c(const https::ClientResult& r, stepback_result* out);

// Copies `text` NUL-terminated into out[size]; false when it does not fit.
bool copy_text(const char* text, char* out, std::size_t size);

}  // namespace stepback::capi

#endif  // STEPBACK_CAPI_SRC_FULL_HPP_
