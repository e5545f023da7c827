#include "tools/reporter.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "tests/tools/captured_file.hpp"

namespace stepback::tools {
namespace {

using Kind = https::ClientEvent::Kind;

// Feeds `events` to a Reporter writing into a temporary file and returns what it wrote.
std::string report(bool trace, std::initializer_list<https::ClientEvent> events,
                   std::optional<Millis> time_limit = std::nullopt) {
  std::FILE* out = std::tmpfile();
  EXPECT_NE(out, nullptr);
  if (out == nullptr) return "";
  {
    Reporter reporter(out, trace, /*countdown=*/false, "stepback get: ", Millis(1000));
    reporter.set_time_limit(time_limit);
    const https::EventSink sink = reporter.sink();
    for (const https::ClientEvent& e : events) sink.on_event(sink.context, e);
  }
  std::string text;
  std::rewind(out);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, out)) > 0) text.append(buffer, n);
  std::fclose(out);
  return text;
}

https::ClientEvent attempt(std::uint32_t n, Millis at = Millis(1000)) {
  https::ClientEvent e;
  e.kind = Kind::kAttempt;
  e.attempt = n;
  e.at = at;
  return e;
}

https::ClientEvent response(std::uint32_t n, std::uint16_t status, std::string_view reason) {
  https::ClientEvent e;
  e.kind = Kind::kResponse;
  e.attempt = n;
  e.status = status;
  e.reason = reason;
  e.at = Millis(1000);
  return e;
}

https::ClientEvent wait(std::uint32_t n, Millis length, WaitReason why) {
  https::ClientEvent e;
  e.kind = Kind::kWait;
  e.attempt = n;
  e.wait = length;
  e.wait_reason = why;
  e.at = Millis(1000);
  return e;
}

https::ClientEvent done(std::uint32_t attempts, Outcome outcome) {
  https::ClientEvent e;
  e.kind = Kind::kDone;
  e.attempt = attempts;
  e.outcome = outcome;
  e.at = Millis(2500);
  return e;
}

TEST(Reporter, OneLinePerAttemptWithTheWaitAndWhy) {
  EXPECT_EQ(report(false, {attempt(1), response(1, 503, "Service Unavailable"),
                           wait(1, Millis(1500), WaitReason::kRetryAfter), attempt(2),
                           response(2, 200, "OK"), done(2, Outcome::kSuccess)}),
            "attempt 1: 503 Service Unavailable, retrying in 1.50 s (Retry-After)\n"
            "attempt 2: 200 OK\n");
}

// Regression: the status and an error after it ran together ("200 OKthe connection ...").
TEST(Reporter, AnErrorAfterTheStatusIsSetApart) {
  https::ClientEvent error;
  error.kind = Kind::kError;
  error.attempt = 1;
  error.failure = Failure::kReset;
  error.message = "the connection closed before the body ended";
  const std::string text = report(false, {attempt(1), response(1, 200, "OK"), error,
                                          wait(1, Millis(1000), WaitReason::kBackoff)});
  EXPECT_EQ(text,
            "attempt 1: 200 OK, the connection closed before the body ended (reset), retrying in "
            "1.00 s\n");
}

// Regression: a run ended by --max-time closed with "stopped after 1 attempt:
// terminal_failure (the transport failed in a way that is not retried)"; it names the limit.
TEST(Reporter, ARunEndedByTheTimeLimitSaysSo) {
  https::ClientEvent error;
  error.kind = Kind::kError;
  error.attempt = 1;
  error.failure = Failure::kTimeLimit;
  error.message = "the request's overall time limit (max_time) passed";
  const auto run = [&error](std::optional<Millis> limit) {
    return report(false,
                  {attempt(1), response(1, 200, "OK"), error, done(1, Outcome::kTerminalFailure)},
                  limit);
  };
  EXPECT_EQ(run(Millis(2000)),
            "attempt 1: 200 OK, the request's overall time limit (max_time) passed (time_limit)\n"
            "stepback get: stopped after 1 attempt: the time limit (--max-time 2 s) passed\n");
  EXPECT_NE(run(Millis(1500)).find("the time limit (--max-time 1.5 s) passed"), std::string::npos);
  EXPECT_NE(run(std::nullopt)
                .find("stopped after 1 attempt: the request's time limit (max_time) "
                      "passed\n"),
            std::string::npos);
  // Another terminal failure keeps its outcome's words.
  error.failure = Failure::kProtocol;
  EXPECT_NE(run(Millis(2000))
                .find("stopped after 1 attempt: terminal_failure (the transport "
                      "failed in a way that is not retried)"),
            std::string::npos);
}

// What the server sent never reaches the terminal raw: C0 and C1 controls become '?'.
TEST(Reporter, ControlBytesFromTheServerArePrintedAsQuestionMarks) {
  const std::string text = report(false, {attempt(1),
                                          response(1, 500,
                                                   std::string_view("Bad\x1b[2J\x9b"
                                                                    "1m",
                                                                    10)),
                                          done(1, Outcome::kTerminalStatus)});
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x9b'), std::string::npos) << text;
  EXPECT_NE(text.find("attempt 1: 500 Bad?[2J?1m\n"), std::string::npos) << text;
  EXPECT_NE(text.find("stepback get: stopped after 1 attempt: terminal_status"), std::string::npos)
      << text;
}

