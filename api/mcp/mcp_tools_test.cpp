#include "api/mcp/mcp_tools.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace scribe::api::mcp {
namespace {

// A stand-in for the handler's `execute`: records every call and answers
// from a queue (200 {} once the queue is empty), at once, as a synchronous
// route does. The tools are pure mapping, so this is all they need.
struct FakeRest {
  std::vector<RestCall> calls;
  std::vector<RestReply> replies;

  Execute execute() {
    return [this](const RestCall& call, const Then& then) {
      calls.push_back(call);
      if (replies.empty()) return then(json_reply(200, Json::object()));
      RestReply r = replies.front();
      replies.erase(replies.begin());
      then(r);
    };
  }

  static RestReply json_reply(int status, const Json& body) {
    return RestReply{
        .status = status, .content_type = "application/json; charset=utf-8", .body = body.dump(), .json = body};
  }
  static RestReply text_reply(int status, const std::string& content_type, const std::string& body) {
    return RestReply{.status = status, .content_type = content_type, .body = body, .json = nullptr};
  }
};

// Runs a tool whose replies come at once; its result, which must have come
// exactly once by the time run returns.
Json run(const std::string& name, const Json& args, FakeRest& rest) {
  const Tool* tool = find_tool(name);
  EXPECT_NE(tool, nullptr) << name;
  if (!tool) return nullptr;
  int results = 0;
  Json result;
  tool->run(args, ToolCall{rest.execute(), nullptr, [&](Json r) {
                             ++results;
                             result = std::move(r);
                           }});
  EXPECT_EQ(results, 1) << name;
  return result;
}

std::string error_code(const Json& result) {
  return result.at("structuredContent").at("error").at("code").get<std::string>();
}

using Query = std::vector<std::pair<std::string, std::string>>;

// The spec's tool names, in its order.
const std::vector<std::string> kSpecNames = {"getAccount",
                                             "listPipelines",
                                             "listTranscriptions",
                                             "getTranscription",
                                             "getTranscriptionResult",
                                             "waitForTranscription",
                                             "getTranscriptionTimestamps",
                                             "getTranscriptionWords",
                                             "getSubtitles",
                                             "getClip",
                                             "getQuote",
                                             "search",
                                             "fetch",
                                             "askTranscription",
                                             "askLibrary",
                                             "transcribe",
                                             "createUpload",
                                             "renderClip",
                                             "regeneratePostingChapters",
                                             "retryTranscription",
                                             "deleteTranscription"};

TEST(McpTools, TheCatalogIsTheSpecsToolsWithUniqueNames) {
  std::vector<std::string> names;
  std::set<std::string> unique;
  for (const auto& t : tools()) {
    names.push_back(t.name);
    unique.insert(t.name);
    EXPECT_FALSE(t.title.empty()) << t.name;
    EXPECT_FALSE(t.description.empty()) << t.name;
    EXPECT_TRUE(t.run) << t.name;
    EXPECT_EQ(find_tool(t.name), &t);
  }
  EXPECT_EQ(names, kSpecNames);
  EXPECT_EQ(unique.size(), names.size());
  EXPECT_EQ(find_tool("nope"), nullptr);
}

// Walks a schema and checks every property below it is typed and described.
void expect_typed_and_described(const Json& schema, const std::string& where) {
  if (!schema.contains("properties")) return;
  for (const auto& [name, prop] : schema.at("properties").items()) {
    EXPECT_TRUE(prop.contains("type")) << where << "." << name;
    EXPECT_TRUE(prop.contains("description") && !prop["description"].get<std::string>().empty())
        << where << "." << name;
    expect_typed_and_described(prop, where + "." + name);
    if (prop.contains("items")) expect_typed_and_described(prop["items"], where + "." + name + "[]");
  }
}

TEST(McpTools, SchemasAreClosedObjectsWithEveryRequiredArgumentDeclared) {
  for (const auto& t : tools()) {
    const Json& in = t.input_schema;
    EXPECT_EQ(in.at("type"), "object") << t.name;
    EXPECT_EQ(in.at("additionalProperties"), false) << t.name;
    ASSERT_TRUE(in.at("properties").is_object()) << t.name;
    for (const auto& r : in.value("required", Json::array()))
      EXPECT_TRUE(in["properties"].contains(r.get<std::string>())) << t.name << " requires " << r;
    expect_typed_and_described(in, t.name);

    const Json& out = t.output_schema;
    EXPECT_EQ(out.at("type"), "object") << t.name;
    EXPECT_TRUE(out.at("properties").is_object()) << t.name;
    // Open, and nothing required at the top: an error's structuredContent
    // ({error: {...}}) must still validate against it.
    EXPECT_FALSE(out.contains("required")) << t.name;
    EXPECT_NE(out.value("additionalProperties", true), false) << t.name;
    expect_typed_and_described(out, t.name + " output");
  }
}

TEST(McpTools, SchemasCarryTheRestLimits) {
  const Json& wait = find_tool("waitForTranscription")->input_schema["properties"]["timeout_seconds"];
  EXPECT_EQ(wait["minimum"], 1);
  EXPECT_EQ(wait["maximum"], 45);
  EXPECT_EQ(wait["default"], 30);
  const Json& list = find_tool("listTranscriptions")->input_schema["properties"]["limit"];
  EXPECT_EQ(list["maximum"], 200);
  const Json& q = find_tool("search")->input_schema["properties"]["query"];
  EXPECT_EQ(q["minLength"], 2);
  EXPECT_EQ(q["maxLength"], 200);
  const Json& key = find_tool("transcribe")->input_schema["properties"]["idempotency_key"];
  EXPECT_EQ(key["maxLength"], 128);
  const Json& id = find_tool("getTranscription")->input_schema["properties"]["id"];
  EXPECT_EQ(id["type"], "integer");
  EXPECT_EQ(id["minimum"], 1);
  EXPECT_EQ(find_tool("getSubtitles")->input_schema["properties"]["format"]["enum"],
            Json::array({"srt", "vtt", "vtt-karaoke", "json"}));
  EXPECT_EQ(find_tool("askTranscription")->input_schema["required"], Json::array({"id", "question"}));
}

TEST(McpTools, AnnotationsFollowWhatTheRestCallDoes) {
  const std::set<std::string> read_only = {"getAccount",
                                           "listPipelines",
                                           "listTranscriptions",
                                           "getTranscription",
                                           "getTranscriptionResult",
                                           "waitForTranscription",
                                           "getTranscriptionTimestamps",
                                           "getTranscriptionWords",
                                           "getSubtitles",
                                           "getClip",
                                           "search",
                                           "fetch"};
  for (const auto& t : tools()) {
    EXPECT_EQ(t.read_only, read_only.count(t.name) == 1) << t.name;
    EXPECT_EQ(t.destructive, t.name == "deleteTranscription") << t.name;
    EXPECT_EQ(t.open_world, t.name == "transcribe" || t.name == "getQuote") << t.name;
    EXPECT_EQ(t.reports_progress, t.name == "waitForTranscription") << t.name;
    EXPECT_TRUE(!t.read_only || t.idempotent) << t.name;
  }
  EXPECT_TRUE(find_tool("deleteTranscription")->idempotent);
  EXPECT_FALSE(find_tool("transcribe")->idempotent);
  EXPECT_FALSE(find_tool("askLibrary")->idempotent);
}

TEST(McpTools, DescribeIsTheToolsListEntry) {
  const Json d = describe(*find_tool("deleteTranscription"));
  EXPECT_EQ(d["name"], "deleteTranscription");
  EXPECT_EQ(d["title"], "Delete a transcription");
  EXPECT_EQ(d["inputSchema"], find_tool("deleteTranscription")->input_schema);
  EXPECT_EQ(d["outputSchema"], find_tool("deleteTranscription")->output_schema);
  EXPECT_EQ(d["annotations"], (Json{{"title", "Delete a transcription"},
                                    {"readOnlyHint", false},
                                    {"destructiveHint", true},
                                    {"idempotentHint", true},
                                    {"openWorldHint", false}}));
  EXPECT_TRUE(describe(*find_tool("getAccount"))["annotations"]["readOnlyHint"]);
  EXPECT_TRUE(describe(*find_tool("transcribe"))["annotations"]["openWorldHint"]);
}

TEST(McpTools, MoneyToolsSayWhatTheyCost) {
  for (const char* name : {"transcribe", "retryTranscription"}) {
    const std::string& d = find_tool(name)->description;
    EXPECT_NE(d.find("0.0167 USD per minute"), std::string::npos) << name;
    EXPECT_NE(d.find("max_charge_usd"), std::string::npos) << name;
    EXPECT_NE(d.find("waitForTranscription"), std::string::npos) << name;
  }
  EXPECT_NE(find_tool("transcribe")->description.find("0 on subscription plans"), std::string::npos);
  EXPECT_NE(find_tool("waitForTranscription")->description.find("45 s"), std::string::npos);
  EXPECT_NE(find_tool("waitForTranscription")->description.find("_timed_out"), std::string::npos);
}

// One row per tool that maps to a single REST call.
struct Case {
  std::string tool;
  Json args;
  std::string method;
  std::string path;
  Query query;
  std::optional<Json> body;
  std::optional<std::string> idempotency_key;
};

TEST(McpTools, EachToolMakesItsRestCall) {
  const std::vector<Case> cases = {
      {"getAccount", Json::object(), "GET", "/api/v1/me", {}, std::nullopt, std::nullopt},
      {"listPipelines", nullptr, "GET", "/api/v1/pipelines", {}, std::nullopt, std::nullopt},
      {"listTranscriptions",
       {{"limit", 10}, {"cursor", "abc"}, {"api_only", true}, {"client_reference", "ep-42"}},
       "GET",
       "/api/v1/transcriptions",
       {{"limit", "10"}, {"cursor", "abc"}, {"api_only", "true"}, {"client_reference", "ep-42"}},
       std::nullopt,
       std::nullopt},
      {"getTranscription", {{"id", 42}}, "GET", "/api/v1/transcriptions/42", {}, std::nullopt, std::nullopt},
      {"getTranscriptionResult",
       {{"id", 42},
        {"include", {"chapters", "segments"}},
        {"segments_offset", 0},
        {"segments_limit", 100.0},
        {"qna_source", "system"}},
       "GET",
       "/api/v1/transcriptions/42/result",
       {{"include", "chapters,segments"},
        {"segments_offset", "0"},
        {"segments_limit", "100"},
        {"qna_source", "system"}},
       std::nullopt,
       std::nullopt},
      // The first slice of the wait: the reply ({}, no _timed_out) ends it.
      {"waitForTranscription",
       {{"id", 7}, {"timeout_seconds", 45}, {"include", {"all"}}},
       "GET",
       "/api/v1/transcriptions/7/wait",
       {{"timeout", "10"}, {"include", "all"}},
       std::nullopt,
       std::nullopt},
      {"getTranscriptionTimestamps",
       {{"id", 42}, {"format", "thread_post"}, {"variant", "highlights"}, {"cta", false}},
       "GET",
       "/api/v1/transcriptions/42/timestamps",
       {{"format", "thread_post"}, {"variant", "highlights"}, {"cta", "false"}},
       std::nullopt,
       std::nullopt},
      {"getTranscriptionWords",
       {{"id", 42}, {"offset", 2000}, {"limit", 5000}},
       "GET",
       "/api/v1/transcriptions/42/words",
       {{"offset", "2000"}, {"limit", "5000"}},
       std::nullopt,
       std::nullopt},
      {"getSubtitles",
       {{"id", 42}, {"format", "vtt"}, {"preset", "netflix"}, {"speaker_labels", true}, {"mode", "sentence"}},
       "GET",
       "/api/v1/transcriptions/42/subtitles",
       {{"format", "vtt"}, {"preset", "netflix"}, {"speaker_labels", "true"}, {"mode", "sentence"}},
       std::nullopt,
       std::nullopt},
      {"getQuote",
       {{"source", "external_url"}, {"url", "https://media.example.com/a.mp3"}, {"duration_seconds", 1800}},
       "POST",
       "/api/v1/quotes",
       {},
       Json{{"source", "external_url"}, {"url", "https://media.example.com/a.mp3"}, {"duration_seconds", 1800}},
       std::nullopt},
      {"askTranscription",
       {{"id", 42}, {"question", "Why?"}, {"top_k", 20}},
       "POST",
       "/api/v1/transcriptions/42/ask",
       {},
       Json{{"question", "Why?"}, {"top_k", 20}},
       std::nullopt},
      {"askLibrary",
       {{"question", "What did we decide?"}, {"transcription_ids", {42, 57}}},
       "POST",
       "/api/v1/ask",
       {},
       Json{{"question", "What did we decide?"}, {"transcription_ids", {42, 57}}},
       std::nullopt},
      {"transcribe",
       {{"source", "upload"},
        {"upload_id", "upl_1"},
        {"original_filename", "talk.mp3"},
        {"duration_seconds", 61.5},
        {"language", "en"},
        {"pipeline_code", "standard"},
        {"addons", Json::array()},
        {"max_charge_usd", 1.5},
        {"callback_url", "https://hooks.example.com/x"},
        {"client_reference", "talk"},
        {"idempotency_key", "k-1"}},
       "POST",
       "/api/v1/transcriptions",
       {},
       Json{{"source", "upload"},
            {"upload_id", "upl_1"},
            {"original_filename", "talk.mp3"},
            {"duration_seconds", 61.5},
            {"language", "en"},
            {"pipeline_code", "standard"},
            {"addons", Json::array()},
            {"max_charge_usd", 1.5},
            {"callback_url", "https://hooks.example.com/x"},
            {"client_reference", "talk"}},
       "k-1"},
      {"createUpload",
       {{"filename", "a.mp3"}, {"content_type", "audio/mpeg"}, {"file_size", 1024}},
       "POST",
       "/api/v1/uploads",
       {},
       Json{{"filename", "a.mp3"}, {"content_type", "audio/mpeg"}, {"file_size", 1024}},
       std::nullopt},
      {"regeneratePostingChapters",
       {{"id", 42}, {"refine_prompt", "budget"}},
       "POST",
       "/api/v1/transcriptions/42/timestamps/regenerate",
       {},
       Json{{"refine_prompt", "budget"}},
       std::nullopt},
      {"retryTranscription",
       {{"id", 42}, {"max_charge_usd", 0.5}, {"idempotency_key", "r-1"}},
       "POST",
       "/api/v1/transcriptions/42/retry",
       {},
       Json{{"max_charge_usd", 0.5}},
       "r-1"},
      {"retryTranscription", {{"id", 43}}, "POST", "/api/v1/transcriptions/43/retry", {}, Json::object(), std::nullopt},
      {"deleteTranscription", {{"id", 42}}, "DELETE", "/api/v1/transcriptions/42", {}, std::nullopt, std::nullopt},
      {"getClip",
       {{"id", 42}, {"clip_id", 7}, {"wait", 30}},
       "GET",
       "/api/v1/transcriptions/42/clips/7",
       {{"wait", "30"}},
       std::nullopt,
       std::nullopt},
      {"renderClip",
       {{"id", 42},
        {"start_seconds", 10},
        {"end_seconds", 40.5},
        {"aspect", "1:1"},
        {"style", "karaoke"},
        {"highlight_color", "#FF0000"},
        {"client_nonce", "0f8fad5b-d9cb-469f-a165-70867728950e"},
        {"max_charge_usd", 0.05},
        {"idempotency_key", "c-1"}},
       "POST",
       "/api/v1/transcriptions/42/clips",
       {},
       Json{{"start_seconds", 10},
            {"end_seconds", 40.5},
            {"aspect", "1:1"},
            {"style", "karaoke"},
            {"highlight_color", "#FF0000"},
            {"client_nonce", "0f8fad5b-d9cb-469f-a165-70867728950e"},
            {"max_charge_usd", 0.05}},
       "c-1"},
  };
  std::set<std::string> covered;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.tool);
    covered.insert(c.tool);
    FakeRest rest;
    const Json result = run(c.tool, c.args, rest);
    EXPECT_EQ(result["isError"], false) << result.dump();
    ASSERT_EQ(rest.calls.size(), 1u);
    const RestCall& call = rest.calls[0];
    EXPECT_EQ(call.method, c.method);
    EXPECT_EQ(call.path, c.path);
    EXPECT_EQ(call.query, c.query);
    EXPECT_EQ(call.body, c.body);
    EXPECT_EQ(call.idempotency_key, c.idempotency_key);
  }
  // search and fetch have tests of their own.
  for (const auto& name : kSpecNames) EXPECT_TRUE(name == "search" || name == "fetch" || covered.count(name)) << name;
}

