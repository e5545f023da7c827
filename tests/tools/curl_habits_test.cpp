// What `stepback get` makes of curl's habits, below the program: the curl options it names
// with its own spelling (tools/curl_habits.hpp), the heads it sees on a connection for -v and
// -i (tools/head_tap.hpp) and what -f and -i do to the output (tools/response_gate.hpp).
// tests/tools/get_curl_test.py runs the program itself.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "captured_file.hpp"
#include "curl_habits.hpp"
#include "head_tap.hpp"
#include "response_gate.hpp"
#include "tests/support/scripted_connector.hpp"
#include "tests/support/string_sink.hpp"

namespace stepback::tools {
namespace {

TEST(CurlHabits, OptionsStepbackSpellsOtherwiseAreNamed) {
  EXPECT_EQ(curl_option_hint("--retry-max-time"),
            "unknown option '--retry-max-time': stepback spells it --deadline SECONDS");
  EXPECT_NE(curl_option_hint("--pinnedpubkey").find("--pin sha256/BASE64"), std::string::npos);
  EXPECT_NE(curl_option_hint("-u").find("--oauth2-bearer"), std::string::npos);
  EXPECT_NE(curl_option_hint("--user").find("--oauth2-bearer"), std::string::npos);
  // Names are matched whole: a prefix of one is not it.
  EXPECT_EQ(curl_option_hint("--retry-max"), "");
  EXPECT_EQ(curl_option_hint("--bogus"), "");
  EXPECT_EQ(curl_option_hint(""), "");
}

TEST(CurlHabits, InsecureIsNotAnUnknownOptionAndItsWarningSaysWhatToDo) {
  // get takes -k itself (with kInsecureWarning): there is no hint for it.
  EXPECT_EQ(curl_option_hint("-k"), "");
  EXPECT_EQ(curl_option_hint("--insecure"), "");
  const std::string said = kInsecureWarning;
  for (const char* part :
       {"ignored", "always verifies", "--cacert FILE", "--capath DIR", "--pin"}) {
    EXPECT_NE(said.find(part), std::string::npos) << said;
  }
}

TEST(CurlHabits, RemoteFileNameIsThePathsLastSegment) {
  std::string error;
  EXPECT_EQ(remote_file_name("/a/b/file.tar.gz", &error), "file.tar.gz");
  EXPECT_EQ(remote_file_name("/file?sig=x/y", &error), "file");  // The query is not the path.
  EXPECT_EQ(remote_file_name("/a%2Fb", &error), "a%2Fb");        // Not decoded, as curl's.
  EXPECT_EQ(remote_file_name("/-", &error), "-");
  for (const char* target : {"/", "/dir/", "?x=1", "", "/.", "/a/..", "/a\\b", "/a\x01"}) {
    error.clear();
    EXPECT_FALSE(remote_file_name(target, &error).has_value()) << target;
    EXPECT_EQ(error.rfind("-O: ", 0), 0U) << target << ": " << error;
  }
}

TEST(CurlHabits, StripLineEndsDropsEveryCrAndLf) {
  const std::string text = "a=1\r\nb=2\n\rc\n";
  std::vector<std::uint8_t> bytes(text.begin(), text.end());
  strip_line_ends(&bytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "a=1b=2c");
}

// A HeadTap over one scripted connection, driven as a Client drives its stream.
class Tapped {
 public:
  explicit Tapped(std::FILE* verbose) : tap(connector, verbose) {
    connector.add();
    connector.add();
    open();
  }
  void open() {
    https::Url url;
    ASSERT_EQ(tap.open(url, "h", Millis(0), Timeouts{}), https::Status::kOk);
  }
  void send(std::string_view bytes) {
    std::size_t sent = 0;
    ASSERT_EQ(tap.stream().send({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()},
                                &sent),
              https::Status::kOk);
    ASSERT_EQ(sent, bytes.size());
  }
  // Delivers `bytes` as the connection's next received ones, and reads them through the tap.
  void receive(std::size_t connection, std::string_view bytes) {
    connector.connection(connection).recv_data(bytes);
    std::string got;
    std::uint8_t buffer[64];
    while (got.size() < bytes.size()) {
      std::size_t n = 0;
      ASSERT_EQ(tap.stream().recv({buffer, sizeof buffer}, &n), https::Status::kOk);
      got.append(reinterpret_cast<const char*>(buffer), n);
    }
    ASSERT_EQ(got, bytes);
  }

