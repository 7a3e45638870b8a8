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

TEST(JsonBody, RepeatedKeysAreRefusedAtAnyDepthNamingThePath) {
  // nlohmann alone keeps the last copy: {"max_charge_usd":0,"max_charge_usd":100} would pass as 100.
  expect_invalid([] { JsonBody::parse(with_body(R"({"max_charge_usd":0,"max_charge_usd":100})")); }, "max_charge_usd");
  expect_invalid([] { JsonBody::parse(with_body(R"({"a":{"b":1,"c":{"d":1,"d":2}}})")); }, "a.c.d");
  expect_invalid([] { JsonBody::parse(with_body(R"({"items":[{"id":1},{"id":2,"id":3}]})")); }, "items[1].id");
  expect_invalid([] { JsonBody::parse(with_body(R"({"m":[[1],[2,{"x":1,"x":1}]]})")); }, "m[1][1].x");
  // The same key in sibling objects, or nested under itself, is not a repeat.
  auto ok = JsonBody::parse(with_body(R"({"a":{"id":1},"b":{"id":2},"id":{"id":3},"l":[{"id":1},{"id":2}]})"));
  EXPECT_EQ(ok.raw()["id"]["id"], 3);
  try {
    JsonBody::parse(with_body(R"({"source":"upload","source":"external_url"})"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("source"), std::string::npos) << e.message();
  }
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

TEST(JsonBody, RangeMessagesShowNumbersAsPeopleWriteThem) {
  auto b = JsonBody::parse(with_body(R"({"d": 0})"));
  try {
    b.number("d", false, {0.001, 1e7});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "d must be between 0.001 and 10000000");
  }
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

TEST(QueryParams, AsBodyIsValidatedAsTheSameValuesInAJsonBody) {
  // The query's text of a number becomes a number only when it is a JSON
  // number literal; anything else is what a string in a body would be.
  const std::vector<std::pair<std::string, std::string>> numbers = {{"0", "0"},     {"1.25", "1.25"}, {"-2", "-2"},
                                                                    {"1e2", "100"}, {"25E-1", "2.5"}, {"3.0", "3.0"}};
  for (const auto& [text, json] : numbers) {
    const auto q = with_query({{"n", text}});
    const JsonBody fromQuery = QueryParams(q).as_body({"n"}, {}, {});
    const JsonBody fromBody = JsonBody::parse(with_body("{\"n\":" + json + "}"));
    EXPECT_EQ(fromQuery.number("n"), fromBody.number("n")) << text;
  }
  for (const char* bad : {"0x10", "0x1", " 5", "5 ", "+5", ".5", "5.", "05", "1e", "1e+", "inf", "nan", "Infinity", "",
                          "1,5", "1e999", "- 1", "\xEF\xBC\x95"}) {
    const auto q = with_query({{"n", bad}});
    const JsonBody fromQuery = QueryParams(q).as_body({"n"}, {}, {});
    const JsonBody fromBody(Json{{"n", bad}});
    expect_invalid([&] { fromQuery.number("n"); }, "n");
    expect_invalid([&] { fromBody.number("n"); }, "n");
    expect_invalid([&] { fromQuery.integer("n"); }, "n");
  }
  // Integers as JSON counts them: 3.0 is one, 2.5 is not.
  const auto ints = with_query({{"a", "3.0"}, {"b", "2.5"}, {"c", " 3"}});
  const JsonBody i = QueryParams(ints).as_body({"a", "b", "c"}, {}, {});
  EXPECT_EQ(i.integer("a"), 3);
  expect_invalid([&] { i.integer("b"); }, "b");
  expect_invalid([&] { i.integer("c"); }, "c");
  // Booleans: true/1 and false/0; anything else is refused as a string is.
  const auto b = with_query({{"t", "true"}, {"o", "1"}, {"f", "false"}, {"z", "0"}, {"y", "yes"}});
  const JsonBody flags = QueryParams(b).as_body({}, {"t", "o", "f", "z", "y"}, {});
  EXPECT_EQ(flags.boolean("t"), true);
  EXPECT_EQ(flags.boolean("o"), true);
  EXPECT_EQ(flags.boolean("f"), false);
  EXPECT_EQ(flags.boolean("z"), false);
  expect_invalid([&] { flags.boolean("y"); }, "y");
  // Strings as given; only the named parameters, absent ones stay absent.
  const auto s = with_query({{"title", " Tides "}, {"other", "x"}});
  const JsonBody text = QueryParams(s).as_body({"n"}, {}, {"title"});
  EXPECT_EQ(text.string("title"), " Tides ");
  EXPECT_FALSE(text.has("other"));
  EXPECT_FALSE(text.has("n"));
  // Repeats and control characters are refused while reading, naming the parameter.
  expect_invalid([&] { QueryParams(with_query({{"n", "1"}, {"n", "2"}})).as_body({"n"}, {}, {}); }, "n");
  expect_invalid([&] { QueryParams(with_query({{"title", "a\x07"}})).as_body({}, {}, {"title"}); }, "title");
}

TEST(QueryParams, TrimmedTextCountsCharactersAfterTrimming) {
  auto q = with_query({{"q", "  ab  "}, {"one", " a "}, {"accents", "\xc3\xa9\xc3\xa9"}, {"blank", "   "}});
  QueryParams p(q);
  EXPECT_EQ(p.trimmed_text("q", true, 2, 200), "ab");
  EXPECT_EQ(p.trimmed_text("accents", true, 2, 2), "\xc3\xa9\xc3\xa9");  // two characters, four bytes
  EXPECT_FALSE(p.trimmed_text("absent", false, 2, 200));
  expect_invalid([&] { p.trimmed_text("absent", true, 2, 200); }, "absent");
  expect_invalid([&] { p.trimmed_text("one", true, 2, 200); }, "one");
  expect_invalid([&] { p.trimmed_text("blank", true, 2, 200); }, "blank");
  auto long_q = with_query({{"q", std::string(201, 'x')}});
  expect_invalid([&] { QueryParams(long_q).trimmed_text("q", true, 2, 200); }, "q");
  auto padded = with_query({{"q", "   " + std::string(200, 'x') + "   "}});
  EXPECT_EQ(QueryParams(padded).trimmed_text("q", true, 2, 200)->size(), 200u);
}

TEST(QueryParams, IdListTakesPositiveIntegersUpToTheMaximum) {
  auto q = with_query({{"ids", "3, 1,3"},
                       {"zero", "1,0"},
                       {"neg", "-1"},
                       {"empty", ""},
                       {"gap", "1,,2"},
                       {"word", "1,a"},
                       {"long", "1234567890123456789"}});
  QueryParams p(q);
  EXPECT_EQ(*p.id_list("ids", 50), (std::vector<int64_t>{3, 1, 3}));
  EXPECT_FALSE(p.id_list("absent", 50));
  for (const char* name : {"zero", "neg", "empty", "gap", "word", "long"})
    expect_invalid([&] { p.id_list(name, 50); }, name);
  std::string fifty, fifty_one;
  for (int i = 1; i <= 50; ++i) fifty += (i > 1 ? "," : "") + std::to_string(i);
  fifty_one = fifty + ",51";
  EXPECT_EQ(QueryParams(with_query({{"ids", fifty}})).id_list("ids", 50)->size(), 50u);
  auto over = with_query({{"ids", fifty_one}});
  expect_invalid([&] { QueryParams(over).id_list("ids", 50); }, "ids");
}

}  // namespace
}  // namespace scribe::api