TEST(McpTools, AMissingOrIllTypedIdIsRefusedWithoutACall) {
  for (const auto& t : tools()) {
    if (!t.input_schema["properties"].contains("id")) continue;
    for (const Json& args : {Json::object(), Json{{"id", nullptr}}, Json{{"id", "forty-two"}}, Json{{"id", 0}},
                             Json{{"id", -3}}, Json{{"id", 1.5}}, Json{{"id", Json::array({1})}}}) {
      FakeRest rest;
      Json a = args;
      if (t.name == "askTranscription") a["question"] = "why?";
      const Json result = run(t.name, a, rest);
      EXPECT_EQ(result["isError"], true) << t.name << " " << a.dump();
      EXPECT_EQ(error_code(result), "invalid_request") << t.name << " " << a.dump();
      EXPECT_TRUE(rest.calls.empty()) << t.name << " " << a.dump();
    }
  }
  // A whole number sent as a double is an id; so is a large one.
  FakeRest rest;
  EXPECT_EQ(run("getTranscription", {{"id", 42.0}}, rest)["isError"], false);
  EXPECT_EQ(run("getTranscription", {{"id", 9007199254740991LL}}, rest)["isError"], false);
  ASSERT_EQ(rest.calls.size(), 2u);
  EXPECT_EQ(rest.calls[0].path, "/api/v1/transcriptions/42");
  EXPECT_EQ(rest.calls[1].path, "/api/v1/transcriptions/9007199254740991");
}