// --trace: one JSON object per event, with what the server sent escaped.
TEST(Reporter, TraceLinesAreJsonWithTheServersBytesEscaped) {
  const std::string text = report(
      true, {attempt(1, Millis(1250)), response(1, 503, std::string_view("a\"b\\c\x01\xff", 7))});
  EXPECT_EQ(text,
            "{\"event\":\"attempt\",\"t_ms\":250,\"n\":1}\n"
            "{\"event\":\"response\",\"t_ms\":0,\"n\":1,\"status\":503,"
            "\"reason\":\"a\\\"b\\\\c\\u0001\\u00ff\"}\n");
}

// A progress line is cut at its buffer, never overrun; a reason is cut at kMaxFieldBytes.
TEST(Reporter, LongFieldsAreCut) {
  const std::string reason(5000, 'x');
  const std::string text = report(
      false, {attempt(1), response(1, 500, reason), wait(1, Millis(1000), WaitReason::kBackoff)});
  EXPECT_EQ(text, "attempt 1: 500 " + std::string(kMaxFieldBytes, 'x') + ", retrying in 1.00 s\n");
}

// On a terminal the attempt's line is redrawn in place: the countdown of its wait after it,
// every tick, then the line alone once the next attempt begins.
TEST(Reporter, ATerminalCountsTheWaitDownInPlace) {
  CapturedFile out;
  Reporter reporter(out.get(), /*trace=*/false, /*countdown=*/true, "stepback get: ", Millis(0));
  const https::EventSink sink = reporter.sink();
  for (const https::ClientEvent& e : {attempt(1), response(1, 503, "Service Unavailable"),
                                      wait(1, Millis(1500), WaitReason::kRetryAfter)}) {
    sink.on_event(sink.context, e);
  }
  EXPECT_TRUE(reporter.wants_ticks());
  reporter.tick(Millis(1050));  // Less than a tick since the last drawing: not redrawn.
  reporter.tick(Millis(1100));
  sink.on_event(sink.context, attempt(2, Millis(2500)));
  EXPECT_FALSE(reporter.wants_ticks());
  const std::string line = "attempt 1: 503 Service Unavailable, retrying in 1.50 s (Retry-After)";
  EXPECT_EQ(out.text(), "\r" + line + ", 1.5 s left\x1b[K" +      //
                            "\r" + line + ", 1.4 s left\x1b[K" +  //
                            "\r" + line + "\x1b[K\n");
}

// Not on a terminal, each line is printed once, whole, whatever was asked to be drawn.
TEST(LineMeter, PlainLinesArePrintedOnceWhole) {
  CapturedFile out;
  LineMeter meter(out.get(), /*live=*/false);
  meter.begin(/*in_place=*/true);
  meter.line().append("poll 1: done");
  meter.end(", 1 poll");
  meter.end();  // No line open: nothing.
  meter.begin();
  meter.line().append("attempt 1: ");
  meter.drop();  // Said already.
  EXPECT_EQ(out.text(), "poll 1: done\n");
}

// On a terminal: a countdown after the line, redrawn every tick, stopped by what is drawn
// next; a line ends in place, with its closing words only while a countdown is on screen.
TEST(LineMeter, ACountdownIsRedrawnInPlaceAndEndsWithItsClosingWords) {
  CapturedFile out;
  LineMeter meter(out.get(), /*live=*/true);
  meter.begin(/*in_place=*/true);
  meter.line().append("poll 1: not done");
  meter.count_down(Millis(0), Millis(2000), ", 1 poll, next poll in ", " s");
  meter.tick(Millis(50));
  meter.tick(Millis(100));
  meter.draw(", polling...");
  EXPECT_FALSE(meter.wants_ticks());
  meter.end(", 1 poll");
  meter.begin(/*in_place=*/true);
  meter.line().append("poll 2: not done");
  meter.end();  // Begun in place: ended in place though nothing was drawn.
  meter.begin(/*in_place=*/true);
  meter.line().append("poll 3: not done");
  meter.count_down(Millis(0), Millis(1000), ", 3 polls, next poll in ", " s");
  EXPECT_TRUE(meter.wants_ticks());
  meter.end(", 3 polls");
  meter.begin();
  meter.line().append("attempt 1: ");
  meter.end();  // Nothing drawn after it: printed.
  EXPECT_EQ(out.text(),
            "\rpoll 1: not done, 1 poll, next poll in 2.0 s\x1b[K"
            "\rpoll 1: not done, 1 poll, next poll in 1.9 s\x1b[K"
            "\rpoll 1: not done, polling...\x1b[K"
            "\rpoll 1: not done\x1b[K\n"
            "\rpoll 2: not done\x1b[K\n"
            "\rpoll 3: not done, 3 polls, next poll in 1.0 s\x1b[K"
            "\rpoll 3: not done, 3 polls\x1b[K\n"
            "attempt 1: \n");
}

TEST(LineBuffer, CutsWhatDoesNotFit) {
  LineBuffer b;
  const std::string big(3000, 'y');
  b.append(big);
  EXPECT_EQ(std::string(b.c_str()).size(), 2047u);
  b.clear();
  b.appendf("%s-%d", "n", 7);
  EXPECT_STREQ(b.c_str(), "n-7");
}

}  // namespace
}  // namespace stepback::tools
