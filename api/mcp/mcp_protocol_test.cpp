#include "api/mcp/mcp_protocol.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace scribe::api::mcp {
namespace {

using Headers = std::map<std::string, std::string>;

Json modern(const std::string& method, Json params = Json::object(), Json id = 1) {
  params["_meta"][kMetaVersion] = "2026-07-28";
  params["_meta"][kMetaCapabilities] = Json::object();
  Json m = {{"jsonrpc", "2.0"}, {"method", method}, {"params", params}};
  if (!id.is_null()) m["id"] = id;
  return m;
}

Headers modern_headers(const std::string& method, const std::string& name = "") {
  Headers h = {{"mcp-protocol-version", "2026-07-28"}, {"mcp-method", method}};
  if (!name.empty()) h["mcp-name"] = name;
  return h;
}

Failure failure(const std::variant<Message, Failure>& v) {
  if (auto* f = std::get_if<Failure>(&v)) return *f;
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(McpClassify, ModernRequestWithAgreeingHeaders) {
  auto v = classify(modern_headers("tools/call", "search"),
                    modern("tools/call", {{"name", "search"}, {"arguments", Json::object()}}).dump());
  ASSERT_TRUE(std::holds_alternative<Message>(v));
  const auto& m = std::get<Message>(v);
  EXPECT_EQ(m.era, Era::Modern);
  EXPECT_EQ(m.method, "tools/call");
  EXPECT_EQ(m.id, 1);
  EXPECT_FALSE(m.notification);
}

TEST(McpClassify, HeaderMismatchesAre400WithTheRequestId) {
  auto body = modern("tools/list", Json::object(), "abc").dump();
  auto f = failure(classify({{"mcp-method", "tools/list"}}, body));
  EXPECT_EQ(f.http_status, 400);
  EXPECT_EQ(f.code, kHeaderMismatch);
  EXPECT_EQ(f.id, "abc");
  f = failure(classify({{"mcp-protocol-version", "2026-07-28"}, {"mcp-method", "tools/call"}}, body));
  EXPECT_EQ(f.code, kHeaderMismatch);
  f = failure(classify({{"mcp-protocol-version", "2026-07-28"}}, body));
  EXPECT_EQ(f.code, kHeaderMismatch);
  // Mcp-Name must name the tool of the body.
  auto call = modern("tools/call", {{"name", "search"}}).dump();
  EXPECT_EQ(failure(classify(modern_headers("tools/call"), call)).code, kHeaderMismatch);
  EXPECT_EQ(failure(classify(modern_headers("tools/call", "fetch"), call)).code, kHeaderMismatch);
  // The header's version must be the body's.
  EXPECT_EQ(failure(classify({{"mcp-protocol-version", "2025-11-25"}, {"mcp-method", "tools/list"}}, body)).code,
            kHeaderMismatch);
}

TEST(McpClassify, Base64HeaderValuesAreDecoded) {
  auto call = modern("tools/call", {{"name", "café"}}).dump();
  auto v = classify(modern_headers("tools/call", "=?base64?Y2Fmw6k=?="), call);
  EXPECT_TRUE(std::holds_alternative<Message>(v));
}

TEST(McpClassify, UnsupportedVersionListsWhatIsSupported) {
  Json body = modern("tools/list");
  body["params"]["_meta"][kMetaVersion] = "1900-01-01";
  auto f = failure(classify({{"mcp-protocol-version", "1900-01-01"}, {"mcp-method", "tools/list"}}, body.dump()));
  EXPECT_EQ(f.http_status, 400);
  EXPECT_EQ(f.code, kUnsupportedVersion);
  EXPECT_EQ(f.data.at("requested"), "1900-01-01");
  EXPECT_EQ(f.data.at("supported"), Json::array({"2026-07-28"}));
}

TEST(McpClassify, MissingMetaIs32602) {
  Json body = modern("tools/list");
  body["params"]["_meta"].erase(kMetaCapabilities);
  auto f = failure(classify(modern_headers("tools/list"), body.dump()));
  EXPECT_EQ(f.code, kInvalidParams);
  EXPECT_EQ(f.id, 1);
  // No version in the body but a 2026-07-28 header: the fields are missing.
  Json plain = {{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/list"}};
  f = failure(classify(modern_headers("tools/list"), plain.dump()));
  EXPECT_EQ(f.code, kInvalidParams);
  EXPECT_EQ(f.id, 7);
}

TEST(McpClassify, MethodsRemovedIn2026Are404ThereButLegacyHasThem) {
  for (const char* method : {"initialize", "ping", "logging/setLevel", "resources/subscribe", "no/such"}) {
    auto f = failure(classify(modern_headers(method), modern(method).dump()));
    EXPECT_EQ(f.http_status, 404) << method;
    EXPECT_EQ(f.code, kMethodNotFound) << method;
  }
  for (const char* method : {"initialize", "ping", "logging/setLevel", "resources/subscribe"}) {
    EXPECT_TRUE(has_method(Era::Legacy, method)) << method;
    EXPECT_FALSE(has_method(Era::Modern, method)) << method;
  }
  EXPECT_TRUE(has_method(Era::Modern, "server/discover"));
  EXPECT_FALSE(has_method(Era::Legacy, "server/discover"));
}

// What each revision declares is what it serves: every request of a
// declared capability is a method of that revision, and a method of a
// capability not declared (completions) is not.
TEST(McpClassify, DeclaredCapabilitiesAreExactlyTheServedOnes) {
  const std::map<std::string, std::vector<std::string>> methods = {
      {"tools", {"tools/list", "tools/call"}},
      {"resources", {"resources/list", "resources/templates/list", "resources/read"}},
      {"prompts", {"prompts/list", "prompts/get"}},
      {"logging", {"logging/setLevel"}},
      {"completions", {"completion/complete"}}};
  for (Era era : {Era::Modern, Era::Legacy}) {
    const Json caps = server_capabilities(era);
    for (const auto& [capability, list] : methods)
      for (const auto& method : list)
        EXPECT_EQ(has_method(era, method), caps.contains(capability))
            << (era == Era::Modern ? "2026-07-28 " : "2025-11-25 ") << capability << " " << method;
  }
  EXPECT_EQ(server_capabilities(Era::Modern),
            (Json{{"tools", Json::object()}, {"resources", Json::object()}, {"prompts", Json::object()}}));
  const Json legacy = server_capabilities(Era::Legacy);
  EXPECT_EQ(legacy["resources"], (Json{{"subscribe", true}, {"listChanged", false}}));
  EXPECT_EQ(legacy["prompts"], (Json{{"listChanged", false}}));
  EXPECT_TRUE(legacy.contains("logging"));
  EXPECT_FALSE(legacy.contains("completions"));
  // resources.subscribe is declared in 2025-11-25 only, with its methods.
  EXPECT_TRUE(has_method(Era::Legacy, "resources/subscribe"));
  EXPECT_FALSE(has_method(Era::Modern, "resources/subscribe"));
}

TEST(McpClassify, LegacyMessagesAndTheirVersionHeader) {
  Json init = {{"jsonrpc", "2.0"},
               {"id", 0},
               {"method", "initialize"},
               {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", Json::object()}}}};
  auto v = classify({}, init.dump());
  ASSERT_TRUE(std::holds_alternative<Message>(v));
  EXPECT_EQ(std::get<Message>(v).era, Era::Legacy);
  Json list = {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}};
  EXPECT_EQ(std::get<Message>(classify({{"mcp-protocol-version", "2025-11-25"}}, list.dump())).version, "2025-11-25");
  EXPECT_EQ(failure(classify({{"mcp-protocol-version", "2099-01-01"}}, list.dump())).http_status, 400);
  Json note = {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}};
  auto n = std::get<Message>(classify({}, note.dump()));
  EXPECT_TRUE(n.notification);
  EXPECT_TRUE(n.id.is_null());
}

TEST(McpClassify, MalformedBodies) {
  EXPECT_EQ(failure(classify({}, "{nope")).code, kParseError);
  EXPECT_EQ(failure(classify({}, "[]")).code, kInvalidRequest);
  EXPECT_EQ(failure(classify({}, R"({"jsonrpc":"1.0","id":1,"method":"ping"})")).code, kInvalidRequest);
  EXPECT_EQ(failure(classify({}, R"({"jsonrpc":"2.0","id":{},"method":"ping"})")).code, kInvalidRequest);
  EXPECT_EQ(failure(classify({}, R"({"jsonrpc":"2.0","id":3,"method":"ping","params":[]})")).code, kInvalidParams);
  EXPECT_EQ(failure(classify({}, R"({"jsonrpc":"2.0","id":3,"method":"ping","params":[]})")).id, 3);
  auto r = std::get<Message>(classify({}, R"({"jsonrpc":"2.0","id":3,"result":{}})"));
  EXPECT_TRUE(r.response);
}

TEST(McpBodies, ErrorsCarryTheIdAndData) {
  Json e = error_body(Failure{400, "x", kUnsupportedVersion, "Unsupported protocol version", {{"requested", "1"}}});
  EXPECT_EQ(e.at("id"), "x");
  EXPECT_EQ(e.at("error").at("code"), kUnsupportedVersion);
  EXPECT_EQ(e.at("error").at("data").at("requested"), "1");
  EXPECT_FALSE(error_body(Failure{400, 1, kInvalidRequest, "m", nullptr}).at("error").contains("data"));
  EXPECT_EQ(result_body(5, {{"a", 1}}).at("result").at("a"), 1);
}

}  // namespace
}  // namespace scribe::api::mcp