TEST(McpTools, UnknownArgumentsAndNonObjectsAreRefusedWithoutACall) {
  FakeRest rest;
  // A misspelled ceiling must not start an uncapped transcription.
  Json r = run("transcribe", {{"source", "video_site"}, {"url", "https://v.example.com/x"}, {"max_charge", 1}}, rest);
  EXPECT_EQ(r["isError"], true);
  EXPECT_EQ(error_code(r), "invalid_request");
  EXPECT_NE(r["content"][0]["text"].get<std::string>().find("max_charge"), std::string::npos);
  r = run("getAccount", {{"verbose", true}}, rest);
  EXPECT_EQ(error_code(r), "invalid_request");
  r = run("getAccount", Json::array(), rest);
  EXPECT_EQ(error_code(r), "invalid_request");
  r = run("transcribe", {{"source", "video_site"}, {"idempotency_key", 5}}, rest);
  EXPECT_EQ(error_code(r), "invalid_request");
  EXPECT_TRUE(rest.calls.empty());
}

TEST(McpTools, ValuesTheRestApiValidatesAreSentAsGiven) {
  FakeRest rest;
  run("askLibrary", {{"question", ""}, {"transcription_ids", nullptr}}, rest);
  run("listTranscriptions", {{"limit", 1000}, {"cursor", nullptr}}, rest);
  ASSERT_EQ(rest.calls.size(), 2u);
  EXPECT_EQ(rest.calls[0].body, (Json{{"question", ""}, {"transcription_ids", nullptr}}));
  EXPECT_EQ(rest.calls[1].query, (Query{{"limit", "1000"}}));  // null means "not given"
}

