#include "api/mcp/mcp_tools.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "api/deep_link.h"
#include "domain/limits.h"

namespace scribe::api::mcp {
namespace {

// ---------------------------------------------------------------------------
// JSON Schema pieces. Every input schema carries the REST limits, so a client
// that validates arguments learns them before spending a request; the REST
// API still checks everything (a schema is a hint, not a guard).

Json schema(const char* type, const std::string& description) { return {{"type", type}, {"description", description}}; }

Json nullable(const char* type, const std::string& description) {
  return {{"type", Json::array({type, "null"})}, {"description", description}};
}

Json string_arg(const std::string& description, int64_t min_length, int64_t max_length) {
  Json s = schema("string", description);
  if (min_length > 0) s["minLength"] = min_length;
  if (max_length > 0) s["maxLength"] = max_length;
  return s;
}

Json integer_arg(const std::string& description, std::optional<int64_t> minimum, std::optional<int64_t> maximum,
                 std::optional<int64_t> def = std::nullopt) {
  Json s = schema("integer", description);
  if (minimum) s["minimum"] = *minimum;
  if (maximum) s["maximum"] = *maximum;
  if (def) s["default"] = *def;
  return s;
}

Json number_arg(const std::string& description, double minimum, double maximum) {
  Json s = schema("number", description);
  s["minimum"] = minimum;
  s["maximum"] = maximum;
  return s;
}

Json boolean_arg(const std::string& description, bool def) {
  Json s = schema("boolean", description);
  s["default"] = def;
  return s;
}

Json enum_arg(const std::vector<std::string>& values, const std::string& description,
              std::optional<std::string> def = std::nullopt) {
  Json s = schema("string", description);
  s["enum"] = values;
  if (def) s["default"] = *def;
  return s;
}

Json array_of(Json items, const std::string& description, std::optional<int64_t> max_items = std::nullopt) {
  Json s = schema("array", description);
  s["items"] = std::move(items);
  if (max_items) s["maxItems"] = *max_items;
  return s;
}

// Arguments are closed (additionalProperties: false) and run() refuses an
// unknown name too: a misspelled `max_charge_usd` must never turn into a
// transcription without a ceiling.
Json input_schema(Json properties, std::vector<std::string> required = {}) {
  Json s = {{"type", "object"}, {"properties", properties.is_null() ? Json::object() : std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  s["additionalProperties"] = false;
  return s;
}

// Output schemas name no top-level `required` and stay open: the REST body
// may grow fields, and a failed call's structuredContent is {error: {...}},
// which clients that validate every structuredContent against the schema
// must still accept.
Json output_schema(Json properties, const std::string& description) {
  return {{"type", "object"}, {"description", description}, {"properties", std::move(properties)}};
}

Json object_of(Json properties, const std::string& description) {
  return {{"type", "object"}, {"description", description}, {"properties", std::move(properties)}};
}

const Json& transcription_id_arg() {
  static const Json s = integer_arg(
      "The transcription id, an integer >= 1 (from transcribe, listTranscriptions, search or getTranscription).", 1,
      std::nullopt);
  return s;
}

const std::vector<std::string> kIncludeValues = {"chapters",         "acts", "sections", "qna", "segments",
                                                 "posting_chapters", "all"};

Json include_arg(const std::string& description) {
  Json s = array_of(enum_arg(kIncludeValues, "One part of the result, or `all` for every part."), description);
  s["minItems"] = 1;
  s["uniqueItems"] = true;
  return s;
}

// The Clip of the REST API, for getClip and renderClip.
Json clip_output(const std::string& description) {
  return output_schema({{"id", schema("integer", "The clip id.")},
                        {"transcription_id", schema("integer", "The transcription it is cut from.")},
                        {"status", schema("string", "`queued` (also while rendering), `completed` or `failed`.")},
                        {"start_seconds", schema("number", "Start of the range in the recording.")},
                        {"end_seconds", schema("number", "End of the range.")},
                        {"duration_seconds", nullable("number", "The rendered length; null until completed.")},
                        {"aspect", schema("string", "`9:16`, `1:1` or `16:9`.")},
                        {"style", schema("string", "`captions`, `karaoke` or `minimal`.")},
                        {"output", schema("string", "`audiogram`, `video` or `audio`.")},
                        {"title", nullable("string", "Drawn at the top.")},
                        {"charge_usd", schema("number", "Held while queued, charged once completed, 0 if it failed.")},
                        {"file_url", nullable("string", "Signed link to the file, valid one hour.")},
                        {"file_content_type", nullable("string", "`video/mp4` or `audio/mp4`.")},
                        {"srt_url", nullable("string", "Signed link to the clip's SRT.")},
                        {"mp4_url", nullable("string", "The file_url of MP4 outputs.")},
                        {"mp4_url_expires_at", nullable("string", "When the links expire.")},
                        {"error", nullable("object", "Why it failed: {code, message}.")},
                        {"created_at", schema("string", "When it was requested.")},
                        {"completed_at", nullable("string", "When it finished.")}},
                       description);
}

Json clip_id_arg() { return integer_arg("The clip id (from renderClip).", 1, std::nullopt); }

Json idempotency_key_arg(const std::string& what) {
  return string_arg(
      "Optional, 1-" + std::to_string(limits::kIdempotencyKeyMaxLength) +
          " characters (a UUID is a good choice). Calling again with the same key within 24 h replays the first "
          "answer instead of " +
          what +
          " again, so reuse the key when retrying a call whose answer you did not see; the same key with other "
          "arguments is refused (invalid_request).",
      1, limits::kIdempotencyKeyMaxLength);
}

// The fields of a transcription as GET, list, /result and /wait return it.
Json transcription_properties() {
  return {
      {"id", schema("integer", "The transcription id.")},
      {"status", enum_arg({"quoted", "queued", "pending", "processing", "completed", "failed", "cancelled"},
                          "`completed`, `failed` and `cancelled` are final; `quoted` rows come from getQuote and "
                          "never start.")},
      {"stage", schema("string",
                       "Progress within the status: quoted, queued, downloading, decoding, transcribing, diarizing, "
                       "enriching, completed or failed.")},
      {"attempt", schema("integer", "0 for a quoted row, 1 after transcribe, one more per retry.")},
      {"source", enum_arg({"video_site", "platform_url", "external_url", "upload"}, "Where the media came from.")},
      {"url", nullable("string", "The media link, for the link sources.")},
      {"upload_id", nullable("string", "For uploads.")},
      {"original_filename", nullable("string", "For uploads, as sent.")},
      {"title", nullable("string", "Null when unknown.")},
      {"language", schema("string", "The requested language; `auto` means detected automatically.")},
      {"detected_language", nullable("string", "Set when the job finishes.")},
      {"pipeline_code", schema("string", "The pipeline, `standard`.")},
      {"addons", array_of(schema("string", "An add-on code."), "Add-ons; empty by default.")},
      {"client_reference", nullable("string", "The caller's reference, as sent.")},
      {"callback_url", schema("string", "Present when a callback URL was sent.")},
      {"duration_seconds", nullable("number", "The media length in seconds (measured once completed).")},
      {"billed_minutes", schema("number", "Billed minutes of the current attempt.")},
      {"retail_usd", schema("number", "Price of the current attempt in USD (0 on subscription plans).")},
      {"charge_usd", schema("number", "Same amount as retail_usd.")},
      {"error", nullable("object", "Null unless failed; then the failure's code and message.")},
      {"created_at", schema("string", "ISO 8601.")},
      {"processing_started_at", nullable("string", "ISO 8601.")},
      {"completed_at", nullable("string", "When it completed or failed, ISO 8601.")},
      {"quote_expires_at", schema("string", "Quoted rows only.")},
  };
}

// /result and /wait: the transcription plus what `include` asked for.
Json result_properties() {
  Json p = transcription_properties();
  p["included"] = array_of(schema("string", "A part of the result."), "What was applied from include.");
  p["chapters"] = array_of(object_of({{"id", schema("integer", "Chapter id.")},
                                      {"chapter_index", schema("integer", "Position, from 0.")},
                                      {"title", schema("string", "Chapter title.")},
                                      {"summary", schema("string", "Extractive summary.")},
                                      {"start_seconds", schema("number", "Start in seconds.")},
                                      {"end_seconds", schema("number", "End in seconds.")},
                                      {"url", nullable("string", "Deep link to the moment.")}},
                                     "A chapter."),
                           "The curated chapter list (8-30 chapters, at most 50 per call).");
  p["acts"] = array_of(schema("object", "An act, in the chapters' shape."), "Narrative summaries (3-15).");
  p["sections"] = array_of(schema("object", "A topic section: id, title, summary, start/end seconds, url."),
                           "Topic sections in recording order, the first 50.");
  p["qna"] = array_of(schema("object", "A Q&A entry: question, answer, citations."),
                      "System Q&A, then saved askTranscription entries; at most 20.");
  p["segments"] = array_of(object_of({{"id", schema("integer", "Segment id.")},
                                      {"segment_index", schema("integer", "Position, from 0.")},
                                      {"start_seconds", schema("number", "Start in seconds.")},
                                      {"end_seconds", schema("number", "End in seconds.")},
                                      {"speaker", nullable("string", "Recording-local label such as SPEAKER_00.")},
                                      {"text", schema("string", "The sentence.")}},
                                     "A sentence-level segment."),
                           "One page of segments, described by segments_meta.");
  p["segments_meta"] = object_of({{"offset", schema("integer", "First segment of the page.")},
                                  {"limit", schema("integer", "Page size.")},
                                  {"total", schema("integer", "Segments of the whole transcription.")},
                                  {"has_more", schema("boolean", "True when more pages follow.")}},
                                 "Paging of segments; present when segments were requested.");
  p["posting_chapters"] = schema("object", "The paste-ready chapter cache, by variant.");
  return p;
}

// ---------------------------------------------------------------------------
// Results.

std::string compact(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json success(Json structured, std::string text) {
  return {{"content", Json::array({{{"type", "text"}, {"text", std::move(text)}}})},
          {"structuredContent", std::move(structured)},
          {"isError", false}};
}

bool is_success(const RestReply& reply) { return reply.status >= 200 && reply.status < 300; }

// ---------------------------------------------------------------------------
// Arguments.

// What a failed argument check returns instead of a call.
struct Refusal {
  Json result;
};

std::optional<Json> argument(const Json& args, const char* name) {
  auto it = args.find(name);
  if (it == args.end() || it->is_null()) return std::nullopt;
  return *it;
}

// A transcription id: an integer >= 1. A whole number sent as 42.0 counts,
// since some clients only have doubles.
std::optional<int64_t> positive_integer(const Json& v) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return u >= 1 ? std::optional<int64_t>(static_cast<int64_t>(u)) : std::nullopt;
    }
    const auto i = v.get<int64_t>();
    return i >= 1 ? std::optional<int64_t>(i) : std::nullopt;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d >= 1 && d <= 9.0e15 && std::floor(d) == d) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

// A query value as the REST API reads it: numbers and booleans as their
// text, arrays as comma lists (include, transcription_ids).
std::string query_value(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // 30.0 is sent as 30: the REST API's integer parameters take no decimal point.
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15) return std::to_string(static_cast<int64_t>(d));
    return compact(v);
  }
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) out += (out.empty() ? "" : ",") + query_value(item);
    return out;
  }
  return compact(v);  // a number, or something the REST API will refuse naming the field
}

