// Client: one HTTPS (or plain HTTP) request retried per a policy, step-driven from the
// application's main loop. It drives a caller-built Connector, keeps connections alive
// between attempts, resumes a cut download where it stopped, and never hands the caller a
// spliced body; every byte lives in caller buffers.
#ifndef STEPBACK_HTTPS_CLIENT_HPP_
#define STEPBACK_HTTPS_CLIENT_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/core/progress.hpp"
#include "stepback/core/rate_limit.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/core/timeouts.hpp"
#include "stepback/https/client/body_state.hpp"
#include "stepback/https/client/connection.hpp"
#include "stepback/https/client/early_data.hpp"
#include "stepback/https/client/follow_up.hpp"
#include "stepback/https/client/network_gate.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/https/http/exchange.hpp"
#include "stepback/https/http/request.hpp"
#include "stepback/https/integrity/integrity.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/http/response_parser.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// What the client needs from the main loop next.
struct ClientNext {
  enum class Kind : std::uint8_t {
    kWaitIo,     // Poll `fd` (always >= 0) for `interest`, waking at `at` at the latest.
    kWaitUntil,  // Sleep until `at` (monotonic; at or before now: step again at once).
    kDone,       // Finished: see Client::result().
  };
  Kind kind = Kind::kDone;
  int fd = -1;
  IoInterest interest = IoInterest::kNone;
  Millis at{};

  // Poll `fd` for `interest` until `at` at the latest.
  static constexpr ClientNext wait_io(int fd, IoInterest interest, Millis at) {
    return ClientNext{Kind::kWaitIo, fd, interest, at};
  }
  // Sleep until `at`.
  static constexpr ClientNext wait_until(Millis at) {
    return ClientNext{Kind::kWaitUntil, -1, IoInterest::kNone, at};
  }
  // Finished.
  static constexpr ClientNext done() { return ClientNext{}; }
};

// How a request ended, valid once step() answered kDone.
struct ClientResult {
  Outcome outcome = Outcome::kCancelled;  // Why the retry loop ended.
  std::uint16_t status = 0;               // The last HTTP status, 0 if none arrived.
  Status error = Status::kOk;             // The last attempt's failure, or why the client stopped.
  std::uint32_t attempts = 0;
  // Words on the last failure ("" if none); valid until the next start() or the client's end.
  const char* message = "";
};

// Something that happened, for progress lines and traces.
struct ClientEvent {
  enum class Kind : std::uint8_t {
    kAttempt,
    kResponse,
    kError,
    kWait,
    kResume,
    kIntegrity,
    kRedirect,    // A redirect is followed: `status`, and `url`, where the next request goes.
    kUrlRefresh,  // An expired pre-signed URL was replaced: `status` (the expiry answer's),
                  // `url` (the fresh one), `offset` (where the body goes on).
    kProgress,    // Body bytes moved (ClientOptions::progress paces these): bytes, total, rate.
    kDone
  };
  Kind kind = Kind::kAttempt;
  Millis at{};                                    // Monotonic time of the event.
  std::uint32_t attempt = 0;                      // 1-based attempt number.
  std::uint16_t status = 0;                       // kResponse, kDone: the HTTP status.
  std::string_view reason;                        // kResponse: the reason phrase.
  Failure failure = Failure::kNone;               // kError: the failure kind.
  const char* message = "";                       // kError: what failed, in words.
  Millis wait{};                                  // kWait: its length.
  WaitReason wait_reason = WaitReason::kBackoff;  // kWait: why that long.
  Outcome outcome = Outcome::kSuccess;            // kDone.
  std::uint64_t offset = 0;                       // kResume: the byte the next attempt asks for.
  std::string_view validator;                     // kResume: the If-Range value ("" when none).
  std::string_view url;                           // kRedirect: the new URL.
  // kResponse: whether the request rode in TLS 1.3 early data, and whether the server took
  // it there (kNone: it went after the handshake only).
  EarlyData early_data = EarlyData::kNone;
  bool verified = false;  // kIntegrity: whether the stated digests matched; message
                          // names algorithm, expected and got.
  // kProgress: `sending` false: the response body's bytes the sink holds (a resumed offset
  // included) and the representation's length when known; true: the request body's bytes
  // sent this attempt, of its length. `rate`: bytes a second over the last few reports.
  // Retries so far: attempt - 1.
  bool sending = false;
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> total;
  std::uint64_t rate = 0;
};