TEST(McpTools, ARestErrorBecomesAnErrorResultWithItsCode) {
  FakeRest rest;
  const Json envelope = {{"error",
                          {{"code", "max_charge_exceeded"},
                           {"message", "the charge 0.50 USD is above max_charge_usd 0.10"},
                           {"request_id", "req_1"},
                           {"doc_url", "http://x/docs/errors#max_charge_exceeded"},
                           {"charge_usd", 0.5},
                           {"max_charge_usd", 0.1}}}};
  rest.replies.push_back(FakeRest::json_reply(402, envelope));
  const Json r = run("transcribe", {{"source", "video_site"}, {"url", "https://v.example.com/x"}}, rest);
  EXPECT_EQ(r["isError"], true);
  EXPECT_EQ(r["structuredContent"], envelope);
  ASSERT_EQ(r["content"].size(), 1u);
  EXPECT_EQ(r["content"][0]["type"], "text");
  EXPECT_EQ(r["content"][0]["text"], "max_charge_exceeded: the charge 0.50 USD is above max_charge_usd 0.10");
}

TEST(McpTools, AnErrorWithoutTheEnvelopeStillBecomesAnErrorResult) {
  const Json r = result_of(FakeRest::text_reply(502, "text/html", "<html>Bad gateway</html>"));
  EXPECT_EQ(r["isError"], true);
  EXPECT_EQ(error_code(r), "internal_error");
  EXPECT_EQ(r["structuredContent"]["error"]["http_status"], 502);
  EXPECT_EQ(error_code(result_of(FakeRest::json_reply(404, {{"oops", 1}}))), "invalid_request");
}

