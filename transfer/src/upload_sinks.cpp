// The Upload's ends of its Client's exchanges: the chunk's body source (which feeds the
// running CRC-32C), the sink of the object's metadata, the Client's events passed on as the
// upload's, and the upload's own events. The machine that step() runs is in upload.cpp.
#include "stepback/transfer/upload.hpp"

namespace stepback::transfer {

void Upload::emit(const UploadEvent& e) const {
  if (options_.events.on_event != nullptr) options_.events.on_event(options_.events.context, e);
}

UploadEvent Upload::event(UploadEvent::Kind kind, Millis at) const {
  UploadEvent e;
  e.kind = kind;
  e.at = at;
  e.exchange = result_.exchanges;
  e.retry = retry_offset_ + machine_.retries();
  return e;
}

std::size_t Upload::read_chunk(void* self, std::uint64_t offset, https::MutableBytes out) {
  auto* u = static_cast<Upload*>(self);
  const std::uint64_t at = u->chunk_begin_ + offset;
  const std::size_t n = u->spec_.body.read(u->spec_.body.context, at, out);
  u->bytes_sent_ += n;
  u->digests_.hash(at, https::ConstBytes{out.data, n});
  return n;
}

bool Upload::write_metadata(void* self, std::uint64_t offset, https::ConstBytes data) {
  auto* u = static_cast<Upload*>(self);
  // Only the final answer's body is the object's metadata; 308s and errors are dropped.
  if (u->exchange_ == Exchange::kOpen || u->response_status_ / 100 != 2) return true;
  const https::ResponseSink& sink = u->options_.metadata;
  if (offset == 0 && u->metadata_delivered_ > 0) {
    // A later exchange brings the metadata again (the first copy was cut short).
    if (sink.write != nullptr && (sink.restart == nullptr || !sink.restart(sink.context))) {
      u->metadata_refused_restart_ = true;
      return false;
    }
    u->metadata_delivered_ = 0;
  }
  u->digests_.metadata(offset, data);
  const std::uint64_t at = u->metadata_delivered_;
  u->metadata_delivered_ += data.size;
  if (sink.write == nullptr || sink.write(sink.context, at, data)) return true;
  u->metadata_failed_ = true;
  return false;
}

void Upload::on_client_event(void* self, const https::ClientEvent& event) {
  auto* u = static_cast<Upload*>(self);
  if (event.kind == https::ClientEvent::Kind::kResponse) {
    u->response_status_ = event.status;
    UploadEvent e = u->event(UploadEvent::Kind::kResponse, event.at);
    e.status = event.status;
    e.reason = event.reason;
    u->emit(e);
  } else if (event.kind == https::ClientEvent::Kind::kProgress && event.sending &&
             u->exchange_ == Exchange::kChunk) {
    const std::uint64_t offset = u->chunk_begin_ + event.bytes;
    if (!u->meter_.due(event.at, offset)) return;
    UploadEvent e = u->event(UploadEvent::Kind::kProgress, event.at);
    e.offset = offset;
    e.size = u->spec_.size_final ? u->spec_.body.size : 0;
    e.rate = u->meter_.report(event.at, offset);
    u->emit(e);
  } else if (event.kind == https::ClientEvent::Kind::kError) {
    UploadEvent e = u->event(UploadEvent::Kind::kError, event.at);
    e.failure = event.failure;
    e.message = event.message;
    u->emit(e);
  }
}

}  // namespace stepback::transfer