// Receives events; called synchronously from step().
struct EventSink {
  void (*on_event)(void* context, const ClientEvent& event) = nullptr;
  void* context = nullptr;
};

// Caller-owned memory of one client.
struct ClientBuffers {
  MutableBytes request;        // The request head (method line and headers, Range on resume).
  MutableBytes response_head;  // The response status line and headers.
  MutableBytes io;             // Receive and body-send scratch; 4-16 KiB is plenty.
  MutableBytes error_body;     // Kept from retryable error responses, to read RetryInfo.
};

// Where the Authorization value of every attempt comes from (the app owns its tokens).
// authorization(context, refresh, out) writes the value ("Bearer ya29...") into `out` and
// returns its length: 0 sends no Authorization field; more than out.size means it does not
// fit, and the request fails with kBufferTooSmall. It is asked before every attempt, so a
// request that outlives its token (a long backoff, a long poll) sends a fresh one; `refresh`
// is true after a 401 whose WWW-Authenticate says error="invalid_token" (Google sends that for
// expired tokens): the app must return a new token, not its cached one. The value is written
// only into the request head, never into events, messages or results.
struct Credentials {
  std::size_t (*authorization)(void* context, bool refresh, MutableBytes out) = nullptr;
  void* context = nullptr;
};

// Everything a Client is configured with, besides its connector and retry context.
struct ClientOptions {
  Timeouts timeouts;
  ClientBuffers buffers;
  ResponseSink body;
  std::uint64_t body_limit = UINT64_MAX;  // Most body bytes one response may carry.
  EventSink events;
  // The wall clock (milliseconds since the Unix epoch), to read HTTP-date Retry-After values
  // of responses without a Date field (with one, the delay is Retry-After - Date).
  // Required: start() answers kInvalidArgument without it. (Certificate validity reads the
  // clock given to TlsClientConfig::set_wall_clock.)
  Millis (*wall_now)() = nullptr;
  // The Authorization value of every attempt; none by default. A first 401 with
  // error="invalid_token" gets one fresh token and an immediate attempt (no backoff, no retry
  // counted); a second 401 in a row ends the request (kTerminalStatus).
  Credentials credentials;
  // An overall limit on the request, attempts and waits included (curl's --max-time); when
  // it passes, the request ends with Status::kTimeLimit. None by default.
  std::optional<Millis> max_time;
  // Redirects (301, 302, 303, 307, 308 with a Location) one request follows, at most; 0: none,
  // a 3xx is the final response (transfer::Upload relies on that for its 308s). A redirect
  // is neither an attempt nor a failure: it goes at once, in the same retry loop, deadline
  // and max_time. 303, and 301/302 after a POST, become a GET without body or Content-*
  // fields; 307/308 keep method and body. Another origin gets no credentials (the
  // Credentials callback is not asked; Authorization, Cookie and Proxy-Authorization fields
  // are left out) and no Host override. An https request redirected to http, a URL visited
  // before in the chain (a loop), one redirect more than allowed, or a Location that is not
  // an http(s) URL end the request with Status::kRedirect and words on which.
  std::uint8_t max_redirects = 0;
  // Holds the URL a redirect leads to, as text; 2 KiB fits most. Too small for one: the
  // request ends with Status::kRedirect.
  MutableBytes redirect_url;
  // Token buckets that pace the bytes received and sent through the connection (heads
  // included); null: no limit. The caller's (a transfer shares one across its retries and
  // exchanges); each must outlive the client. While a bucket is empty, step() answers
  // kWaitUntil the instant a quantum is there (four io buffers, what step() moves at most,
  // or half the burst, the smaller), never a busy turn; a receive asks the connection for no
  // more than the bucket holds, so unread bytes stay with the sender and its TCP window
  // closes.
  // The throughput floor is held to half a limit's rate, so that a limit never fails its
  // own transfer as too slow.
  RateLimiter* receive_limit = nullptr;
  RateLimiter* send_limit = nullptr;
  // Pre-signed URLs that expire mid-transfer (Cloud Storage V4 signed URLs, S3 pre-signed
  // URLs): a GET whose response is the provider's expiry answer (presigned_url_expired(),
  // https/http/url_expiry.hpp) asks `url_refresh` for a fresh URL and goes on at once from the
  // bytes the sink holds: Range and If-Range on the object's strong ETag or Last-Modified, its
  // Cloud Storage generation and its length, so that another object is never spliced on (it
  // is fetched whole, the sink restarted, as after any change). Neither a retry nor a
  // failure; at most max_url_refreshes a request (then the expiry answer ends it). The fresh
  // URL is kept in redirect_url (so that buffer must hold it) and must not go from https to
  // http. With url_refresh set, a 400 or 403 body is read into buffers.error_body to be
  // checked; when it is not an expiry and the sink has nothing yet, what of it fit goes to
  // the sink as before.
  UrlRefresh url_refresh;
  std::uint8_t max_url_refreshes = 3;
  // How often kProgress events come while body bytes move (by default, 64 KiB and 250 ms
  // apart, both). They come from step(), after the bytes, so none arrive while the loop
  // waits; kDone, not a last kProgress, says the body is complete. An invalid policy (see
  // valid()): start() answers kInvalidArgument.
  ProgressPolicy progress;
  // Which networks the request may use (all, by default); see Client::network_changed.
  NetworkPolicy network;
};