// How a tool maps to one REST call: the path (with `{id}` for the
// transcription id argument), which arguments go in the query under which
// name, which in the JSON body under their own names.
struct Mapping {
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> query = {};  // argument, query parameter
  std::vector<std::string> body = {};
  bool idempotency_key = false;
};

std::variant<RestCall, Refusal> build_call(const Mapping& m, const Json& args) {
  RestCall call;
  call.method = m.method;
  call.path = m.path;
  if (auto at = call.path.find("{id}"); at != std::string::npos) {
    auto raw = argument(args, "id");
    if (!raw) return Refusal{error_result("invalid_request", "id is required: the transcription id, an integer >= 1")};
    auto id = positive_integer(*raw);
    if (!id)
      return Refusal{error_result("invalid_request",
                                  "id must be a transcription id, an integer >= 1 (got " + compact(*raw) + ")")};
    call.path.replace(at, 4, std::to_string(*id));
  }
  if (auto at = call.path.find("{clip_id}"); at != std::string::npos) {
    auto raw = argument(args, "clip_id");
    auto id = raw ? positive_integer(*raw) : std::nullopt;
    if (!id) return Refusal{error_result("invalid_request", "clip_id is required: the clip id, an integer >= 1")};
    call.path.replace(at, 9, std::to_string(*id));
  }
  for (const auto& [name, param] : m.query)
    if (auto v = argument(args, name.c_str())) call.query.emplace_back(param, query_value(*v));
  if (m.method == "POST") {
    // Values go through as sent (null included): the REST API validates them
    // and names the field in its 400.
    Json body = Json::object();
    for (const auto& name : m.body)
      if (auto it = args.find(name); it != args.end()) body[name] = *it;
    call.body = std::move(body);
  }
  if (m.idempotency_key) {
    if (auto key = argument(args, "idempotency_key")) {
      if (!key->is_string()) return Refusal{error_result("invalid_request", "idempotency_key must be a string")};
      call.idempotency_key = key->get<std::string>();
    }
  }
  return call;
}

using Runner = std::function<void(const Json& arguments, ToolCall call)>;

Runner rest(Mapping m) {
  return [m = std::move(m)](const Json& args, ToolCall call) {
    auto built = build_call(m, args);
    if (auto* refusal = std::get_if<Refusal>(&built)) return call.done(std::move(refusal->result));
    call.execute(std::get<RestCall>(built), [done = call.done](RestReply reply) { done(result_of(reply)); });
  };
}

// What a failure inside a tool (its own code or a continuation) returns.
Json failed(const std::exception& e) {
  if (dynamic_cast<const Json::exception*>(&e))
    return error_result("internal_error", std::string("the REST reply could not be read: ") + e.what());
  return error_result("internal_error", "the tool failed; call it again");
}

// Every run starts here: arguments must be an object (absent counts as {})
// naming only the schema's properties. The result goes out once, and a
// reply of an unexpected shape becomes an error result rather than an
// exception, whether the run or one of its continuations meets it (a
// continuation may run on another thread, long after run returned).
Runner guarded(const Json& input, Runner run) {
  return [input, run = std::move(run)](const Json& arguments, ToolCall call) {
    if (auto refused = refuse_arguments(input, arguments)) return call.done(*refused);
    auto once = std::make_shared<std::atomic<bool>>(false);
    call.done = [once, done = std::move(call.done)](Json result) {
      if (!once->exchange(true)) done(std::move(result));
    };
    call.execute = [execute = std::move(call.execute), done = call.done](const RestCall& rest, Then then) {
      execute(rest, [then = std::move(then), done](RestReply reply) {
        try {
          then(std::move(reply));
        } catch (const std::exception& e) {
          done(failed(e));
        }
      });
    };
    auto done = call.done;
    try {
      run(arguments.is_null() ? Json::object() : arguments, std::move(call));
    } catch (const std::exception& e) {
      done(failed(e));
    }
  };
}

// ---------------------------------------------------------------------------
// search and fetch: the pair research agents expect. A result id is
// "<transcription_id>" (the whole transcription) or
// "<transcription_id>#<start_seconds>" (a moment: whole seconds, rounded
// down); fetch takes either and returns the whole transcript, with the link
// pointing at the moment when there is one.

RestCall get(std::string path, std::vector<std::pair<std::string, std::string>> query = {}) {
  RestCall call;
  call.method = "GET";
  call.path = std::move(path);
  call.query = std::move(query);
  return call;
}

std::string title_or_default(const Json& title, int64_t transcription_id) {
  if (title.is_string() && !title.get<std::string>().empty()) return title.get<std::string>();
  return "Transcription " + std::to_string(transcription_id);
}

