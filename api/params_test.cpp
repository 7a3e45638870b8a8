#include "api/params.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace scribe::api {
namespace {

Request with_body(std::string body) {
  Request r;
  r.body = std::move(body);
  return r;
}

Request with_query(std::vector<std::pair<std::string, std::string>> q) {
  Request r;
  r.query = std::move(q);
  return r;
}

// Runs f, expects a 400 invalid_request naming `field`.
template <typename F>
void expect_invalid(F f, const std::string& field) {
  try {
    f();
    FAIL() << "no error for " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "invalid_request");
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_EQ(e.extras().value("field", ""), field);
  }
}

TEST(JsonBody, MalformedAndNonObjectBodiesNameTheBody) {
  expect_invalid([] { JsonBody::parse(with_body("{\"a\":")); }, "body");
  expect_invalid([] { JsonBody::parse(with_body("[1,2]")); }, "body");
  expect_invalid([] { JsonBody::parse(with_body("")); }, "body");
  EXPECT_TRUE(JsonBody::parse(with_body("  "), true).raw().is_object());
}

TEST(JsonBody, WrongTypesNameTheField) {
  auto b = JsonBody::parse(with_body(R"({"s": 5, "n": "x", "i": 1.5, "b": "yes", "a": [1]})"));
  expect_invalid([&] { b.string("s"); }, "s");
  expect_invalid([&] { b.number("n"); }, "n");
  expect_invalid([&] { b.integer("i"); }, "i");
  expect_invalid([&] { b.boolean("b"); }, "b");
  expect_invalid([&] { b.string_array("a"); }, "a");
  expect_invalid([&] { b.string("missing", true); }, "missing");
}

TEST(JsonBody, RangesAndLengths) {
  auto b = JsonBody::parse(with_body(R"({"n": -1, "i": 3.0, "s": "abc", "a": ["x","y","z"], "e": "b"})"));
  expect_invalid([&] { b.number("n", false, {0.0, std::nullopt}); }, "n");
  EXPECT_EQ(b.integer("i", false, {1, 5}), 3);
  expect_invalid([&] { b.integer("i", false, {4, 5}); }, "i");
  expect_invalid([&] { b.string("s", false, 1, 2); }, "s");
  expect_invalid([&] { b.string_array("a", false, 2); }, "a");
  EXPECT_EQ(b.one_of("e", {"a", "b"}), "b");
  expect_invalid([&] { b.one_of("e", {"a", "c"}); }, "e");
  EXPECT_FALSE(b.string("absent").has_value());
}

TEST(QueryParams, IntegersBooleansAndEnums) {
  auto q = with_query({{"limit", "20"}, {"bad", "2x"}, {"flag", "true"}, {"neg", "-3"}, {"fmt", "srt"}});
  QueryParams p(q);
  EXPECT_EQ(p.integer("limit", 50, 1, 200), 20);
  EXPECT_EQ(p.integer("absent", 50, 1, 200), 50);
  expect_invalid([&] { p.integer("bad", 1, 0, 10); }, "bad");
  expect_invalid([&] { p.integer("neg", 1, 0, 10); }, "neg");
  EXPECT_EQ(p.clamped_integer("limit", 30, 1, 10), 10);
  EXPECT_TRUE(p.boolean("flag", false));
  expect_invalid([&] { p.boolean("fmt", false); }, "fmt");
  EXPECT_EQ(p.one_of("fmt", {"srt", "vtt"}, "srt"), "srt");
  expect_invalid([&] { p.one_of("fmt", {"vtt"}, "vtt"); }, "fmt");
}

TEST(QueryParams, RepeatedParameterIsRefused) {
  auto q = with_query({{"limit", "1"}, {"limit", "2"}});
  expect_invalid([&] { QueryParams(q).integer("limit", 5, 1, 10); }, "limit");
}

}  // namespace
}  // namespace scribe::api
