// stepback_download: a transfer::Download with the profile's options, to a file
// (app::DownloadFiles: FILE.part, its record, the rename) or to the app's sink with its
// checkpoint records handed over as bytes.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string_view>

#include "adapters.hpp"
#include "full.hpp"
#include "stepback/app/defaults.hpp"
#include "stepback/app/files.hpp"
#include "stepback/app/https_stack.hpp"
#include "stepback/https/http/url.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/stepback.h"
#include "stepback/transfer/download.hpp"
#include "stepback/transfer/state.hpp"
#include "storage.hpp"

namespace {

namespace capi = stepback::capi;
namespace https = stepback::https;
namespace transfer = stepback::transfer;
using stepback::Millis;

static_assert(STEPBACK_RECORD_MAX == transfer::kMaxStateBytes,
              "STEPBACK_RECORD_MAX is not transfer::kMaxStateBytes");

struct Download {
  Download(stepback::app::HttpsStack& stack, const stepback_options* c)
      : ok(settings.set(c, &why)),
        download(stack.connector(), settings.retry.context, options()),
        connector(&stack.connector()) {}
  Download(const Download&) = delete;
  Download& operator=(const Download&) = delete;

  transfer::DownloadOptions options() {
    transfer::DownloadOptions o = stepback::app::download_options(buffers);
    o.client = settings.client(buffers, this);
    o.client.body = https::ResponseSink{&write, &restart, this};
    o.client.events = https::EventSink{&on_event, this};
    o.checkpoints = transfer::CheckpointSink{&save, this};
    o.max_rate = settings.options.max_rate;
    return o;
  }

  // The body and the checkpoints go to the files or to the app, as the start said.
  static bool write(void* self, std::uint64_t offset, https::ConstBytes data) {
    auto* d = static_cast<Download*>(self);
    const https::ResponseSink s = d->to_file ? d->files.sink() : capi::sink_of(&d->sink);
    return s.write(s.context, offset, data);
  }
  static bool restart(void* self) {
    auto* d = static_cast<Download*>(self);
    const https::ResponseSink s = d->to_file ? d->files.sink() : capi::sink_of(&d->sink);
    return s.restart(s.context);
  }
  static bool save(void* self, const transfer::TransferState& state) {
    auto* d = static_cast<Download*>(self);
    bool saved = false;
    if (d->to_file) {
      const transfer::CheckpointSink s = d->files.checkpoints();
      saved = s.save(s.context, state);
    } else if (d->checkpoints.save != nullptr) {
      std::size_t n = 0;
      saved = transfer::encode_state(state, https::MutableBytes{d->record, sizeof d->record}, &n) ==
                  transfer::StateStatus::kOk &&
              d->checkpoints.save(d->checkpoints.context, d->record, n, state.delivered);
    }
    if (saved) capi::emit_checkpoint(d->settings.options, d->now, state.delivered);
    return saved;
  }
  static void on_event(void* self, const https::ClientEvent& e) {
    capi::emit(static_cast<Download*>(self)->settings.options, e);
  }

  // Starts the download of url_text from resume (null: byte 0).
  stepback_status begin(const transfer::TransferState* resume) {
    transfer::DownloadSpec spec;
    spec.url_text = url;
    (void)https::parse_url(url, &spec.url);
    spec.headers = settings.headers;
    spec.header_count = settings.header_count;
    spec.user_agent = settings.options.user_agent != nullptr ? settings.options.user_agent : "";
    spec.resume = resume;
    const https::Status s = download.start(spec);
    if (s != https::Status::kOk) {
      why = download.message();
      return capi::to_c(s);
    }
    started = true;
    return STEPBACK_OK;
  }

  capi::Settings settings;
  const char* why = "";
  bool ok;
  stepback::app::Buffers buffers{};
  stepback::app::DownloadFiles files;
  transfer::Download download;
  https::TcpTlsConnector* connector;
  transfer::TransferState resume_state;
  stepback_sink sink{};
  stepback_checkpoint_sink checkpoints{};
  std::uint8_t record[transfer::kMaxStateBytes] = {};
  char url[transfer::kMaxStateUrl + 1] = {};
  Millis now{};  // The step under way, for checkpoint events.
  bool to_file = false;
  bool started = false;
  bool finished = false;     // The files were finished (to_file).
  bool file_failed = false;  // ... and that failed: the result says so.
};

static_assert(capi::footprint<Download>() <= STEPBACK_DOWNLOAD_SIZE,
              "STEPBACK_DOWNLOAD_SIZE is too small for the download");

Download* self(stepback_download* d) { return capi::place<Download>(d); }
const Download* self(const stepback_download* d) { return capi::place<Download>(d); }

// Takes the URL for a new start; false (with words) when it is no http(s) URL or too long.
bool take_url(Download* d, const char* url) {
  d->started = false;
  d->finished = false;
  d->file_failed = false;
  d->why = "";
  https::Url parsed;
  if (!capi::copy_text(url, d->url, sizeof d->url) ||
      https::parse_url(d->url, &parsed) != https::Status::kOk) {
    d->why = "not an http(s) URL of at most 1024 bytes";
    return false;
  }
  return true;
}

}  // namespace