Json search_result(const RestReply& reply) {
  if (!is_success(reply) || !reply.json.is_object()) return result_of(reply);
  const Json& page = reply.json;
  Json results = Json::array();
  for (const auto& hit : page.value("hits", Json::array())) {
    const int64_t tid = hit.at("transcription_id").get<int64_t>();
    const int64_t start_ms = hit.value("start_ms", int64_t{0});
    results.push_back({{"id", std::to_string(tid) + "#" + std::to_string(start_ms > 0 ? start_ms / 1000 : 0)},
                       {"title", title_or_default(hit.value("title", Json()), tid)},
                       {"url", hit.value("url", Json())},
                       {"text", hit.value("text", std::string())},
                       {"transcription_id", tid},
                       {"start_seconds", static_cast<double>(start_ms) / 1000.0},
                       {"speaker", hit.value("speaker", Json())}});
  }
  Json out = {{"results", std::move(results)},
              {"total", page.value("total", Json())},
              {"offset", page.value("offset", Json())},
              {"has_more", page.value("has_more", Json())}};
  return success(out, compact(out));
}

void run_search(const Json& args, ToolCall call) {
  auto query = argument(args, "query");
  if (!query)
    return call.done(error_result("invalid_request", "query is required: the text to find, 2-200 characters"));
  RestCall rest = get("/api/v1/search");
  rest.query.emplace_back("q", query_value(*query));
  for (const char* name : {"transcription_ids", "limit", "offset"})
    if (auto v = argument(args, name)) rest.query.emplace_back(name, query_value(*v));
  call.execute(rest, [done = call.done](RestReply reply) { done(search_result(reply)); });
}

struct FetchId {
  int64_t transcription_id = 0;
  std::optional<int64_t> start_seconds;
};