// One request with retries. Not copyable; everything it is given must outlive it.
//
// Limits: the policy's total deadline stops new attempts and backoff waits, and cuts an
// attempt only while it is still connecting; once connected, an attempt ends on a stall
// (timeouts.read without a byte sent or received), on a response head not complete within
// timeouts.read of the request, on a body below the throughput floor (timeouts.speed_limit
// over timeouts.speed_time), or on max_time; each of those but max_time is a retryable
// timeout, and a cut GET resumes by Range.
class Client {
 public:
  // A client that opens connections through `connector`, retrying per `context` (policy,
  // randomness, budget). `connector` and `context` must outlive the client.
  Client(Connector& connector, const RetryContext& context, const ClientOptions& options);
  // A temporary context would dangle.
  Client(Connector& connector, RetryContext&& context, const ClientOptions& options) = delete;
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Prepares `spec` (writes its head); kInvalidArgument (bad request, no wall clock) or
  // kBufferTooSmall on failure. A connection the last request left open (its response
  // allowed keep-alive) serves this one if it goes to the same origin (scheme, host, port),
  // after the liveness check every kept connection gets; any other connection is closed.
  [[nodiscard]] Status start(const RequestSpec& spec);
  // start() for a GET whose sink holds the first resume.offset bytes of the representation;
  // kInvalidArgument also for another method, a validator or generation that does not fit
  // or is malformed, or an integrity state that does not cover exactly `offset` bytes.
  [[nodiscard]] Status start(const RequestSpec& spec, const BodyResume& resume);
  // After a request that ended with a finished piece (status 206, the representation not
  // complete), asks for the next one, up to byte `until` (exclusive; UINT64_MAX: the rest), as
  // a new request: the same URL (where redirects led), the kept connection, and the same
  // validator, generation and integrity check, which covers the whole representation once
  // the last piece is in; its retries and deadline start afresh, max_time still counts from
  // the first request's first step. kInvalidArgument when there is no such piece to follow.
  [[nodiscard]] Status continue_body(std::uint64_t until);
  // Whether the request ended with a finished piece that continue_body() would follow: a 206
  // of a representation not yet complete.
  bool piece_finished() const;
  // Advances the request at `now` (monotonic), doing bounded work; never blocks (with the
  // built-in connectors, names go through a non-blocking Resolver).
  [[nodiscard]] ClientNext step(Millis now);
  // Ends the request with Outcome::kCancelled and closes the connection (also one kept
  // open after a request that is done).
  void cancel();
  // Connectivity has returned, or the device switched networks (Android's
  // ConnectivityManager.NetworkCallback onAvailable / onLost of the default network, Apple's
  // NWPathMonitor): what belongs to the old network is dropped and waiting is cut short.
  //   - a kept-alive connection is closed (the next attempt opens one on the new network);
  //   - a lookup or connect under way starts over at once (nothing of the request has left,
  //     so this is the same attempt, not a retry), after Connector::network_changed();
  //   - a backoff wait shrinks as RetryMachine::network_available() says (a server-requested
  //     wait is kept);
  //   - a request or response on its way is left alone: if the old path is gone it ends on
  //     the read timeout and is retried.
  // Then call step() (the answer to the last step() may have changed).
  void network_available(Millis now);
  // The device's default network changed to `network` (Android's NetworkCallback onAvailable,
  // onLost and onCapabilitiesChanged; Apple's NWPathMonitor). What ran on the old one ends at
  // once instead of on the read timeout:
  //   - a kept connection is closed and the connector told (Connector::network_changed);
  //   - a lookup, connect or exchange under way is abandoned, and the attempt goes again on
  //     the new network without counting as a retry: a GET goes on from the bytes the sink
  //     has, by Range; a request that may have reached the server and is not idempotent ends
  //     (Outcome::kNotIdempotent) rather than be sent twice;
  //   - a backoff wait shrinks as network_available() says, when the new one is usable.
  // Reachability is learned from attempts, not guessed from `network`: without a network the
  // request is still tried (loopback, the device's own addresses, a LAN or a VPN route may
  // reach its destination), and it waits only once an attempt found no path (no route,
  // network unreachable, no DNS server reachable: Connector::unreachable()) while the last
  // `network` says connected = false; every later call lets it try again. On a network
  // ClientOptions::network refuses (a metered network for a large download, a roaming one)
  // it waits without trying. Either wait (a kWait event, WaitReason::kOffline, its message
  // says why) spends no retry and no deadline, for at most Timeouts::offline counted from its
  // first start until a usable network is announced; then it ends with Outcome::kOffline.
  // Then call step().
  void network_changed(Millis now, const NetworkInfo& network);
  // Whether the request may go on: the current network (the last network_changed()) is one
  // its policy allows, and no attempt since found that there is none.
  bool network_usable() const;
  // How long the request has waited for a network it may use (excluded from its deadline);
  // a layer that retries across requests excludes it from its own (transfer::Upload).
  Millis time_offline() const { return gate_.time_offline(); }
  // The request's RunHint after step() answered `next`: what it waits for, until when, what
  // network it needs and the response bytes left (or the request body's, before a response).
  RunHint run_hint(const ClientNext& next) const;
  // The result; meaningful after step() answered kDone.
  const ClientResult& result() const { return result_; }
  // The URL redirects led the request to, as text in ClientOptions::redirect_url; "" when no
  // redirect was followed. Valid until the next start().
  std::string_view redirected_url() const {
    return std::string_view(reinterpret_cast<const char*>(options_.redirect_url.data),
                            follow_.url_size());
  }
  // Redirects followed by the request.
  std::uint32_t redirects() const { return follow_.redirects(); }
  // Expired URLs the request replaced (ClientOptions::url_refresh).
  std::uint32_t url_refreshes() const { return follow_.url_refreshes(); }
  // Whether the final response was a pre-signed URL's expiry answer that no fresh URL
  // followed (url_refresh gave none, or max_url_refreshes were used): what the sink holds is
  // still good for a later request with a fresh URL.
  bool url_expired() const { return follow_.url_expired(); }
  // The first field named `name` (case-insensitive) of the last response head received, a
  // view into the caller's response-head buffer valid until the next start(); nullopt when
  // there is none (e.g. Location of a resumable-upload session, Range of a 308).
  std::optional<std::string_view> response_header(std::string_view name) const {
    return parser_.header(name);
  }
  // What the last attempt reported to the retry machine: its status or failure kind and
  // the server's delay (Retry-After or RetryInfo) when one was given. For layers that retry
  // across requests themselves (transfer::Upload).
  const AttemptResult& last_attempt() const { return last_attempt_; }
  // The body of the last response the retry rules handled as retryable (a 503 the client
  // gave up after, say), as much of it as ClientBuffers::error_body holds; empty when the
  // last attempt had none.
  ConstBytes error_body() const { return body_.captured(); }
  // Whether the last handshake resumed a saved TLS session.
  bool resumed() const { return conn_.resumed(); }
  // Whether the last attempt's request rode in TLS 1.3 early data, and how the server took it.
  EarlyData early_data() const { return early_.result().state; }
  // Connections opened so far (reused keep-alive connections are not counted again).
  std::uint32_t connections() const { return conn_.opened(); }
  // Bytes of the response representation delivered to the sink (across resumed attempts).
  std::uint64_t delivered() const { return body_.delivered(); }
  // The representation's length when the response stated it (Content-Length of a 200, the
  // total of a 206's Content-Range); nullopt otherwise.
  std::optional<std::uint64_t> expected_size() const { return body_.total(); }
  // What pins a resume to the representation being delivered: its strong ETag or
  // Last-Modified ("" when it has neither), whether that is an ETag, and Cloud Storage's
  // generation ("" when none). Views into the client, valid until the next start().
  std::string_view validator() const { return body_.validator(); }
  bool validator_is_etag() const { return body_.validator_is_etag(); }
  std::string_view generation() const { return body_.generation(); }
  // The integrity check over the delivered bytes, to keep beside them (see BodyResume).
  IntegrityState integrity_state() const { return body_.integrity_state(); }
  // Where the body stands, as start(spec, resume) takes it to go on from here: the bytes the
  // sink has (offset), what pins them (the validator; the generation only when no redirect
  // was followed, since a resume starts again at the URL asked for), the length when known,
  // and the integrity check over them (the byte count alone when no digest was announced);
  // until is UINT64_MAX. Views into the client, valid until the next start().
  BodyResume body_resume() const;
  // Bytes received again from the server that had been delivered already (a 200 that
  // ignored the range and was skipped through, or a representation started over).
  std::uint64_t refetched() const { return body_.refetched(); }

