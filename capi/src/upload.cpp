// stepback_upload: a transfer::Upload with the profile's options, its body from a file or
// the app's reader, and its state kept in a file (app::UploadStateFile) as it goes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include "adapters.hpp"
#include "full.hpp"
#include "stepback/app/defaults.hpp"
#include "stepback/app/https_stack.hpp"
#include "stepback/app/upload_state_file.hpp"
#include "stepback/https/http/url.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/stepback.h"
#include "stepback/transfer/state.hpp"
#include "stepback/transfer/upload.hpp"
#include "storage.hpp"

namespace {

namespace capi = stepback::capi;
namespace https = stepback::https;
namespace transfer = stepback::transfer;
using stepback::Millis;

// The body read from a file with pread(2), from any offset, any number of times.
struct FileBody {
  static std::size_t read(void* context, std::uint64_t offset, std::uint8_t* out, std::size_t n) {
    const int fd = *static_cast<int*>(context);
    ssize_t got = 0;
    do {
      got = ::pread(fd, out, n, static_cast<off_t>(offset));
    } while (got < 0 && errno == EINTR);
    return got > 0 ? static_cast<std::size_t>(got) : 0;
  }
};

struct Upload {
  Upload(stepback::app::HttpsStack& stack, const stepback_options* c)
      : ok(settings.set(c, &why)), upload(stack.connector(), settings.retry.context, options()) {}
  ~Upload() { close_file(); }
  Upload(const Upload&) = delete;
  Upload& operator=(const Upload&) = delete;

  transfer::UploadOptions options() {
    transfer::UploadOptions o = stepback::app::upload_options(buffers);
    o.events = transfer::UploadEventSink{&on_event, this};
    o.max_rate = settings.options.max_rate;
    return o;
  }
  static void on_event(void* self, const transfer::UploadEvent& e) {
    auto* u = static_cast<Upload*>(self);
    if (e.kind == transfer::UploadEvent::Kind::kWait) ++u->waits;
    capi::emit(u->settings.options, e);
  }
  void close_file() {
    if (fd >= 0) (void)::close(fd);
    fd = -1;
  }
  // Takes up the state file's record, if any: false (with words) when it is another upload's.
  stepback_status restore(const char* state_path, transfer::UploadSpec* spec);
  stepback_status begin(const char* url_text, const char* state_path, std::uint64_t chunk_size,
                        const char* content_type);