std::optional<int64_t> digits(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<FetchId> parse_fetch_id(const Json& v) {
  if (!v.is_string()) {
    if (auto id = positive_integer(v)) return FetchId{*id, std::nullopt};
    return std::nullopt;
  }
  const std::string s = v.get<std::string>();
  if (s.empty() || s.front() == '+' || s.front() == '-') return std::nullopt;
  const auto hash = s.find('#');
  auto tid = digits(std::string_view(s).substr(0, hash));
  if (!tid || *tid < 1) return std::nullopt;
  FetchId id{*tid, std::nullopt};
  if (hash != std::string::npos) {
    const std::string_view rest = std::string_view(s).substr(hash + 1);
    if (rest.empty() || rest.front() == '+' || rest.front() == '-') return std::nullopt;
    auto seconds = digits(rest);
    if (!seconds) return std::nullopt;
    id.start_seconds = *seconds;
  }
  return id;
}

// The fetch result of a transcription's metadata and its transcript.
Json fetch_result(const Json& raw, const FetchId& id, const Json& t, const std::string& transcript) {
  const std::string source = t.value("source", std::string());
  const Json source_url = t.value("url", Json());
  // Link sources point at the media (at the moment, for a moment id). The
  // player page of an upload needs the server's public URL, which the REST
  // API does not return here, so an upload has no url.
  Json url = nullptr;
  if (source_url.is_string() && !source_url.get<std::string>().empty()) {
    url =
        id.start_seconds
            ? Json(deep_link("", id.transcription_id, source, source_url.get<std::string>(), *id.start_seconds * 1000))
            : source_url;
  }
  const Json detected = t.value("detected_language", Json());
  Json metadata = {{"transcription_id", id.transcription_id},
                   {"status", t.value("status", Json())},
                   {"source", source},
                   {"duration_seconds", t.value("duration_seconds", Json())},
                   {"language", detected.is_string() ? detected : t.value("language", Json())},
                   {"created_at", t.value("created_at", Json())}};
  if (id.start_seconds) metadata["start_seconds"] = *id.start_seconds;
  Json out = {{"id", raw.is_string() ? raw.get<std::string>() : std::to_string(id.transcription_id)},
              {"title", title_or_default(t.value("title", Json()), id.transcription_id)},
              {"text", transcript},
              {"url", std::move(url)},
              {"metadata", std::move(metadata)}};
  return success(out, compact(out));
}

// Two calls, the second the continuation of the first.
void run_fetch(const Json& args, ToolCall call) {
  auto raw = argument(args, "id");
  if (!raw) return call.done(error_result("invalid_request", "id is required: a search result id"));
  auto id = parse_fetch_id(*raw);
  if (!id)
    return call.done(error_result("invalid_request",
                                  "id must be a search result id, \"<transcription_id>\" or "
                                  "\"<transcription_id>#<start_seconds>\" (got " +
                                      compact(*raw) + ")"));
  const std::string base = "/api/v1/transcriptions/" + std::to_string(id->transcription_id);
  call.execute(get(base), [call, raw = *raw, id = *id, base](RestReply meta) {
    if (!is_success(meta) || !meta.json.is_object()) return call.done(result_of(meta));
    call.execute(get(base + "/transcript", {{"format", "txt"}}),
                 [done = call.done, raw, id, meta = std::move(meta.json)](RestReply transcript) {
                   if (!is_success(transcript)) return done(result_of(transcript));
                   done(fetch_result(raw, id, meta, transcript.body));
                 });
  });
}

// getSubtitles: the REST reply is the file itself, so the text block is the
// file and structuredContent says what it is.
Runner subtitles(Mapping m) {
  return [m = std::move(m)](const Json& args, ToolCall call) {
    auto built = build_call(m, args);
    if (auto* refusal = std::get_if<Refusal>(&built)) return call.done(std::move(refusal->result));
    auto format = argument(args, "format");
    Json name = format && format->is_string() ? *format : Json("srt");
    call.execute(std::get<RestCall>(built), [done = call.done, name](RestReply reply) {
      if (!is_success(reply)) return done(result_of(reply));
      Json out = {{"format", name}, {"content_type", reply.content_type}, {"text", reply.body}};
      done(success(std::move(out), reply.body));
    });
  };
}

// ---------------------------------------------------------------------------
// waitForTranscription: GET .../wait in slices of at most 10 s until the job
// is no longer processing or timeout_seconds is spent, with the caller told
// of the progress between slices. Each slice is the REST long-poll, which
// holds no thread, and what follows a slice is its continuation, so nothing
// waits on a thread of the server in between.

constexpr int64_t kWaitSliceSeconds = 10;

struct Waiting {
  ToolCall call;
  int64_t transcription_id = 0;
  std::optional<std::string> include;
  int64_t timeout_seconds = 0;
  std::chrono::steady_clock::time_point started, deadline;
  int64_t last_progress = 0;
};

void wait_slice(const std::shared_ptr<Waiting>& w);

void after_slice(const std::shared_ptr<Waiting>& w, const RestReply& reply, int64_t slice,
                 std::chrono::steady_clock::time_point slice_started) {
  using namespace std::chrono;
  const bool timed_out = reply.status == 200 && reply.json.is_object() && reply.json.value("_timed_out", false);
  const auto now = steady_clock::now();
  const bool spent = now + milliseconds(500) >= w->deadline;
  // A slice that timed out long before its length was cut short (the
  // server is stopping its waits): answer now rather than spin.
  const bool cut_short = timed_out && now - slice_started < seconds(slice) / 2;
  if (!timed_out || spent || cut_short) return w->call.done(result_of(reply));
  if (w->call.progress) {
    // Seconds waited so far; progress must increase from one notification to the next.
    const int64_t elapsed = std::max<int64_t>(w->last_progress + 1, duration_cast<seconds>(now - w->started).count());
    w->last_progress = elapsed;
    std::string what = "status " + (reply.json.contains("status") && reply.json["status"].is_string()
                                        ? reply.json["status"].get<std::string>()
                                        : std::string("?"));
    if (reply.json.contains("stage") && reply.json["stage"].is_string())
      what += ", stage " + reply.json["stage"].get<std::string>();
    // The caller went away (closed its event stream): stop waiting.
    if (!w->call.progress(elapsed, w->timeout_seconds, what + "; still waiting")) return w->call.done(result_of(reply));
  }
  wait_slice(w);
}

void wait_slice(const std::shared_ptr<Waiting>& w) {
  using namespace std::chrono;
  const int64_t left = ceil<seconds>(w->deadline - steady_clock::now()).count();
  const int64_t slice = std::clamp<int64_t>(left, 1, kWaitSliceSeconds);
  RestCall rest = get("/api/v1/transcriptions/" + std::to_string(w->transcription_id) + "/wait",
                      {{"timeout", std::to_string(slice)}});
  if (w->include) rest.query.emplace_back("include", *w->include);
  const auto slice_started = steady_clock::now();
  w->call.execute(rest, [w, slice, slice_started](RestReply reply) { after_slice(w, reply, slice, slice_started); });
}

void run_wait(const Json& args, ToolCall call) {
  auto raw = argument(args, "id");
  auto id = raw ? positive_integer(*raw) : std::nullopt;
  if (!id)
    return call.done(error_result("invalid_request", "id is required: the transcription id, an integer >= 1" +
                                                         (raw ? " (got " + compact(*raw) + ")" : std::string())));
  int64_t timeout = limits::kWaitTimeoutDefaultSeconds;
  if (auto t = argument(args, "timeout_seconds")) {
    // Clamped into 1-45, as /wait clamps its timeout.
    auto whole =
        t->is_number_integer() || t->is_number_float() ? std::optional<double>(t->get<double>()) : std::nullopt;
    if (!whole || !std::isfinite(*whole) || std::floor(*whole) != *whole)
      return call.done(error_result("invalid_request", "timeout_seconds must be an integer 1-45"));
    timeout = static_cast<int64_t>(
        std::clamp<double>(*whole, limits::kWaitTimeoutMinSeconds, limits::kWaitTimeoutMaxSeconds));
  }
  auto w = std::make_shared<Waiting>();
  if (auto include = argument(args, "include")) {
    // A list (the tool's schema) or a comma list, as /wait takes it.
    if (!include->is_string() && !include->is_array())
      return call.done(
          error_result("invalid_request",
                       "include must be a list of chapters, acts, sections, qna, segments, posting_chapters or all"));
    w->include = query_value(*include);
  }
  w->call = std::move(call);
  w->transcription_id = *id;
  w->timeout_seconds = timeout;
  w->started = std::chrono::steady_clock::now();
  w->deadline = w->started + std::chrono::seconds(timeout);
  wait_slice(w);
}

// ---------------------------------------------------------------------------
// The catalog.

struct Flags {
  bool read_only = true;
  bool destructive = false;
  bool idempotent = false;
  bool open_world = false;
  bool reports_progress = false;
};

Tool make(std::string name, std::string title, std::string description, Json input, Json output, Flags flags,
          Runner run) {
  Tool t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.description = std::move(description);
  t.run = guarded(input, std::move(run));
  t.input_schema = std::move(input);
  t.output_schema = std::move(output);
  t.read_only = flags.read_only;
  t.destructive = flags.destructive;
  t.idempotent = flags.idempotent;
  t.open_world = flags.open_world;
  t.reports_progress = flags.reports_progress;
  return t;
}

constexpr Flags kRead{.read_only = true, .idempotent = true};

// The body fields of POST /api/v1/transcriptions, which POST /api/v1/quotes
// takes too.
Json transcription_request_properties(bool for_quote) {
  const std::string charge =
      for_quote ? "Checked like transcribe's (>= 0) but not applied: a quote charges nothing."
                : "Ceiling for the charge in USD. When the price is above it the call fails with "
                  "max_charge_exceeded and nothing is created or held. Set it to what the user agreed to "
                  "(getQuote gives the price); never raise it without the user's approval.";
  return {
      {"source", enum_arg({"video_site", "platform_url", "external_url", "upload"},
                          "`video_site`: a link to a video on a video site; `platform_url`: a public page on a "
                          "supported media platform; `external_url`: a direct public media file URL; `upload`: a "
                          "file uploaded through createUpload.")},
      {"url", string_arg("The public http(s) link, required for the three link sources; ignored for upload.", 1, 2048)},
      {"upload_id",
       string_arg("Required for source upload: the upload_id from createUpload (`upl_<id>`), or `tus/<id>` for a "
                  "resumable upload.",
                  1, 200)},
      {"original_filename", string_arg("For source upload: the file name, which becomes the title.", 1, 255)},
      {"duration_seconds",
       number_arg("The media length in seconds. Required for upload; optional for external_url (skips a probe); "
                  "not needed for video_site and platform_url.",
                  0.001, 10000000)},
      {"language", string_arg("`auto` (the default) detects the language; otherwise a code from listPipelines' "
                              "supported_languages.",
                              1, 16)},
      {"pipeline_code", string_arg("The pipeline; omit for `standard`, the only one.", 1, 64)},
      {"addons", array_of(string_arg("An add-on code.", 0, 0),
                          "Omit: the standard pipeline has no add-ons (speaker labels are built in), so any entry is "
                          "refused (addon_not_supported).",
                          limits::kMaxAddons)},
      {"max_charge_usd", number_arg(charge, 0, 1000000000)},
      {"callback_url", string_arg("Optional public http(s) URL that receives a signed transcription.completed or "
                                  "transcription.failed POST for this job.",
                                  1, limits::kCallbackUrlMaxLength)},
      {"client_reference",
       string_arg("Your own reference, stored as sent and echoed back; listTranscriptions can filter by it (not "
                  "unique; no control characters).",
                  1, limits::kClientReferenceMaxLength)},
  };
}

const std::vector<std::string> kTranscriptionBodyFields = {
    "source",        "url",    "upload_id",      "original_filename", "duration_seconds", "language",
    "pipeline_code", "addons", "max_charge_usd", "callback_url",      "client_reference"};

std::vector<Tool> build() {
  std::vector<Tool> out;
  const std::string tid = "/api/v1/transcriptions/{id}";

  // --- Account and catalog ---------------------------------------------------
  out.push_back(make(
      "getAccount", "Get account",
      "The caller's account: wallet balance (and what is available after holds of running jobs), plan "
      "(`free` means pay-as-you-go), plan limits (longest file, upload size, concurrent jobs), dashboard links and, "
      "for an API key, its permission, monthly cap and month-to-date spend. Check it before transcribing to know "
      "whether the wallet covers the price.",
      input_schema(Json::object()),
      output_schema(
          {{"user_id", schema("integer", "The account's user id.")},
           {"email", schema("string", "The account's e-mail address.")},
           {"wallet_balance_usd", schema("number", "Wallet balance in USD.")},
           {"wallet_available_usd", schema("number", "What new work can spend: the balance minus open holds.")},
           {"wallet_held_usd", schema("number", "Total of the open wallet holds.")},
           {"subscription_tier",
            enum_arg({"free", "starter", "pro", "business", "enterprise"}, "`free` means pay-as-you-go.")},
           {"limits", object_of({{"max_file_minutes", schema("integer", "Longest file the plan accepts.")},
                                 {"max_upload_bytes", schema("integer", "Largest upload.")},
                                 {"max_concurrent_jobs", nullable("integer", "Null when uncapped.")}},
                                "Plan limits.")},
           {"links", schema("object", "Dashboard, API keys, billing, docs and support links.")},
           {"api_key", schema("object", "For API-key callers: permission, scopes, monthly cap, spend.")}},
          "The Account object."),
      kRead, rest({.method = "GET", .path = "/api/v1/me"})));

  out.push_back(make(
      "listPipelines", "List pipelines",
      "The transcription pipelines with their prices (USD per minute and per hour), the languages each recognizes "
      "(codes to pass as `language` to transcribe) and the timestamp granularities the engine produces.",
      input_schema(Json::object()),
      output_schema({{"pipelines",
                      array_of(object_of({{"code", schema("string", "Pass as pipeline_code.")},
                                          {"name", schema("string", "Display name.")},
                                          {"retail_usd_per_min", schema("number", "Price per minute in USD.")},
                                          {"retail_usd_per_hour", schema("number", "Price per hour in USD.")},
                                          {"supported_languages",
                                           array_of(schema("object", "{code, label, native_name, ...}"), "Languages.")},
                                          {"word_timestamp_languages",
                                           array_of(schema("object", "{code, label, native_name, ...}"),
                                                    "Languages with word timings.")},
                                          {"timestamp_options", array_of(schema("string", "e.g. sentence, word."),
                                                                         "Granularities the engine produces.")}},
                                         "A pipeline."),
                               "The pipelines.")}},
                    "The pipeline catalogue."),
      kRead, rest({.method = "GET", .path = "/api/v1/pipelines"})));

  // --- Transcriptions: reading -------------------------------------------------
  out.push_back(make(
      "listTranscriptions", "List transcriptions",
      "The caller's transcriptions, newest first, one page at a time (quoted rows included). Pass next_cursor back "
      "as cursor until it is null. Use client_reference to find the job a transcribe call started when its answer "
      "was lost.",
      input_schema({{"limit", integer_arg("Page size.", limits::kListLimitMin, limits::kListLimitMax,
                                          limits::kListLimitDefault)},
                    {"cursor", string_arg("The next_cursor of the previous page, unchanged.", 1, 64)},
                    {"api_only", boolean_arg("Only transcriptions created through the API.", false)},
                    {"client_reference", string_arg("Only transcriptions whose client_reference equals this exactly.",
                                                    1, limits::kClientReferenceMaxLength)}}),
      output_schema({{"data", array_of(object_of(transcription_properties(), "A transcription."), "This page.")},
                     {"next_cursor", nullable("string", "Pass back as cursor; null on the last page.")}},
                    "One page of transcriptions."),
      kRead,
      rest({.method = "GET",
            .path = "/api/v1/transcriptions",
            .query = {{"limit", "limit"},
                      {"cursor", "cursor"},
                      {"api_only", "api_only"},
                      {"client_reference", "client_reference"}}})));

  out.push_back(make("getTranscription", "Get a transcription",
                     "One transcription with its status, stage, source, title, duration, price and, when failed, "
                     "its error. To wait for a running job use waitForTranscription; for the content use "
                     "getTranscriptionResult or fetch.",
                     input_schema({{"id", transcription_id_arg()}}, {"id"}),
                     output_schema(transcription_properties(), "The transcription."), kRead,
                     rest({.method = "GET", .path = tid})));

  out.push_back(make(
      "getTranscriptionResult", "Get transcription result",
      "The metadata of a transcription plus the parts asked for in include: chapters (8-30), acts, topic sections, "
      "Q&A, sentence-level segments with speakers (paged by segments_offset/segments_limit, see segments_meta) and "
      "the paste-ready posting chapters. Meaningful once completed; before that the arrays are empty. Free.",
      input_schema(
          {{"id", transcription_id_arg()},
           {"include", include_arg("What to add; default chapters, sections and qna. `all` adds every part.")},
           {"segments_offset", integer_arg("Index of the first segment returned (with segments).", 0, 2147483647, 0)},
           {"segments_limit", integer_arg("Segments per call (with segments).", 1, limits::kResultMaxSegments,
                                          limits::kResultMaxSegments)},
           {"qna_source", enum_arg({"all", "system"},
                                   "`all`: the automatic Q&A then the questions asked with askTranscription; "
                                   "`system`: only the automatic Q&A.",
                                   "all")}},
          {"id"}),
      output_schema(result_properties(), "The transcription's metadata, `included` and the requested parts."), kRead,
      rest({.method = "GET",
            .path = tid + "/result",
            .query = {{"include", "include"},
                      {"segments_offset", "segments_offset"},
                      {"segments_limit", "segments_limit"},
                      {"qna_source", "qna_source"}}})));

  {
    Json output = result_properties();
    output["_timed_out"] = schema("boolean", "True when the wait ended before the transcription finished: call again.");
    out.push_back(make(
        "waitForTranscription", "Wait for a transcription",
        "Waits until a transcription is completed, failed or cancelled, at most timeout_seconds (never more than "
        "45 s), then returns it, with the parts of include when completed. When `_timed_out` is true the job is "
        "still running: call this tool again. Returns at once for a finished or quoted transcription. Free.",
        input_schema(
            {{"id", transcription_id_arg()},
             {"timeout_seconds", integer_arg("How long to wait at most, in seconds.", limits::kWaitTimeoutMinSeconds,
                                             limits::kWaitTimeoutMaxSeconds, limits::kWaitTimeoutDefaultSeconds)},
             {"include", include_arg("Parts to add once completed (as for getTranscriptionResult); "
                                     "default none: the metadata only.")}},
            {"id"}),
        output_schema(std::move(output), "The transcription (and the included parts) plus `_timed_out`."),
        Flags{.read_only = true, .idempotent = true, .reports_progress = true}, run_wait));
  }

  out.push_back(make(
      "getTranscriptionTimestamps", "Get paste-ready chapters",
      "Chapters of a completed transcription as paste-ready text for one platform (video description, podcast "
      "apps, social posts), under that platform's length, timestamp and first-chapter-at-0:00 rules. ok_to_paste is "
      "false when a hard rule is still broken; warnings list what was changed. A not_ready error with reason "
      "artifact_missing means: call regeneratePostingChapters once, then retry. Free.",
      input_schema(
          {{"id", transcription_id_arg()},
           {"format", enum_arg({"video_site", "audio_app_a", "audio_app_b", "markdown", "short_post", "thread_post",
                                "photo_caption", "professional_post", "plain"},
                               "The platform whose rules apply (ignored for show_notes and original).", "video_site")},
           {"variant",
            enum_arg({"standard", "highlights", "clips", "quoted_sections", "show_notes", "original"},
                     "`standard`: the curated chapter list; `highlights`: 5 items; `clips`: 3 clip ideas; "
                     "`quoted_sections`: 8-12 insights with a verbatim quote; `show_notes`: per-chapter Markdown "
                     "summaries; `original`: the raw section list.",
                     "standard")},
           {"cta", boolean_arg("Append the service's call-to-action footer to quoted_sections output.", false)}},
          {"id"}),
      output_schema({{"format", schema("string", "The format asked for.")},
                     {"variant", schema("string", "The variant asked for.")},
                     {"text", schema("string", "The paste-ready text.")},
                     {"thread", array_of(schema("string", "One post."), "short_post and thread_post: the posts.")},
                     {"char_count", schema("integer", "Characters of text.")},
                     {"items_used", schema("integer", "Items in text.")},
                     {"items_total", schema("integer", "Items before the platform's rules.")},
                     {"truncated", schema("boolean", "True when a size limit dropped items.")},
                     {"ok_to_paste", schema("boolean", "False when a hard platform rule is violated.")},
                     {"warnings", array_of(schema("string", "One change."), "What was changed to fit.")},
                     {"constraints", schema("object", "The platform's rules.")},
                     {"source", schema("object", "Where the items came from.")}},
                    "The paste-ready text and what was done to fit the platform."),
      kRead,
      rest({.method = "GET",
            .path = tid + "/timestamps",
            .query = {{"format", "format"}, {"variant", "variant"}, {"cta", "cta"}}})));

  out.push_back(make(
      "getTranscriptionWords", "Get word timings",
      "Word-level timings of a transcription, paged: page until has_more is false. available is false (with reason "
      "not_completed or no_word_timestamps) when there are none. Free.",
      input_schema({{"id", transcription_id_arg()},
                    {"offset", integer_arg("Words to skip.", 0, 2147483647, 0)},
                    {"limit", integer_arg("Words per page.", 1, limits::kWordsLimitMax, limits::kWordsLimitDefault)}},
                   {"id"}),
      output_schema({{"id", schema("integer", "The transcription id.")},
                     {"status", schema("string", "The transcription's status.")},
                     {"available", schema("boolean", "Whether word timings exist.")},
                     {"reason", nullable("string", "not_completed or no_word_timestamps when unavailable.")},
                     {"language", schema("string", "The language.")},
                     {"count", schema("integer", "Total words.")},
                     {"offset", schema("integer", "Words skipped.")},
                     {"limit", schema("integer", "Page size.")},
                     {"has_more", schema("boolean", "True when more pages follow.")},
                     {"words", array_of(object_of({{"text", schema("string", "The word.")},
                                                   {"start_ms", schema("integer", "Start in ms.")},
                                                   {"end_ms", schema("integer", "End in ms.")},
                                                   {"segment_id", schema("integer", "Owning segment.")},
                                                   {"word_index", schema("integer", "Position.")},
                                                   {"speaker", nullable("string", "Speaker label.")},
                                                   {"punctuation", nullable("string", "Punctuation after it.")}},
                                                  "A word."),
                                        "This page of words.")}},
                    "A page of word timings."),
      kRead, rest({.method = "GET", .path = tid + "/words", .query = {{"offset", "offset"}, {"limit", "limit"}}})));

  out.push_back(make(
      "getSubtitles", "Get subtitles",
      "Subtitles of a completed transcription as a file (SRT, WebVTT, karaoke WebVTT or JSON cues) under a "
      "platform preset's line and timing rules. The text content is the file itself; structuredContent carries it "
      "as text with its format and content type. Never capped. Free.",
      input_schema(
          {{"id", transcription_id_arg()},
           {"format",
            enum_arg({"srt", "vtt", "vtt-karaoke", "json"},
                     "`srt`, `vtt`, `vtt-karaoke` (WebVTT with word time tags) or `json` (camelCase cues).", "srt")},
           {"preset", enum_arg({"youtube", "tiktok-shorts", "instagram-reels", "netflix", "podcast", "broadcast"},
                               "The platform whose line-length, duration and reading-speed rules apply.", "youtube")},
           {"speaker_labels", boolean_arg("Prefix every cue with its speaker, e.g. [SPEAKER_00].", false)},
           {"mode", enum_arg({"auto", "word", "sentence"},
                             "`auto`: word-timed cues when word timings exist, else sentences; `word` fails when "
                             "there are no word timings; `sentence`: one cue per sentence where it fits.",
                             "auto")}},
          {"id"}),
      output_schema({{"format", schema("string", "The format asked for.")},
                     {"content_type", schema("string", "The file's media type.")},
                     {"text", schema("string", "The subtitle file.")}},
                    "The subtitle file."),
      kRead,
      subtitles(
          {.method = "GET",
           .path = tid + "/subtitles",
           .query = {
               {"format", "format"}, {"preset", "preset"}, {"speaker_labels", "speaker_labels"}, {"mode", "mode"}}})));

  out.push_back(
      make("getClip", "Get a clip",
           "A clip of a transcription (renderClip): its status and, once completed, signed links to the file and its "
           "SRT, valid one hour (each call signs fresh ones). With wait (1-45 s) it holds until the render finishes; "
           "_timed_out true means it is still rendering. Free.",
           input_schema({{"id", transcription_id_arg()},
                         {"clip_id", clip_id_arg()},
                         {"wait", integer_arg("Seconds to wait for the render to finish.", limits::kClipWaitMinSeconds,
                                              limits::kClipWaitMaxSeconds)}},
                        {"id", "clip_id"}),
           clip_output("The clip."), kRead,
           rest({.method = "GET", .path = tid + "/clips/{clip_id}", .query = {{"wait", "wait"}}})));

  // --- Money, but only a price -------------------------------------------------
  // A POST: read-only keys are refused on every non-GET method (api_app.cpp),
  // and the quote leaves a `quoted` row in the list, so it is not read-only.
  out.push_back(make(
      "getQuote", "Get a price quote",
      "Prices a transcription without starting it: the same arguments as transcribe, answered with the duration, "
      "billed minutes and the USD price transcribe would charge now (standard pipeline: 0.0167 USD per minute on "
      "pay-as-you-go, 0 on subscription plans). Free: nothing is held, charged or queued; it leaves a `quoted` row "
      "that expires after an hour and is never started. Link sources may be looked up (source_busy: retry after "
      "retry_after seconds).",
      input_schema(transcription_request_properties(true), {"source"}),
      output_schema({{"transcription_id", schema("integer", "The quoted row; never started.")},
                     {"duration_seconds", schema("number", "The declared or probed duration.")},
                     {"billed_minutes", schema("number", "Minutes that would be billed.")},
                     {"retail_usd", schema("number", "What transcribe would charge now, in USD.")},
                     {"retail_usd_per_minute", schema("number", "The rate per minute.")},
                     {"retail_usd_per_hour", schema("number", "The rate per hour.")},
                     {"subscription_tier", schema("string", "The plan the price is for.")},
                     {"expires_at", schema("string", "When the quote expires.")},
                     {"addons", array_of(schema("string", "An add-on."), "Add-ons priced.")},
                     {"status", schema("string", "`quoted`.")}},
                    "The quote."),
      Flags{.read_only = false, .open_world = true},
      rest({.method = "POST", .path = "/api/v1/quotes", .body = kTranscriptionBodyFields})));

  // --- Search and fetch --------------------------------------------------------
  out.push_back(make(
      "search", "Search transcripts",
      "Finds a phrase in the caller's completed transcriptions (case-insensitive substring match on the sentences, "
      "not semantic), newest transcription first. Each result is one matching sentence: id (pass it to fetch: "
      "\"<transcription_id>#<start_seconds>\"), the transcription's title, the sentence as text and a deep link to "
      "the moment. Free.",
      input_schema({{"query", string_arg("The text to find, 2-200 characters.", limits::kSearchQueryMin,
                                         limits::kSearchQueryMax)},
                    {"limit", integer_arg("Results per page.", limits::kSearchLimitMin, limits::kSearchLimitMax,
                                          limits::kSearchLimitDefault)},
                    {"offset", integer_arg("Results to skip (0-1000); narrow the query rather than paging deep.", 0,
                                           limits::kSearchOffsetMax, 0)},
                    {"transcription_ids",
                     [] {
                       Json s =
                           array_of(integer_arg("A transcription id.", 1, std::nullopt),
                                    "Only these transcriptions (default: all).", limits::kSearchMaxTranscriptionIds);
                       s["minItems"] = 1;
                       return s;
                     }()}},
                   {"query"}),
      output_schema(
          {{"results", array_of(object_of({{"id", schema("string",
                                                         "\"<transcription_id>#<start_seconds>\": the moment; pass "
                                                         "it to fetch.")},
                                           {"title", schema("string", "The transcription's title.")},
                                           {"url", nullable("string", "Deep link to the moment.")},
                                           {"text", schema("string", "The matching sentence.")},
                                           {"transcription_id", schema("integer", "The transcription id.")},
                                           {"start_seconds", schema("number", "Where the sentence starts.")},
                                           {"speaker", nullable("string", "The speaker label.")}},
                                          "A matching sentence."),
                                "The matches, in order.")},
           {"total", schema("integer", "Matches in all, counted up to 1000.")},
           {"offset", schema("integer", "Results skipped.")},
           {"has_more", schema("boolean", "True when more results follow.")}},
          "The matches."),
      kRead, run_search));

  out.push_back(make(
      "fetch", "Fetch a transcript",
      "The whole transcript of a transcription as text (one turn per line with [hh:mm:ss] and the speaker), with "
      "its title, a link and metadata. id is a search result id: \"<transcription_id>\" or "
      "\"<transcription_id>#<start_seconds>\" (then url points at that moment). The transcription must be "
      "completed. url is the source media link; null for uploaded files. Free.",
      input_schema({{"id",
                     [] {
                       Json s = string_arg(
                           "A search result id: \"<transcription_id>\" or \"<transcription_id>#<start_seconds>\".", 1,
                           64);
                       s["pattern"] = "^[1-9][0-9]*(#[0-9]+)?$";
                       return s;
                     }()}},
                   {"id"}),
      output_schema({{"id", schema("string", "The id asked for.")},
                     {"title", schema("string", "The transcription's title.")},
                     {"text", schema("string", "The whole transcript.")},
                     {"url", nullable("string", "The source link (at the moment, for a moment id).")},
                     {"metadata", object_of({{"transcription_id", schema("integer", "The transcription id.")},
                                             {"status", schema("string", "The status.")},
                                             {"source", schema("string", "The source kind.")},
                                             {"duration_seconds", nullable("number", "Length in seconds.")},
                                             {"language", nullable("string", "Detected language, else requested.")},
                                             {"created_at", schema("string", "ISO 8601.")},
                                             {"start_seconds", schema("integer", "The moment, for a moment id.")}},
                                            "About the transcription.")}},
                    "The document."),
      kRead, run_fetch));

  // --- Q&A: metered by the daily allowance and saved, so not read-only ----------
  const std::string question_description =
      "The question, in any language, 1-" + std::to_string(limits::kAskQuestionMaxChars) + " characters.";
  const Json top_k = integer_arg("How many of the best-matching 20 s moments the answer may draw from.",
                                 limits::kAskTopKMin, limits::kAskTopKMax, limits::kAskTopKDefault);
  const Json citations = array_of(object_of({{"marker", schema("integer", "The [N] in the answer.")},
                                             {"transcription_id", schema("integer", "The transcription.")},
                                             {"title", schema("string", "Section or transcription title.")},
                                             {"start_seconds", schema("number", "The cited moment.")},
                                             {"url", nullable("string", "Deep link to the moment.")},
                                             {"quote", schema("string", "The cited sentence, verbatim.")}},
                                            "A citation."),
                                  "At most 3 citations.");
  out.push_back(
      make("askTranscription", "Ask about a transcription",
           "Answers a question from one completed transcription with verbatim sentences of the transcript, each "
           "followed by an [N] marker of its citation (timestamp and deep link). About 10 s. Never billed, but an "
           "answer is saved to the transcription's Q&A and counts against the account's Q&A allowance (free plan: 10 a "
           "day and 3 per transcription; qna_quota_exceeded when used up). no_answer true means nothing relevant was "
           "found; then nothing is saved or counted.",
           input_schema({{"id", transcription_id_arg()},
                         {"question", string_arg(question_description, 1, limits::kAskQuestionMaxChars)},
                         {"top_k", top_k}},
                        {"id", "question"}),
           output_schema({{"answer", schema("string", "Sentences with [N] markers; empty when no_answer.")},
                          {"no_answer", schema("boolean", "True when nothing relevant was found.")},
                          {"citations", citations},
                          {"qna_id", nullable("integer", "The saved entry; null when no_answer.")},
                          {"remaining_per_transcript", nullable("integer", "Questions left here; null = unlimited.")},
                          {"remaining_per_day", nullable("integer", "Questions left today; null = unlimited.")},
                          {"model", schema("string", "What answered.")}},
                         "The answer."),
           Flags{.read_only = false}, rest({.method = "POST", .path = tid + "/ask", .body = {"question", "top_k"}})));

  out.push_back(make(
      "askLibrary", "Ask about the library",
      "Answers a question from all of the caller's completed transcriptions, or only those of transcription_ids, "
      "with verbatim sentences and [N] citations (possibly from several transcriptions, each titled with its "
      "transcription's title). Never billed, but an answer is saved and counts against the account's daily Q&A "
      "allowance (qna_quota_exceeded when used up). saved false (no_answer true) means nothing relevant was found "
      "and nothing was counted.",
      input_schema({{"question", string_arg(question_description, 1, limits::kAskQuestionMaxChars)},
                    {"top_k", top_k},
                    {"transcription_ids",
                     array_of(integer_arg("A transcription id.", 1, std::nullopt),
                              "Only these transcriptions; omit for the whole library (an empty list matches nothing).",
                              limits::kAskMaxTranscriptionIds)}},
                   {"question"}),
      output_schema({{"answer", schema("string", "Sentences with [N] markers; empty when no_answer.")},
                     {"no_answer", schema("boolean", "True when nothing relevant was found.")},
                     {"citations", citations},
                     {"qna_id", nullable("integer", "The saved entry; null when not saved.")},
                     {"remaining_today", nullable("integer", "Questions left today; null = unlimited.")},
                     {"saved", schema("boolean", "True when saved and counted.")},
                     {"model", schema("string", "What answered.")}},
                    "The answer."),
      Flags{.read_only = false},
      rest({.method = "POST", .path = "/api/v1/ask", .body = {"question", "top_k", "transcription_ids"}})));

  // --- Money: starting work ----------------------------------------------------
  {
    Json input = transcription_request_properties(false);
    input["idempotency_key"] = idempotency_key_arg("starting (and charging) a second job");
    out.push_back(make(
        "transcribe", "Transcribe media",
        "Starts transcribing a video-site link, a media platform page, a direct media URL or an uploaded file "
        "(createUpload). SPENDS WALLET MONEY: the standard pipeline costs 0.0167 USD per minute (1 USD per hour) on "
        "pay-as-you-go, held from the wallet now; 0 on subscription plans. Get the user's consent to the price first "
        "(getQuote gives it) and pass max_charge_usd: above it nothing is started or held (max_charge_exceeded). "
        "Pass an idempotency_key so a retried call cannot start a second paid job. Returns the job at once, status "
        "processing; then call waitForTranscription until it finishes. Link sources are fetched from the internet.",
        input_schema(std::move(input), {"source"}),
        output_schema(
            {{"id", schema("integer", "The new transcription's id.")},
             {"status", schema("string", "`processing`.")},
             {"stage", schema("string", "`queued`.")},
             {"pipeline_code", schema("string", "The pipeline.")},
             {"language", schema("string", "The requested language.")},
             {"source", schema("string", "The source kind.")},
             {"url", schema("string", "For link sources.")},
             {"upload_id", schema("string", "For uploads.")},
             {"duration_seconds", schema("number", "The duration priced.")},
             {"billed_minutes", schema("number", "Minutes billed.")},
             {"retail_usd", schema("number", "The amount held, in USD (0 on subscription plans).")},
             {"addons", array_of(schema("string", "An add-on."), "Add-ons.")},
             {"client_reference", nullable("string", "As sent.")},
             {"callback", object_of({{"url", schema("string", "The callback URL.")},
                                     {"secret", schema("string", "Signing secret of the callback deliveries.")}},
                                    "When callback_url was sent.")}},
            "The started job."),
        Flags{.read_only = false, .open_world = true},
        rest({.method = "POST",
              .path = "/api/v1/transcriptions",
              .body = kTranscriptionBodyFields,
              .idempotency_key = true})));
  }

  out.push_back(make(
      "createUpload", "Create an upload",
      "Gets a one-time URL to upload a media file (up to 1 GB) for transcription: the client then PUTs the raw "
      "file to upload_url within 900 s with the same Content-Type, and passes upload_id to transcribe with source "
      "upload. Free.",
      input_schema(
          {{"filename", string_arg("The file's name.", 1, 255)},
           {"content_type",
            string_arg("The file's media type: audio/mpeg, audio/mp3, audio/wav, audio/m4a, audio/mp4, audio/x-m4a, "
                       "audio/aac, audio/ogg, audio/webm, audio/flac, video/mp4, video/webm, video/quicktime or "
                       "video/x-msvideo.",
                       1, 100)},
           {"file_size", integer_arg("The file's size in bytes.", 1, limits::kMaxUploadBytes)}},
          {"filename", "content_type", "file_size"}),
      output_schema({{"upload_id", schema("string", "Pass as upload_id to transcribe.")},
                     {"upload_url", schema("string", "PUT the file here.")},
                     {"expires_in", schema("integer", "Seconds the URL stays valid.")}},
                    "The upload ticket."),
      Flags{.read_only = false},
      rest({.method = "POST", .path = "/api/v1/uploads", .body = {"filename", "content_type", "file_size"}})));

  out.push_back(make(
      "renderClip", "Render a captioned clip",
      "Renders 1-60 s of a completed transcription as a captioned audiogram (MP4), the source video with captions "
      "(MP4; for a link source only with rights_affirmed) or an audio cut (M4A). SPENDS WALLET MONEY on every "
      "plan: 0.05 USD per started 60 s, held now, charged when the render completes, released if it fails. Get the "
      "user's consent and pass max_charge_usd and an idempotency_key (or client_nonce) so a retried call cannot "
      "render twice. Returns at once with status queued; then call getClip with wait.",
      input_schema(
          {{"id", transcription_id_arg()},
           {"start_seconds", number_arg("Start of the moment, in seconds of the recording.", 0, 1e9)},
           {"end_seconds", number_arg("End of the moment; 1-60 s after start_seconds.", 0, 1e9)},
           {"aspect", enum_arg({"9:16", "1:1", "16:9"}, "Frame: 1080x1920, 1080x1080 or 1920x1080.", "9:16")},
           {"style", enum_arg({"captions", "karaoke", "minimal"},
                              "Captions on a translucent box, the spoken word boxed in highlight_color, or plain text.",
                              "captions")},
           {"output", enum_arg({"audiogram", "video", "audio"}, "What to render.", "audiogram")},
           {"caption_position", enum_arg({"upper", "middle", "lower"}, "Where the captions sit.", "lower")},
           {"words_per_line", integer_arg("Words per caption line.", limits::kClipWordsPerLineMin,
                                          limits::kClipWordsPerLineMax, limits::kClipWordsPerLineDefault)},
           {"highlight_color", string_arg("Karaoke box colour, #RRGGBB.", 7, 7)},
           {"framing", enum_arg({"blur", "crop"}, "For video: blurred fill or crop.", "blur")},
           {"rights_affirmed", boolean_arg("You own or may reuse the source video (video output of a link).", false)},
           {"title", string_arg("Drawn at the top.", 0, limits::kClipTitleMaxChars)},
           {"client_nonce", string_arg("A UUID; a repeat returns the first clip.", 36, 36)},
           {"max_charge_usd",
            number_arg("Ceiling in USD; above it nothing is held (max_charge_exceeded).", 0, 1000000000)},
           {"idempotency_key", idempotency_key_arg("rendering (and charging) a second clip")}},
          {"id", "start_seconds", "end_seconds"}),
      clip_output("The queued clip."), Flags{.read_only = false},
      rest({.method = "POST",
            .path = tid + "/clips",
            .body = {"start_seconds", "end_seconds", "aspect", "style", "output", "caption_position", "words_per_line",
                     "highlight_color", "framing", "rights_affirmed", "title", "client_nonce", "max_charge_usd"},
            .idempotency_key = true})));

  out.push_back(make(
      "regeneratePostingChapters", "Regenerate posting chapters",
      "Recomputes the paste-ready chapter variants (standard, highlights, clips, quoted_sections) of a completed "
      "transcription, optionally steered by refine_prompt, and replaces the cached ones that "
      "getTranscriptionTimestamps uses. At most 10 per transcription (then refused). Never billed.",
      input_schema({{"id", transcription_id_arg()},
                    {"refine_prompt",
                     [] {
                       Json s = nullable("string",
                                         "Optional short steer, e.g. \"emphasise the budget discussion\"; cut to 200 "
                                         "characters.");
                       s["maxLength"] = limits::kRefinePromptMaxLength;
                       return s;
                     }()}},
                   {"id"}),
      output_schema({{"regenerated", schema("boolean", "True.")},
                     {"regen_count", schema("integer", "Regenerations so far.")},
                     {"regen_limit", schema("integer", "The limit, 10.")},
                     {"regen_remaining", schema("integer", "Regenerations left.")},
                     {"refine_prompt", nullable("string", "The prompt used.")},
                     {"posting_chapters", schema("object", "The standard variant.")},
                     {"posting_chapters_highlights", schema("object", "The highlights variant.")},
                     {"posting_chapters_clips", schema("object", "The clips variant.")},
                     {"posting_chapters_quoted_sections", schema("object", "The quoted_sections variant.")}},
                    "The new cache."),
      Flags{.read_only = false},
      rest({.method = "POST", .path = tid + "/timestamps/regenerate", .body = {"refine_prompt"}})));

  {
    Json input = {{"id", transcription_id_arg()},
                  {"max_charge_usd",
                   number_arg("Ceiling for this attempt's charge in USD; the one given to transcribe does not carry "
                              "over. Above it nothing is started (max_charge_exceeded).",
                              0, 1000000000)},
                  {"idempotency_key", idempotency_key_arg("starting (and charging) another attempt")}};
    out.push_back(
        make("retryTranscription", "Retry a failed transcription",
             "Starts a new attempt of a failed transcription. SPENDS WALLET MONEY: a new paid attempt at the same rate "
             "as transcribe (0.0167 USD per minute on pay-as-you-go, 0 on subscription plans); the failed attempt's "
             "charge is not refunded. Get the user's consent and pass max_charge_usd and an idempotency_key. Only for "
             "status failed. Returns at once; then call waitForTranscription.",
             input_schema(std::move(input), {"id"}),
             output_schema({{"id", schema("integer", "The transcription id.")},
                            {"status", schema("string", "`processing`.")},
                            {"stage", schema("string", "`queued`.")},
                            {"billed_minutes", schema("number", "Minutes billed.")},
                            {"retail_usd", schema("number", "The amount held for this attempt, in USD.")}},
                           "The new attempt."),
             Flags{.read_only = false},
             rest({.method = "POST", .path = tid + "/retry", .body = {"max_charge_usd"}, .idempotency_key = true})));
  }

  out.push_back(make(
      "deleteTranscription", "Delete a transcription",
      "Permanently deletes a transcription with its transcript, chapters, sections, Q&A and stored media; a running "
      "job is stopped and its hold released. Cannot be undone: confirm with the user first.",
      input_schema({{"id", transcription_id_arg()}}, {"id"}),
      output_schema({{"id", schema("integer", "The deleted transcription.")}, {"deleted", schema("boolean", "True.")}},
                    "Deleted."),
      Flags{.read_only = false, .destructive = true, .idempotent = true}, rest({.method = "DELETE", .path = tid})));

  return out;
}

}  // namespace

