#include "stepback/https/client/connection.hpp"

namespace stepback::https {

void Connection::keep_for(const Url& url, std::string_view open_host, bool idle) {
  if (kept_ && !(idle && url.port == port_ && url.tls == tls_ && url.host == open_host)) close();
}

bool Connection::reuse() {
  if (kept_) {
    std::uint8_t probe[1];
    std::size_t n = 0;
    if (stream().recv(MutableBytes{probe, sizeof probe}, &n) != Status::kWouldBlock) close();
  }
  reused_ = kept_;
  return kept_;
}

Status Connection::open(const Url& url, const char* host, Millis now, const Timeouts& timeouts) {
  reused_ = false;
  ++opened_;
  port_ = url.port;
  tls_ = url.tls;
  return connector_.open(url, host, now, timeouts);
}

Status Connection::step(Millis now) {
  const Status s = connector_.step(now);
  if (s == Status::kOk) resumed_ = connector_.resumed();
  return s;
}

void Connection::exchange_done(bool keep) {
  connector_.exchange_done();
  if (keep) {
    kept_ = true;
  } else {
    close();
  }
}

void Connection::close() {
  connector_.close();
  kept_ = false;
}

void Connection::network_changed() {
  close();
  connector_.network_changed();
}

}  // namespace stepback::https