TEST(McpTools, SuccessCarriesTheBodyAsStructuredContentAndCompactText) {
  const Json body = {{"id", 42}, {"deleted", true}};
  Json r = result_of(FakeRest::json_reply(200, body));
  EXPECT_EQ(r["isError"], false);
  EXPECT_EQ(r["structuredContent"], body);
  EXPECT_EQ(r["content"][0]["text"], body.dump());
  r = result_of(FakeRest::json_reply(200, Json::array({1, 2})));
  EXPECT_EQ(r["structuredContent"], (Json{{"items", {1, 2}}}));
  r = result_of(FakeRest::text_reply(200, "text/plain", "hello"));
  EXPECT_EQ(r["structuredContent"], (Json{{"content_type", "text/plain"}, {"text", "hello"}}));
  EXPECT_EQ(r["content"][0]["text"], "hello");
}

TEST(McpTools, ErrorResultHasTheSameShape) {
  const Json r = error_result("invalid_request", "id is required");
  EXPECT_EQ(r["isError"], true);
  EXPECT_EQ(r["structuredContent"], (Json{{"error", {{"code", "invalid_request"}, {"message", "id is required"}}}}));
  EXPECT_EQ(r["content"], (Json::array({{{"type", "text"}, {"text", "invalid_request: id is required"}}})));
}