const std::vector<Tool>& tools() {
  static const std::vector<Tool> all = build();
  return all;
}

const Tool* find_tool(std::string_view name) {
  for (const auto& t : tools())
    if (t.name == name) return &t;
  return nullptr;
}

Json error_result(const std::string& code, const std::string& message) {
  Json error = {{"code", code}, {"message", message}};
  return {{"content", Json::array({{{"type", "text"}, {"text", code + ": " + message}}})},
          {"structuredContent", {{"error", std::move(error)}}},
          {"isError", true}};
}

Json result_of(const RestReply& reply) {
  if (is_success(reply)) {
    if (reply.json.is_object()) return success(reply.json, compact(reply.json));
    if (reply.json.is_array()) {
      Json wrapped = {{"items", reply.json}};
      return success(wrapped, compact(wrapped));
    }
    if (!reply.json.is_null()) {
      Json wrapped = {{"result", reply.json}};
      return success(wrapped, compact(wrapped));
    }
    return success({{"content_type", reply.content_type}, {"text", reply.body}}, reply.body);
  }
  const Json* error = nullptr;
  if (reply.json.is_object())
    if (auto it = reply.json.find("error"); it != reply.json.end() && it->is_object()) error = &*it;
  if (error && error->contains("code") && (*error)["code"].is_string()) {
    const std::string code = (*error)["code"].get<std::string>();
    const Json message = error->value("message", Json(""));
    Json result = error_result(code, message.is_string() ? message.get<std::string>() : compact(message));
    result["structuredContent"]["error"] = *error;  // with its extras: field, reason, retry_after...
    return result;
  }
  // Not the REST API's envelope (a proxy's page, say): say what came back.
  Json result = error_result(reply.status >= 500 ? "internal_error" : "invalid_request",
                             "the REST API answered HTTP " + std::to_string(reply.status) + " without an error body");
  result["structuredContent"]["error"]["http_status"] = reply.status;
  return result;
}

Json describe(const Tool& tool) {
  return {{"name", tool.name},
          {"title", tool.title},
          {"description", tool.description},
          {"inputSchema", tool.input_schema},
          {"outputSchema", tool.output_schema},
          {"annotations",
           {{"title", tool.title},
            {"readOnlyHint", tool.read_only},
            {"destructiveHint", tool.destructive},
            {"idempotentHint", tool.idempotent},
            {"openWorldHint", tool.open_world}}}};
}

std::optional<Json> refuse_arguments(const Json& input_schema, const Json& arguments) {
  const Json args = arguments.is_null() ? Json::object() : arguments;
  if (!args.is_object()) return error_result("invalid_request", "arguments must be a JSON object");
  const Json& known = input_schema.at("properties");
  for (const auto& [name, _] : args.items()) {
    if (known.contains(name)) continue;
    std::string list;
    for (const auto& [k, _v] : known.items()) list += (list.empty() ? "" : ", ") + k;
    return error_result("invalid_request", "unknown argument `" + name + "`; this tool takes " +
                                               (list.empty() ? std::string("no arguments") : list));
  }
  return std::nullopt;
}

}  // namespace scribe::api::mcp
