// The Operation and google.rpc.Status JSON reader: what it keeps, what it refuses, and its
// limits.
#include "stepback/transfer/operation_json.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace stepback::transfer {
namespace {

https::ConstBytes bytes(std::string_view s) {
  return https::ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

JsonRead op(std::string_view s, OperationView* out) { return read_operation(bytes(s), out); }

std::string decode(std::string_view raw, std::size_t room = 256) {
  std::string out(room, '\0');
  const std::size_t n = json_decode_string(
      raw, https::MutableBytes{reinterpret_cast<std::uint8_t*>(out.data()), room});
  out.resize(n);
  return out;
}

TEST(OperationJson, ReadsARunningOperation) {
  OperationView v;
  ASSERT_EQ(op(R"({
    "name": "projects/p/locations/us-central1/operations/operation-1700000000000-abc",
    "metadata": {
      "@type": "type.googleapis.com/google.cloud.redis.v1.OperationMetadata",
      "createTime": "2024-01-01T00:00:00Z",
      "target": "projects/p/locations/us-central1/instances/cache",
      "verb": "create",
      "statusDetail": "Creating instance",
      "cancelRequested": false,
      "apiVersion": "v1"
    },
    "done": false
  })",
               &v),
            JsonRead::kOk);
  EXPECT_EQ(v.name, "projects/p/locations/us-central1/operations/operation-1700000000000-abc");
  EXPECT_FALSE(v.done);
  EXPECT_EQ(v.verb, "create");
  EXPECT_EQ(v.status_detail, "Creating instance");
  EXPECT_EQ(v.metadata.front(), '{');
  EXPECT_EQ(v.metadata.back(), '}');
  EXPECT_FALSE(v.has_response);
  EXPECT_FALSE(v.error.present);
}

TEST(OperationJson, AbsentDoneIsNotDone) {
  OperationView v;
  ASSERT_EQ(op(R"({"name": "operations/x"})", &v), JsonRead::kOk);
  EXPECT_FALSE(v.done);
  ASSERT_EQ(op(R"({"name": "operations/x", "done": null})", &v), JsonRead::kOk);
  EXPECT_FALSE(v.done);
}

TEST(OperationJson, ReadsADoneOperationWithItsResponseAsSent) {
  OperationView v;
  const std::string_view text =
      R"({"name":"operations/x","done":true,"response":{"@type":"type.googleapis.com/google.cloud.redis.v1.Instance","name":"projects/p/locations/l/instances/cache","state":"READY","tags":[1,2,{"a":"}"}]}})";
  ASSERT_EQ(op(text, &v), JsonRead::kOk);
  EXPECT_TRUE(v.done);
  ASSERT_TRUE(v.has_response);
  EXPECT_EQ(
      v.response,
      R"({"@type":"type.googleapis.com/google.cloud.redis.v1.Instance","name":"projects/p/locations/l/instances/cache","state":"READY","tags":[1,2,{"a":"}"}]})");
  EXPECT_TRUE(json_valid(bytes(v.response)));
  // Fields of the response are not the Operation's.
  EXPECT_EQ(v.name, "operations/x");
}

TEST(OperationJson, ReadsADoneOperationWithAnError) {
  OperationView v;
  ASSERT_EQ(op(R"({"name":"operations/x","done":true,"error":{"code":9,
      "message":"Instance \"cache\" is in state \u0022UPDATING\u0022",
      "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"BUSY"}]}})",
               &v),
            JsonRead::kOk);
  ASSERT_TRUE(v.error.present);
  EXPECT_TRUE(v.error.has_code);
  EXPECT_EQ(v.error.code, 9);
  EXPECT_EQ(rpc_code_name(v.error.code), std::string_view("FAILED_PRECONDITION"));
  EXPECT_EQ(decode(v.error.message), "Instance \"cache\" is in state \"UPDATING\"");
  EXPECT_EQ(v.error.details,
            R"([{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"BUSY"}])");
  EXPECT_EQ(v.error.raw.front(), '{');
  EXPECT_FALSE(v.has_response);
}