 private:
  enum class Phase : std::uint8_t { kIdle, kConnecting, kSending, kReceiving, kWaiting, kDone };

  // What one phase handler decided: yield `next` to the caller, or go on in `phase`.
  struct Step {
    bool yield = false;
    ClientNext next;
    Phase phase = Phase::kIdle;
  };
  static Step go(Phase phase) { return Step{false, ClientNext{}, phase}; }
  static Step yield(const ClientNext& next, Phase phase) { return Step{true, next, phase}; }

  // The phase handlers; step() dispatches to them and is the only place phase_ changes.
  Step on_machine(Millis now);
  Step on_connect(Millis now);
  Step on_send(Millis now);
  Step on_receive(Millis now);
  // Ends the lookup, connect or exchange under way on the network that went away (or that the
  // request may no longer use); the attempt goes again, uncounted, unless it must not.
  Step on_network_switch(Millis now);
  // Waits for a network the request may use, or ends the request when the wait is over.
  Step hold(Millis now);
  // The machine's step, the time held excluded from its deadline first.
  Next machine_step(Millis now);
  // The send after a hold, spread (NetworkGate::spread): when it may go, with the wait's event.
  Millis spread_send(Millis now);
  // Why the current network may not be used, in words ("" when it may).
  const char* network_refusal() const { return gate_.refusal(options_.network, transfer_size()); }
  // What NetworkPolicy::metered_up_to weighs: the request body's size, else the response's
  // length once known (0 before).
  std::uint64_t transfer_size() const;