extern "C" {

stepback_status stepback_download_init(stepback_download* download, size_t size,
                                       stepback_stack* stack, const stepback_options* options) {
  if (stack == nullptr) return STEPBACK_E_INVALID_ARGUMENT;
  Download* made = nullptr;
  const stepback_status placed = capi::construct(
      download, size, &made, *capi::place<stepback::app::HttpsStack>(stack), options);
  if (placed != STEPBACK_OK) return placed;
  return made->ok ? STEPBACK_OK : STEPBACK_E_INVALID_ARGUMENT;
}

stepback_status stepback_download_keep_tls_session(stepback_download* download) {
  Download* d = self(download);
  if (!d->ok || d->started) return STEPBACK_E_STATE;
  d->files.keep_tls_session(d->connector);
  return STEPBACK_OK;
}

stepback_status stepback_download_start_file(stepback_download* download, const char* url,
                                             const char* path, const char* state_path) {
  Download* d = self(download);
  if (!d->ok) return STEPBACK_E_STATE;
  if (!take_url(d, url)) return STEPBACK_E_INVALID_ARGUMENT;
  if (path == nullptr) {
    d->why = "no path";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  d->to_file = true;
  using Open = stepback::app::DownloadFiles::Open;
  if (d->files.open(path, d->url, state_path) == Open::kRefused) {
    d->why = d->files.message();
    // A record there that was refused, or a file that could not be opened or cut.
    const char* record = state_path;
    char own[stepback::app::kMaxPath + 16];
    if (record == nullptr) {
      const int n = std::snprintf(own, sizeof own, "%s.part.state", path);
      if (n < 0 || static_cast<std::size_t>(n) >= sizeof own) return STEPBACK_E_INVALID_ARGUMENT;
      record = own;
    }
    return ::access(record, F_OK) == 0 ? STEPBACK_E_RECORD : STEPBACK_E_FILE;
  }
  const stepback_status s = d->begin(d->files.resume());
  if (s != STEPBACK_OK) d->files.discard();
  return s;
}

stepback_status stepback_download_start_sink(stepback_download* download, const char* url,
                                             const stepback_sink* sink,
                                             const stepback_checkpoint_sink* checkpoints,
                                             const uint8_t* record, size_t record_size) {
  Download* d = self(download);
  if (!d->ok) return STEPBACK_E_STATE;
  if (!take_url(d, url)) return STEPBACK_E_INVALID_ARGUMENT;
  if (sink == nullptr || sink->write == nullptr) {
    d->why = "no sink, or one without write()";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  d->to_file = false;
  d->sink = *sink;
  d->checkpoints = checkpoints != nullptr ? *checkpoints : stepback_checkpoint_sink{};
  const transfer::TransferState* resume = nullptr;
  if (record != nullptr) {
    const transfer::StateStatus s =
        transfer::decode_state(https::ConstBytes{record, record_size}, &d->resume_state);
    if (s != transfer::StateStatus::kOk) {
      d->why = transfer::describe(s);
      return STEPBACK_E_RECORD;
    }
    if (d->resume_state.kind != transfer::TransferKind::kDownload ||
        d->resume_state.url() != std::string_view(d->url)) {
      d->why = "the record is not a download of this URL";
      return STEPBACK_E_RECORD;
    }
    resume = &d->resume_state;
  }
  const stepback_status s = d->begin(resume);
  return s == STEPBACK_E_INVALID_ARGUMENT && resume != nullptr ? STEPBACK_E_RECORD : s;
}

stepback_next_kind stepback_download_step(stepback_download* download, int64_t now_ms,
                                          stepback_next* next) {
  Download* d = self(download);
  if (!d->started) return capi::answer(https::ClientNext{}, next);
  d->now = capi::to_millis(now_ms);
  const stepback_next_kind kind = capi::answer(d->download.step(d->now), next);
  if (kind == STEPBACK_NEXT_DONE && d->to_file && !d->finished) {
    d->finished = true;
    const bool success = d->download.result().outcome == stepback::Outcome::kSuccess;
    if (!d->files.finish(success)) {
      d->file_failed = true;
      d->why = d->files.message();
    }
  }
  if (kind == STEPBACK_NEXT_DONE && next != nullptr) {
    stepback_result r;
    stepback_download_result(download, &r);
    next->outcome = r.outcome;
  }
  return kind;
}

void stepback_download_pause(stepback_download* download, int64_t now_ms) {
  Download* d = self(download);
  d->now = capi::to_millis(now_ms);
  d->download.pause(d->now);
}

stepback_status stepback_download_resume(stepback_download* download, int64_t now_ms) {
  return capi::to_c(self(download)->download.resume(capi::to_millis(now_ms)));
}

bool stepback_download_paused(const stepback_download* download) {
  return self(download)->download.paused();
}

void stepback_download_cancel(stepback_download* download, int64_t now_ms) {
  Download* d = self(download);
  d->now = capi::to_millis(now_ms);
  d->download.cancel(d->now);
}

void stepback_download_network_available(stepback_download* download, int64_t now_ms) {
  self(download)->download.network_available(capi::to_millis(now_ms));
}

void stepback_download_run_hint(const stepback_download* download, const stepback_next* next,
                                stepback_run_hint* hint) {
  capi::to_c(self(download)->download.run_hint(capi::from_c(next)), hint);
}

void stepback_download_result(const stepback_download* download, stepback_result* result) {
  const Download* d = self(download);
  capi::to_c(d->download.result(), result);
  if (result != nullptr && d->file_failed) {
    result->outcome = STEPBACK_OUTCOME_TERMINAL_FAILURE;
    result->error = STEPBACK_E_FILE;
    result->message = d->why;
  }
}

uint64_t stepback_download_delivered(const stepback_download* download) {
  return self(download)->download.delivered();
}

uint64_t stepback_download_resumed_from(const stepback_download* download) {
  return self(download)->download.resumed_from();
}

const char* stepback_download_message(const stepback_download* download) {
  const Download* d = self(download);
  if (d->why[0] != '\0') return d->why;
  return d->started ? d->download.result().message : "";
}

void stepback_download_destroy(stepback_download* download) {
  Download* d = self(download);
  if (d->to_file && d->started && !d->finished) (void)d->files.keep();
  d->~Download();
}

}  // extern "C"