TEST(OperationJson, CodeMayBeAStringOfDigits) {
  OperationView v;
  ASSERT_EQ(op(R"({"done":true,"error":{"code":"14"}})", &v), JsonRead::kOk);
  EXPECT_EQ(v.error.code, 14);
  EXPECT_EQ(rpc_code_name(14), std::string_view("UNAVAILABLE"));
}

TEST(OperationJson, KeysAreComparedDecoded) {
  OperationView v;
  ASSERT_EQ(op(R"({"\u006eame":"operations\/y","d\u006fne":true})", &v), JsonRead::kOk);
  EXPECT_EQ(v.name, R"(operations\/y)");  // Raw; decoding is the caller's step.
  EXPECT_EQ(decode(v.name), "operations/y");
  EXPECT_TRUE(v.done);
}

TEST(OperationJson, WrongTypesAreNotAnOperation) {
  OperationView v;
  EXPECT_EQ(op(R"({"name":"x","done":1})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"name":"x","done":"true"})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"name":{"a":1}})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"name":"x","response":"text"})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"name":"x","response":[1]})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"done":true,"error":{"code":9.5}})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"done":true,"error":{"code":1e1}})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"done":true,"error":{"code":"nine"}})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"done":true,"error":{"code":2147483648}})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"done":true,"error":{"details":{}}})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"done":true,"error":"bad"})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"(["name","x"])", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"("operations/x")", &v), JsonRead::kShape);
}

TEST(OperationJson, MetadataIsFreeForm) {
  OperationView v;
  ASSERT_EQ(op(R"({"name":"x","metadata":{"verb":7,"statusDetail":{"a":[]}}})", &v), JsonRead::kOk);
  EXPECT_EQ(v.verb, "");
  EXPECT_EQ(v.status_detail, "");
}

TEST(OperationJson, AKeptFieldNamedTwiceIsRefused) {
  OperationView v;
  EXPECT_EQ(op(R"({"name":"x","done":false,"done":true})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"name":"x","name":"y"})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"done":true,"error":{"code":1,"code":2}})", &v), JsonRead::kShape);
  // Other keys may repeat: they are not read.
  EXPECT_EQ(op(R"({"name":"x","other":1,"other":2})", &v), JsonRead::kOk);
}

TEST(OperationJson, ResponseAndErrorTogetherAreRefused) {
  OperationView v;
  EXPECT_EQ(op(R"({"done":true,"response":{},"error":{"code":2}})", &v), JsonRead::kShape);
  EXPECT_EQ(op(R"({"done":true,"response":null,"error":{"code":2}})", &v), JsonRead::kOk);
  EXPECT_TRUE(v.error.present);
}

TEST(OperationJson, NestedNamesAreNotTheOperations) {
  OperationView v;
  ASSERT_EQ(op(R"({"metadata":{"name":"inner","done":true,"error":{"code":3}}})", &v),
            JsonRead::kOk);
  EXPECT_EQ(v.name, "");
  EXPECT_FALSE(v.done);
  EXPECT_FALSE(v.error.present);
}

TEST(OperationJson, RefusesInvalidJson) {
  OperationView v;
  for (const std::string_view bad : {"",
                                     " ",
                                     "{",
                                     "{\"name\":}",
                                     "{\"name\":\"x\",}",
                                     "{\"name\" \"x\"}",
                                     "{'name':'x'}",
                                     "{\"name\":\"x\"} {}",
                                     "{\"name\":\"x\x01\"}",
                                     "{\"name\":\"\\x\"}",
                                     "{\"name\":\"\\ud800\"}",
                                     "{\"name\":\"\\udc00\"}",
                                     "{\"done\":tru}",
                                     "{\"a\":01}",
                                     "{\"a\":-}",
                                     "{\"a\":1.}",
                                     "{\"a\":1e}",
                                     "[1,]",
                                     "{\"a\":[}",
                                     "{\"a\":{]}"}) {
    EXPECT_EQ(op(bad, &v), JsonRead::kSyntax) << bad;
    EXPECT_FALSE(json_valid(bytes(bad))) << bad;
  }
}

TEST(OperationJson, AcceptsAByteOrderMarkAndWhitespace) {
  OperationView v;
  ASSERT_EQ(op("\xEF\xBB\xBF \r\n\t{\"name\" : \"x\" , \"done\" : true }\n", &v), JsonRead::kOk);
  EXPECT_TRUE(v.done);
}

TEST(OperationJson, NestingIsBounded) {
  std::string deep = "{\"metadata\":";
  for (std::size_t i = 0; i < kOperationJsonMaxDepth - 1; ++i) deep += "[";
  std::string closing;
  for (std::size_t i = 0; i < kOperationJsonMaxDepth - 1; ++i) closing += "]";
  OperationView v;
  // metadata holding an array is not an Operation, but it is valid JSON at exactly the limit.
  EXPECT_EQ(op(deep + closing + "}", &v), JsonRead::kShape);
  EXPECT_TRUE(json_valid(bytes(deep + closing + "}")));
  EXPECT_EQ(op(deep + "[" + closing + "]}", &v), JsonRead::kSyntax);
}

TEST(OperationJson, ReadsAnHttpErrorBody) {
  RpcStatusView s;
  ASSERT_EQ(read_error_body(bytes(R"({"error":{"code":409,
      "message":"Resource 'projects/p/locations/l/instances/cache' already exists",
      "status":"ALREADY_EXISTS","details":[]}})"),
                            &s),
            JsonRead::kOk);
  EXPECT_TRUE(s.present);
  EXPECT_EQ(s.code, 409);
  EXPECT_EQ(s.status, "ALREADY_EXISTS");
  EXPECT_EQ(decode(s.message), "Resource 'projects/p/locations/l/instances/cache' already exists");
  EXPECT_EQ(s.details, "[]");
}