  Step begin_attempt(Millis now);
  void reset_exchange(Millis now);
  // Asks for a new connection, which on_connect() opens on the next turn.
  Step open_connection();
  Step end_response(Millis now, bool reusable);
  // Follows the redirect the last response is, or ends the request on it.
  Step follow_redirect(Millis now);
  // Asks url_refresh for a fresh URL and goes on with it; or, without one, the expiry answer
  // ends the request.
  Step refresh_url(Millis now);
  bool is_followed_redirect() const {
    return FollowUp::is_redirect(parser_, options_.max_redirects);
  }
  Step fail_attempt(Millis now, Status status, const char* message);
  // What the exchange's turn means for the request.
  Step after_exchange(Millis now, const Exchange::Result& r, Phase phase);
  Step report(Millis now, const AttemptResult& result);
  Step stop(Millis now, Outcome outcome, Status status, const char* message);
  // Ends the request because the sink cannot start the body over (kRestartRefused).
  Step refuse_splice(Millis now);
  AttemptResult response_result() const;
  // Whether the head asks for the Authorization value (Credentials), and for a fresh one.
  struct Authorize {
    bool ask = false;
    bool refresh = false;
  };
  // The request head: the request's, through a forward proxy when the connector says so, with
  // the range `range` asks for, and Authorization as `authorize` says.
  Status write_head(const BodyState::Range& range, Authorize authorize);
  Status write_head(const BodyState::Range& range) { return write_head(range, Authorize{}); }
  // Emits a kError event of `status`'s failure kind with `message`.
  void emit_error(Millis now, Status status, const char* message) const;
  // A 425 Too Early to a request the server took as early data: it goes again after the
  // handshake, once per attempt, not as a retry.
  Step resend_too_early(Millis now);
  // The request head as written in buffers.request.
  ConstBytes head() const { return ConstBytes{options_.buffers.request.data, head_size_}; }
  bool token_rejected() const {
    return follow_.token_rejected(parser_, options_.credentials.authorization != nullptr);
  }
  // Decides what the response's body is for (once its head is complete).
  void decide_body(Millis now);
  Step wait_io(int fd, IoInterest interest, Millis deadline, Phase phase) const;
  // A kProgress event of `bytes` (sent of the request body, or the sink's), if one is due.
  void report_progress(Millis now, bool sending, std::uint64_t bytes);
  void emit(const ClientEvent& event) const;
  // An event of `kind` at `now` for the current attempt, the other fields empty.
  ClientEvent event(ClientEvent::Kind kind, Millis now) const;
  static bool deliver_body(void* self, ConstBytes data);