TEST(McpTools, SubtitlesAreReturnedAsText) {
  FakeRest rest;
  const std::string srt = "1\n00:00:01,000 --> 00:00:02,100\nGood morning everyone.\n";
  rest.replies.push_back(FakeRest::text_reply(200, "application/x-subrip; charset=utf-8", srt));
  Json r = run("getSubtitles", {{"id", 42}}, rest);
  EXPECT_EQ(r["isError"], false);
  EXPECT_EQ(r["structuredContent"],
            (Json{{"format", "srt"}, {"content_type", "application/x-subrip; charset=utf-8"}, {"text", srt}}));
  EXPECT_EQ(r["content"], (Json::array({{{"type", "text"}, {"text", srt}}})));
  EXPECT_TRUE(rest.calls[0].query.empty());

  const std::string vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:02.100\nHi\n";
  rest.replies.push_back(FakeRest::text_reply(200, "text/vtt; charset=utf-8", vtt));
  r = run("getSubtitles", {{"id", 42}, {"format", "vtt"}}, rest);
  EXPECT_EQ(r["structuredContent"]["format"], "vtt");
  EXPECT_EQ(r["structuredContent"]["text"], vtt);

  // The json format is still the file, as text.
  const Json cues = {{"cues", Json::array()}};
  rest.replies.push_back(FakeRest::json_reply(200, cues));
  r = run("getSubtitles", {{"id", 42}, {"format", "json"}}, rest);
  EXPECT_EQ(r["structuredContent"]["text"], cues.dump());

  rest.replies.push_back(FakeRest::json_reply(
      409, {{"error", {{"code", "not_ready"}, {"message", "still processing"}, {"status", "processing"}}}}));
  r = run("getSubtitles", {{"id", 42}}, rest);
  EXPECT_EQ(r["isError"], true);
  EXPECT_EQ(error_code(r), "not_ready");
}