TEST(OperationJson, ReadsAnErrorBodyWrappedInAnArray) {
  RpcStatusView s;
  ASSERT_EQ(
      read_error_body(
          bytes(R"([{"error":{"code":503,"status":"UNAVAILABLE"}},{"error":{"code":1}}])"), &s),
      JsonRead::kOk);
  EXPECT_EQ(s.code, 503);
  EXPECT_EQ(s.status, "UNAVAILABLE");
}

TEST(OperationJson, AnErrorBodyNeedsAnErrorObject) {
  RpcStatusView s;
  EXPECT_EQ(read_error_body(bytes(R"({"message":"no"})"), &s), JsonRead::kShape);
  EXPECT_EQ(read_error_body(bytes(R"({"error":null})"), &s), JsonRead::kShape);
  EXPECT_EQ(read_error_body(bytes(R"(<html>503</html>)"), &s), JsonRead::kSyntax);
  EXPECT_FALSE(s.present);
}

TEST(OperationJson, DecodesEscapesIntoUtf8) {
  EXPECT_EQ(decode(R"(a\"b\\c\/d\b\f\n\r\t)"), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(decode(R"(\u00e9\u20ac\ud83d\ude00)"), "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(decode("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(OperationJson, DecodingStopsAtTheRoomLeftNeverInsideACharacter) {
  EXPECT_EQ(decode(R"(ab\u20ac)", 4), "ab");
  EXPECT_EQ(decode("ab\xE2\x82\xAC", 4), "ab");
  EXPECT_EQ(decode("abcdef", 3), "abc");
  EXPECT_EQ(decode(R"(\ud83d\ude00)", 3), "");
}

TEST(OperationJson, NamesEveryCode) {
  EXPECT_EQ(std::string_view(rpc_code_name(0)), "OK");
  EXPECT_EQ(std::string_view(rpc_code_name(5)), "NOT_FOUND");
  EXPECT_EQ(std::string_view(rpc_code_name(6)), "ALREADY_EXISTS");
  EXPECT_EQ(std::string_view(rpc_code_name(16)), "UNAUTHENTICATED");
  EXPECT_EQ(std::string_view(rpc_code_name(17)), "");
  EXPECT_EQ(std::string_view(rpc_code_name(-1)), "");
}

}  // namespace
}  // namespace stepback::transfer