  const RetryContext& context_;
  RetryMachine machine_;
  ClientOptions options_;
  ResponseParser parser_;
  Exchange exchange_;          // The attempt's request and response on the connection.
  Request request_;            // The request where redirects and fresh URLs took it, and its rules.
  std::size_t head_size_ = 0;  // Bytes of the request head in buffers.request.
  ProgressMeter meter_;        // Paces kProgress: the request body's, then the response's.
  Millis time_limit_ = Millis::max();  // options.max_time from the first step.
  Millis now_{};                       // The `now` of the step() under way, for events.
  ClientResult result_;
  Phase phase_ = Phase::kIdle;
  bool started_ = false;  // The first step() has run (time_limit_ is set).
  AttemptResult last_attempt_;
  bool forwarded_ = false;     // This attempt's request goes to a forward proxy (http://).
  bool open_pending_ = false;  // on_connect() opens a new connection before stepping it.
  // A limit's words: "the retry deadline passed while connecting to 'host'", or the offline
  // limit's (NetworkGate::hold).
  char limit_message_[256] = {};
  bool meter_receiving_ = false;  // meter_ follows the response body (from its first byte).
  EarlyDataStage early_;          // Whether the request rides in TLS 1.3 early data.
  bool uncounted_ = false;        // The next attempt follows a redirect, a fresh URL or a network
                                  // switch: not counted.
  BodyState body_;                // What the sink holds and what each response's body is for.
  FollowUp follow_;
  NetworkGate gate_;
  Connection conn_;  // Opened, kept and reused across requests.
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_CLIENT_HPP_