TEST(McpTools, SearchReturnsFetchableResults) {
  FakeRest rest;
  rest.replies.push_back(
      FakeRest::json_reply(200, {{"query", "budget"},
                                 {"hits",
                                  {{{"transcription_id", 42},
                                    {"title", "Library meeting"},
                                    {"segment_id", 1187},
                                    {"speaker", "SPEAKER_01"},
                                    {"start_ms", 5230},
                                    {"end_ms", 9870},
                                    {"text", "I would like to talk about the budget."},
                                    {"url", "https://www.youtube.com/watch?v=abc&t=5"}},
                                   {{"transcription_id", 57},
                                    {"title", nullptr},
                                    {"segment_id", 9},
                                    {"speaker", nullptr},
                                    {"start_ms", 999},
                                    {"end_ms", 2000},
                                    {"text", "The budget."},
                                    {"url", "https://scribe.example.com/app/transcriptions/57?t=0"}}}},
                                 {"total", 2},
                                 {"offset", 0},
                                 {"limit", 20},
                                 {"has_more", false}}));
  const Json r = run("search", {{"query", "budget"}, {"limit", 5}, {"transcription_ids", {42, 57}}}, rest);
  ASSERT_EQ(rest.calls.size(), 1u);
  EXPECT_EQ(rest.calls[0].method, "GET");
  EXPECT_EQ(rest.calls[0].path, "/api/v1/search");
  EXPECT_EQ(rest.calls[0].query, (Query{{"q", "budget"}, {"transcription_ids", "42,57"}, {"limit", "5"}}));
  EXPECT_EQ(r["isError"], false);
  const Json& results = r["structuredContent"]["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["id"], "42#5");
  EXPECT_EQ(results[0]["title"], "Library meeting");
  EXPECT_EQ(results[0]["text"], "I would like to talk about the budget.");
  EXPECT_EQ(results[0]["url"], "https://www.youtube.com/watch?v=abc&t=5");
  EXPECT_EQ(results[1]["id"], "57#0");
  EXPECT_EQ(results[1]["title"], "Transcription 57");
  EXPECT_EQ(r["structuredContent"]["has_more"], false);
  EXPECT_EQ(Json::parse(r["content"][0]["text"].get<std::string>()), r["structuredContent"]);

  FakeRest missing;
  EXPECT_EQ(error_code(run("search", Json::object(), missing)), "invalid_request");
  EXPECT_TRUE(missing.calls.empty());

  FakeRest refused;
  refused.replies.push_back(
      FakeRest::json_reply(400, {{"error", {{"code", "invalid_request"}, {"message", "q is too short"}}}}));
  EXPECT_EQ(error_code(run("search", {{"query", "a"}}, refused)), "invalid_request");

  // A reply of an unexpected shape is an error result, never an exception.
  FakeRest odd;
  odd.replies.push_back(FakeRest::json_reply(200, {{"hits", {{{"transcription_id", "x"}}}}}));
  EXPECT_EQ(error_code(run("search", {{"query", "budget"}}, odd)), "internal_error");
}

const Json kVideoTranscription = {{"id", 42},
                                  {"status", "completed"},
                                  {"source", "video_site"},
                                  {"url", "https://www.youtube.com/watch?v=abc"},
                                  {"title", "Library meeting"},
                                  {"language", "auto"},
                                  {"detected_language", "en"},
                                  {"duration_seconds", 1800.5},
                                  {"created_at", "2025-01-31T09:30:00.000Z"}};
const std::string kTranscript = "[00:00:00] SPEAKER_00: Good morning.\n\n[00:00:04] SPEAKER_01: Thank you.\n";

TEST(McpTools, FetchReturnsTheWholeTranscript) {
  FakeRest rest;
  rest.replies.push_back(FakeRest::json_reply(200, kVideoTranscription));
  rest.replies.push_back(FakeRest::text_reply(200, "text/plain; charset=utf-8", kTranscript));
  const Json r = run("fetch", {{"id", "42"}}, rest);
  ASSERT_EQ(rest.calls.size(), 2u);
  EXPECT_EQ(rest.calls[0].method, "GET");
  EXPECT_EQ(rest.calls[0].path, "/api/v1/transcriptions/42");
  EXPECT_EQ(rest.calls[1].method, "GET");
  EXPECT_EQ(rest.calls[1].path, "/api/v1/transcriptions/42/transcript");
  EXPECT_EQ(rest.calls[1].query, (Query{{"format", "txt"}}));
  EXPECT_EQ(r["isError"], false);
  EXPECT_EQ(r["structuredContent"], (Json{{"id", "42"},
                                          {"title", "Library meeting"},
                                          {"text", kTranscript},
                                          {"url", "https://www.youtube.com/watch?v=abc"},
                                          {"metadata",
                                           {{"transcription_id", 42},
                                            {"status", "completed"},
                                            {"source", "video_site"},
                                            {"duration_seconds", 1800.5},
                                            {"language", "en"},
                                            {"created_at", "2025-01-31T09:30:00.000Z"}}}}));
}

TEST(McpTools, FetchOfAMomentLinksToTheMoment) {
  FakeRest rest;
  rest.replies.push_back(FakeRest::json_reply(200, kVideoTranscription));
  rest.replies.push_back(FakeRest::text_reply(200, "text/plain", kTranscript));
  Json r = run("fetch", {{"id", "42#131"}}, rest);
  EXPECT_EQ(r["structuredContent"]["id"], "42#131");
  EXPECT_EQ(r["structuredContent"]["url"], "https://www.youtube.com/watch?v=abc&t=131");
  EXPECT_EQ(r["structuredContent"]["metadata"]["start_seconds"], 131);
  EXPECT_EQ(r["structuredContent"]["text"], kTranscript);

  // An upload's player page needs the public URL, which the REST reply lacks.
  Json upload = kVideoTranscription;
  upload["source"] = "upload";
  upload.erase("url");
  upload["title"] = nullptr;
  rest.replies.push_back(FakeRest::json_reply(200, upload));
  rest.replies.push_back(FakeRest::text_reply(200, "text/plain", kTranscript));
  r = run("fetch", {{"id", "42#5"}}, rest);
  EXPECT_TRUE(r["structuredContent"]["url"].is_null());
  EXPECT_EQ(r["structuredContent"]["title"], "Transcription 42");
}

TEST(McpTools, FetchRefusesBadIdsAndPassesRestErrorsOn) {
  for (const Json& id : {Json("abc"), Json(""), Json("0"), Json("-4"), Json("+4"), Json("42#"), Json("42#x"),
                         Json("42#-1"), Json("42 "), Json("99999999999999999999"), Json(nullptr)}) {
    FakeRest rest;
    const Json r = run("fetch", {{"id", id}}, rest);
    EXPECT_EQ(error_code(r), "invalid_request") << id.dump();
    EXPECT_TRUE(rest.calls.empty()) << id.dump();
  }
  FakeRest numeric;
  numeric.replies.push_back(FakeRest::json_reply(200, kVideoTranscription));
  numeric.replies.push_back(FakeRest::text_reply(200, "text/plain", kTranscript));
  EXPECT_EQ(run("fetch", {{"id", 42}}, numeric)["structuredContent"]["id"], "42");

  FakeRest absent;
  absent.replies.push_back(FakeRest::json_reply(404, {{"error", {{"code", "not_found"}, {"message", "no such"}}}}));
  Json r = run("fetch", {{"id", "7"}}, absent);
  EXPECT_EQ(error_code(r), "not_found");
  EXPECT_EQ(absent.calls.size(), 1u);

  FakeRest processing;
  processing.replies.push_back(FakeRest::json_reply(200, kVideoTranscription));
  processing.replies.push_back(FakeRest::json_reply(
      409,
      {{"error", {{"code", "not_ready"}, {"message", "still processing"}, {"reason", "transcription_processing"}}}}));
  r = run("fetch", {{"id", "42"}}, processing);
  EXPECT_EQ(r["isError"], true);
  EXPECT_EQ(error_code(r), "not_ready");
  EXPECT_EQ(r["structuredContent"]["error"]["reason"], "transcription_processing");
}

// A long-poll's reply comes later, from another thread: a tool returns from
// run without it, and finishes from the reply. fetch's second call is the
// continuation of its first reply.
TEST(McpTools, ToolsRunAsContinuationsOfTheirReplies) {
  std::vector<RestCall> calls;
  std::vector<Then> pending;
  Execute deferred = [&](const RestCall& call, const Then& then) {
    calls.push_back(call);
    pending.push_back(then);
  };
  int results = 0;
  Json result;
  auto done = [&](Json r) {
    ++results;
    result = std::move(r);
  };
  find_tool("getClip")->run({{"id", 42}, {"clip_id", 9}, {"wait", 45}}, ToolCall{deferred, nullptr, done});
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].path, "/api/v1/transcriptions/42/clips/9");
  EXPECT_EQ(calls[0].query, (Query{{"wait", "45"}}));
  EXPECT_EQ(results, 0);
  std::thread([&] { pending[0](FakeRest::json_reply(200, {{"id", 9}, {"status", "completed"}})); }).join();
  EXPECT_EQ(results, 1);
  EXPECT_EQ(result["structuredContent"]["status"], "completed");

  calls.clear();
  pending.clear();
  results = 0;
  find_tool("fetch")->run({{"id", "42"}}, ToolCall{deferred, nullptr, done});
  ASSERT_EQ(calls.size(), 1u);
  pending[0](FakeRest::json_reply(200, kVideoTranscription));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].path, "/api/v1/transcriptions/42/transcript");
  EXPECT_EQ(results, 0);
  pending[1](FakeRest::text_reply(200, "text/plain", kTranscript));
  EXPECT_EQ(results, 1);
  EXPECT_EQ(result["structuredContent"]["text"], kTranscript);

  // A reply of an unexpected shape, met in a continuation, is an error result.
  calls.clear();
  pending.clear();
  results = 0;
  find_tool("search")->run({{"query", "budget"}}, ToolCall{deferred, nullptr, done});
  pending[0](FakeRest::json_reply(200, {{"hits", {{{"transcription_id", "x"}}}}}));
  EXPECT_EQ(results, 1);
  EXPECT_EQ(error_code(result), "internal_error");
}