  capi::Settings settings;
  const char* why = "";
  bool ok;
  stepback::app::Buffers buffers{};
  transfer::Upload upload;
  std::optional<stepback::app::UploadStateFile> state;
  transfer::TransferState restored;
  stepback_source source{};
  int fd = -1;
  char url[transfer::kMaxStateUrl + 1] = {};
  char content_type[128] = {};
  std::uint32_t waits = 0;
  bool started = false;
  bool finished = false;
};

static_assert(capi::footprint<Upload>() <= STEPBACK_UPLOAD_SIZE,
              "STEPBACK_UPLOAD_SIZE is too small for the upload");

stepback_status Upload::restore(const char* state_path, transfer::UploadSpec* spec) {
  state.emplace(state_path, std::string_view(url));
  if (!state->valid()) {
    why = state->message();
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  switch (state->load(&restored)) {
    case stepback::app::StateFile::Load::kAbsent:
      return STEPBACK_OK;
    case stepback::app::StateFile::Load::kRefused:
      why = state->message();
      return STEPBACK_E_RECORD;
    case stepback::app::StateFile::Load::kLoaded:
      break;
  }
  if (restored.kind != transfer::TransferKind::kUpload || restored.total_size != source.size ||
      restored.url() != std::string_view(url)) {
    why = "the state file is another upload's (its kind, URL or body size differ)";
    return STEPBACK_E_RECORD;
  }
  spec->session = restored.session_uri();
  spec->resume.retries = restored.retries;
  spec->resume.wait = transfer::remaining_wait(restored, stepback::platform::wall_now());
  spec->resume.crc32c = restored.crc32c;
  spec->resume.crc32c_length = restored.committed;
  return STEPBACK_OK;
}

stepback_status Upload::begin(const char* url_text, const char* state_path,
                              std::uint64_t chunk_size, const char* type) {
  transfer::UploadSpec spec;
  if (!capi::copy_text(url_text, url, sizeof url) ||
      https::parse_url(url, &spec.url) != https::Status::kOk) {
    why = "not an http(s) URL of at most 1024 bytes";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  if (type != nullptr && !capi::copy_text(type, content_type, sizeof content_type)) {
    why = "a content type longer than 127 bytes";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  if (type == nullptr) content_type[0] = '\0';
  spec.body = capi::source_of(&source);
  if (chunk_size != 0) spec.chunk_size = chunk_size;
  spec.content_type = content_type;
  spec.headers = settings.headers;
  spec.header_count = settings.header_count;
  spec.user_agent = settings.options.user_agent != nullptr ? settings.options.user_agent : "";
  spec.idempotency = static_cast<https::RequestSpec::Idempotency>(settings.options.idempotency);
  if (state_path != nullptr) {
    const stepback_status s = restore(state_path, &spec);
    if (s != STEPBACK_OK) return s;
  }
  const https::Status s = upload.start(spec);
  if (s != https::Status::kOk) {
    why = "the upload was refused (chunk size, headers, URL or session URI)";
    return capi::to_c(s);
  }
  started = true;
  return STEPBACK_OK;
}

Upload* self(stepback_upload* u) { return capi::place<Upload>(u); }
const Upload* self(const stepback_upload* u) { return capi::place<Upload>(u); }

// Forgets the last start's body and state file.
void reset(Upload* u) {
  u->close_file();
  u->state.reset();
  u->started = false;
  u->finished = false;
  u->waits = 0;
  u->why = "";
}

}  // namespace

extern "C" {

stepback_status stepback_upload_init(stepback_upload* upload, size_t size, stepback_stack* stack,
                                     const stepback_options* options) {
  if (stack == nullptr) return STEPBACK_E_INVALID_ARGUMENT;
  Upload* made = nullptr;
  const stepback_status placed =
      capi::construct(upload, size, &made, *capi::place<stepback::app::HttpsStack>(stack), options);
  if (placed != STEPBACK_OK) return placed;
  return made->ok ? STEPBACK_OK : STEPBACK_E_INVALID_ARGUMENT;
}

stepback_status stepback_upload_start_file(stepback_upload* upload, const char* url,
                                           const char* path, const char* state_path,
                                           uint64_t chunk_size, const char* content_type) {
  Upload* u = self(upload);
  if (!u->ok) return STEPBACK_E_STATE;
  reset(u);
  if (path == nullptr) {
    u->why = "no path";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  u->fd = ::open(path, O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (u->fd < 0 || ::fstat(u->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    u->close_file();
    u->why = "the file cannot be opened for reading, or is not a regular file";
    return STEPBACK_E_FILE;
  }
  u->source = stepback_source{&FileBody::read, &u->fd, static_cast<std::uint64_t>(st.st_size)};
  return u->begin(url, state_path, chunk_size, content_type);
}

stepback_status stepback_upload_start_source(stepback_upload* upload, const char* url,
                                             const stepback_source* body, const char* state_path,
                                             uint64_t chunk_size, const char* content_type) {
  Upload* u = self(upload);
  if (!u->ok) return STEPBACK_E_STATE;
  reset(u);
  if (body == nullptr || body->read == nullptr) {
    u->why = "no body source, or one without read()";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  u->source = *body;
  return u->begin(url, state_path, chunk_size, content_type);
}

stepback_next_kind stepback_upload_step(stepback_upload* upload, int64_t now_ms,
                                        stepback_next* next) {
  Upload* u = self(upload);
  if (!u->started) return capi::answer(https::ClientNext{}, next);
  const Millis now = capi::to_millis(now_ms);
  const stepback_next_kind kind = capi::answer(u->upload.step(now), next);
  if (kind != STEPBACK_NEXT_DONE) {
    if (u->state && !u->state->maybe_save(u->upload, now, u->waits)) u->why = u->state->message();
  } else if (!u->finished) {
    u->finished = true;
    const transfer::UploadResult& r = u->upload.result();
    if (u->state && (r.outcome == stepback::Outcome::kSuccess || r.session_expired)) {
      (void)u->state->remove();
    } else if (u->state) {
      // The loop has ended: a later run starts a fresh one, from what the server holds.
      (void)u->state->save_final(u->upload, now);
    }
  }
  if (kind == STEPBACK_NEXT_DONE && next != nullptr) {
    next->outcome = static_cast<stepback_outcome>(u->upload.result().outcome);
  }
  return kind;
}

void stepback_upload_pause(stepback_upload* upload, int64_t now_ms) {
  Upload* u = self(upload);
  u->upload.pause(capi::to_millis(now_ms));
  if (u->state) (void)u->state->save_now(u->upload, capi::to_millis(now_ms));
}

void stepback_upload_resume(stepback_upload* upload, int64_t now_ms) {
  self(upload)->upload.resume(capi::to_millis(now_ms));
}

bool stepback_upload_paused(const stepback_upload* upload) { return self(upload)->upload.paused(); }

void stepback_upload_cancel(stepback_upload* upload, int64_t /*now_ms*/) {
  self(upload)->upload.cancel();
}

void stepback_upload_network_available(stepback_upload* upload, int64_t now_ms) {
  self(upload)->upload.network_available(capi::to_millis(now_ms));
}

void stepback_upload_run_hint(const stepback_upload* upload, const stepback_next* next,
                              stepback_run_hint* hint) {
  capi::to_c(self(upload)->upload.run_hint(capi::from_c(next)), hint);
}

void stepback_upload_result(const stepback_upload* upload, stepback_result* result) {
  if (result == nullptr) return;
  const transfer::UploadResult& r = self(upload)->upload.result();
  https::ClientResult as_client;
  as_client.outcome = r.outcome;
  as_client.status = r.status;
  as_client.error = r.error;
  as_client.attempts = r.exchanges;
  as_client.message = r.message;
  capi::to_c(as_client, result);
}

uint64_t stepback_upload_committed(const stepback_upload* upload) {
  return self(upload)->upload.committed();
}

int32_t stepback_upload_session(const stepback_upload* upload, char* out, size_t out_size) {
  const std::string_view s = self(upload)->upload.session_uri();
  if (s.empty() || out == nullptr || s.size() >= out_size || s.size() > INT32_MAX) return -1;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return static_cast<int32_t>(s.size());
}

const char* stepback_upload_message(const stepback_upload* upload) {
  const Upload* u = self(upload);
  if (u->why[0] != '\0') return u->why;
  return u->started ? u->upload.result().message : "";
}

void stepback_upload_destroy(stepback_upload* upload) { self(upload)->~Upload(); }

}  // extern "C"