  testing::ScriptedConnector connector;
  HeadTap tap;
};

constexpr std::string_view kRequest =
    "GET /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer s3cret\r\n"
    "Proxy-Authorization: Basic dXNlcjpwdw==\r\nX-Key:bare\r\n\r\n";

TEST(HeadTap, VerboseShowsBothHeadsWithCredentialsMasked) {
  CapturedFile err;
  Tapped t(err.get());
  // Split anywhere, as sends and receives are.
  t.send(kRequest.substr(0, 20));
  t.send(kRequest.substr(20));
  t.receive(0, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nA:  b\r\n");
  t.receive(0, "\r\nbody\r\n\r\nHTTP/1.1 500 not a head\r\n");
  EXPECT_EQ(err.text(),
            "> GET /x HTTP/1.1\n"
            "> Host: h\n"
            "> Authorization: Bearer [masked]\n"
            "> Proxy-Authorization: Basic [masked]\n"
            "> X-Key:bare\n"
            "> \n"
            "< HTTP/1.1 100 Continue\n"
            "< \n"
            "< HTTP/1.1 200 OK\n"
            "< A:  b\n"
            "< \n");
  // The final head as received, the interim one left out.
  EXPECT_EQ(t.tap.response_head(), "HTTP/1.1 200 OK\r\nA:  b\r\n\r\n");
}

TEST(HeadTap, BodiesAreNotHeads) {
  CapturedFile err;
  Tapped t(err.get());
  t.send("POST /p HTTP/1.1\r\nContent-Length: 20\r\n\r\n");
  t.send("GET /y HTTP/1.1\r\n\r\n");  // The body, however it reads.
  t.receive(0, "HTTP/1.1 201 Created\r\n\r\n");
  // A body still going out after the answer is not the next request's head...
  t.send("more body\r\nX: y\r\n\r\n");
  // ...and the next request on the kept connection is.
  t.open();
  t.send("GET /z HTTP/1.1\n\n");
  t.receive(1, "HTTP/1.0 404 Not Found\n\n");
  EXPECT_EQ(err.text(),
            "> POST /p HTTP/1.1\n> Content-Length: 20\n> \n< HTTP/1.1 201 Created\n< \n"
            "> GET /z HTTP/1.1\n> \n< HTTP/1.0 404 Not Found\n< \n");
  EXPECT_EQ(t.tap.response_head(), "HTTP/1.0 404 Not Found\n\n");
}

TEST(HeadTap, ShowsControlBytesAsQuestionMarksAndKeepsNoHalfHead) {
  CapturedFile err;
  Tapped t(err.get());
  t.send(kRequest);
  t.receive(0, "HTTP/1.1 200 OK\r\nX: \x1b[2Jcleared\r\n\r\n");
  EXPECT_NE(err.text().find("< X: ?[2Jcleared\n"), std::string::npos) << err.text();
  t.send(kRequest);  // The next request: its answer is cut inside the head.
  t.receive(0, "HTTP/1.1 200 OK\r\nX: y");
  EXPECT_EQ(t.tap.response_head(), "");
}

TEST(HeadTap, WithoutVerboseKeepsTheHeadOnly) {
  Tapped t(nullptr);
  t.send(kRequest);
  t.receive(0, "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(t.tap.response_head(), "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(t.connector.connection(0).sent(), kRequest);  // Passed on unchanged.
}

// A gate whose events are sent by hand: a response of `status`, then body bytes.
struct Gated {
  explicit Gated(ResponseGate::Rules rules) : t(nullptr), gate(rules, &t.tap, {}) {
    out = gate.sink(body.sink());
  }
  void respond(std::uint16_t status, std::string_view head) {
    https::ClientEvent e;
    e.kind = https::ClientEvent::Kind::kAttempt;
    gate.events().on_event(gate.events().context, e);
    t.send(kRequest);
    t.receive(0, head);
    e.kind = https::ClientEvent::Kind::kResponse;
    e.status = status;
    gate.events().on_event(gate.events().context, e);
  }
  bool write(std::uint64_t offset, std::string_view bytes) {
    return out.write(out.context, offset,
                     {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  }

  Tapped t;
  testing::StringSink body;
  ResponseGate gate;
  https::ResponseSink out;
};

TEST(ResponseGate, IncludeWritesTheHeadOnceBeforeTheBody) {
  Gated g({false, true});
  g.respond(200, "HTTP/1.1 200 OK\r\n\r\n");
  ASSERT_TRUE(g.write(0, "abc"));
  ASSERT_TRUE(g.write(3, "def"));
  EXPECT_TRUE(g.gate.finish());
  EXPECT_EQ(g.body.bytes, "HTTP/1.1 200 OK\r\n\r\nabcdef");
  EXPECT_EQ(g.body.offset_violations, 0U);
  // Started over (a changed object): the head goes first again.
  ASSERT_TRUE(g.out.restart(g.out.context));
  ASSERT_TRUE(g.write(0, "xyz"));
  EXPECT_EQ(g.body.bytes, "HTTP/1.1 200 OK\r\n\r\nxyz");
  EXPECT_EQ(g.body.offset_violations, 0U);
}

TEST(ResponseGate, FinishWritesTheHeadOfAResponseWithoutBody) {
  Gated g({false, true});
  g.respond(204, "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_TRUE(g.gate.finish());
  EXPECT_TRUE(g.gate.finish());  // Once.
  EXPECT_EQ(g.body.bytes, "HTTP/1.1 204 No Content\r\n\r\n");
}

TEST(ResponseGate, FailDropsAnErrorsHeadAndBody) {
  Gated g({true, true});
  g.respond(404, "HTTP/1.1 404 Not Found\r\n\r\n");
  ASSERT_TRUE(g.write(0, "the error page"));
  EXPECT_TRUE(g.gate.finish());
  EXPECT_EQ(g.body.bytes, "");
  EXPECT_EQ(g.gate.status(), 404);
  // An answer that is not an error goes through (a 401 refreshed, then a 200).
  g.respond(200, "HTTP/1.1 200 OK\r\n\r\n");
  ASSERT_TRUE(g.write(0, "ok"));
  EXPECT_EQ(g.body.bytes, "HTTP/1.1 200 OK\r\n\r\nok");
}

TEST(ResponseGate, AnAttemptWithoutAnswerWritesNoOldHead) {
  Gated g({false, true});
  g.respond(503, "HTTP/1.1 503 Busy\r\n\r\n");
  https::ClientEvent e;
  e.kind = https::ClientEvent::Kind::kAttempt;  // Retried; the connect fails.
  g.gate.events().on_event(g.gate.events().context, e);
  EXPECT_TRUE(g.gate.finish());
  EXPECT_EQ(g.body.bytes, "");
  EXPECT_EQ(g.gate.status(), 0);
}

}  // namespace
}  // namespace stepback::tools