TEST(McpTools, WaitForTranscriptionWaitsInSlicesOfTheWaitRoute) {
  // Finished in the first slice: its reply is the result.
  FakeRest rest;
  rest.replies.push_back(FakeRest::json_reply(200, {{"id", 7}, {"status", "completed"}, {"_timed_out", false}}));
  Json r = run("waitForTranscription", {{"id", 7}, {"timeout_seconds", 3}, {"include", "chapters,qna"}}, rest);
  EXPECT_EQ(r["structuredContent"]["status"], "completed");
  ASSERT_EQ(rest.calls.size(), 1u);
  EXPECT_EQ(rest.calls[0].path, "/api/v1/transcriptions/7/wait");
  EXPECT_EQ(rest.calls[0].query, (Query{{"timeout", "3"}, {"include", "chapters,qna"}}));
  // A slice that timed out at once was cut short (the server stopping its
  // waits): answered as it is, with no second slice and no progress.
  FakeRest stopping;
  stopping.replies.push_back(FakeRest::json_reply(200, {{"id", 7}, {"status", "processing"}, {"_timed_out", true}}));
  int progress = 0;
  Json result;
  find_tool("waitForTranscription")
      ->run({{"id", 7}, {"timeout_seconds", 100}},
            ToolCall{stopping.execute(), [&](int64_t, int64_t, const std::string&) { return ++progress > 0; },
                     [&](Json j) { result = std::move(j); }});
  EXPECT_EQ(result["structuredContent"]["_timed_out"], true);
  ASSERT_EQ(stopping.calls.size(), 1u);
  EXPECT_EQ(stopping.calls[0].query, (Query{{"timeout", "10"}}));  // 100 clamped to 45, sliced to 10
  EXPECT_EQ(progress, 0);
  // Arguments the route would not see are refused without a call.
  for (const Json& args : {Json{{"id", 7}, {"timeout_seconds", "soon"}}, Json{{"id", 7}, {"timeout_seconds", 1.5}},
                           Json{{"id", 7}, {"include", 3}}, Json{{"id", "7"}}}) {
    FakeRest none;
    EXPECT_EQ(error_code(run("waitForTranscription", args, none)), "invalid_request") << args.dump();
    EXPECT_TRUE(none.calls.empty()) << args.dump();
  }
}

}  // namespace
}  // namespace scribe::api::mcp
