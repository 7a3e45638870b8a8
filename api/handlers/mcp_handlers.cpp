// The MCP server at /mcp (Streamable HTTP), both protocol revisions on one
// endpoint (api/mcp/mcp_protocol.h tells them apart), and its discovery
// documents. Every tool runs as REST calls on the caller's behalf
// (api/mcp/mcp_tools.h, Services::call), so the REST rules hold unchanged;
// this file is the protocol: sessions (2025-11-25), headers, results, and the
// long-poll of waitForTranscription, which holds no thread or connection
// while it waits and reports progress as Server-Sent Events.
#include <chrono>

#include <condition_variable>
#include <mutex>
#include "api/handlers/handlers.h"
#include "api/mcp/mcp_protocol.h"
#include "api/mcp/mcp_sessions.h"
#include "api/mcp/mcp_tools.h"
#include "api/services.h"
#include "common/log.h"
#include "common/text.h"
#include "common/thread_pool.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

using namespace mcp;

constexpr const char* kServerName = "scribe";
constexpr const char* kServerVersion = "1.1.0";  // the OpenAPI document's info.version
constexpr const char* kRegistryName = "io.scribe/transcription";
constexpr const char* kInstructions =
    "scribe transcribes audio and video (uploads, direct media URLs, video-site links) into speaker-labelled, "
    "timed transcripts with chapters, sections, Q&A, subtitles and search. Reads are free. `transcribe` and "
    "`retryTranscription` spend wallet money (pay-as-you-go 0.0167 USD per minute; 0 on subscription plans), and "
    "`renderClip` 0.05 USD per started minute of clip on every plan: ask the user first and pass max_charge_usd to "
    "cap it. `askTranscription` and `askLibrary` use the daily Q&A "
    "allowance, never money. Long recordings never block: transcribe returns at once; call "
    "waitForTranscription (at most 45 s per call) until it is no longer processing.";
// Lists may be cached this long by a 2026-07-28 client; private: what a
// list holds depends on the key (read-only keys see fewer tools).
constexpr int64_t kListTtlMs = 300'000;
const std::vector<std::string> kLogLevels = {"debug", "info",     "notice", "warning",
                                             "error", "critical", "alert",  "emergency"};

Json server_info() { return {{"name", kServerName}, {"title", "scribe transcription"}, {"version", kServerVersion}}; }

Response rpc(int status, const Json& body) {
  Response r = Response::json(status, body);
  return r;
}

Response refusal(const Failure& f) { return rpc(f.http_status, error_body(f)); }

Response accepted() {
  Response r;
  r.status = 202;
  r.content_type.clear();
  return r;
}

// A 2026-07-28 result carries resultType and the server's identity; a list
// also says how long it may be cached.
Json finish_result(const Message& m, Json result, bool cacheable = false) {
  if (m.era != Era::Modern) return result;
  result["resultType"] = "complete";
  result["_meta"][kMetaServerInfo] = server_info();
  if (cacheable) {
    result["ttlMs"] = kListTtlMs;
    result["cacheScope"] = "private";
  }
  return result;
}

// The request's Origin must be this server's own (a browser page elsewhere
// must not drive the caller's account), and its Host one of this server's
// names (DNS rebinding: a hostile name resolving to this address).
std::optional<Failure> check_origin_and_host(const RequestContext& ctx) {
  const auto pub = parse_absolute_target(ctx.services.config.public_url + "/");
  if (auto origin = ctx.req.header("origin")) {
    std::string own;
    if (pub && pub->valid) own = pub->scheme + "://" + pub->authority;
    if (*origin != own)
      return Failure{403, nullptr, kServerError, "Forbidden: Origin " + *origin + " is not this server's", nullptr};
  }
  if (auto host = ctx.req.header("host")) {
    std::string name = to_lower(*host);
    // Strip the port (an IPv6 literal keeps its brackets).
    if (auto colon = name.rfind(':'); colon != std::string::npos && name.find(']', colon) == std::string::npos)
      name.resize(colon);
    const bool ok = name == "localhost" || name == "127.0.0.1" || name == "[::1]" ||
                    (pub && pub->valid && name == pub->host) ||
                    (!ctx.services.config.listen_host.empty() && name == to_lower(ctx.services.config.listen_host));
    if (!ok) return Failure{403, nullptr, kServerError, "Forbidden: Host " + *host + " is not this server", nullptr};
  }
  return std::nullopt;
}

// The REST request of `call`, with the MCP caller's credentials.
Request rest_request(const RequestContext& ctx, const RestCall& call) {
  Request req;
  req.method = call.method;
  req.target = call.path;
  for (std::size_t i = 0; i < call.query.size(); ++i)
    req.target += (i ? "&" : "?") + percent_encode(call.query[i].first) + "=" + percent_encode(call.query[i].second);
  if (auto auth = ctx.req.header("authorization")) req.headers["authorization"] = *auth;
  req.remote = ctx.req.remote;
  if (call.body) {
    req.body = call.body->dump();
    req.headers["content-type"] = "application/json";
  }
  if (call.idempotency_key) req.headers["idempotency-key"] = *call.idempotency_key;
  return req;
}

// What a tool sees of a REST response: the JSON body parsed when it is JSON.
RestReply reply_of(const Response& r) {
  RestReply reply{r.status, r.content_type, r.body, nullptr};
  if (r.content_type.rfind("application/json", 0) == 0) {
    try {
      reply.json = Json::parse(r.body);
    } catch (const std::exception&) {
    }
  }
  return reply;
}

// Runs one REST call with the MCP caller's credentials and waits for its
// answer. Synchronous routes answer on this thread; getClip's route is a
// long-poll that answers from the worker pool once the clip finishes or its
// `wait` (at most 45 s) runs out, so this thread waits for it a little longer.
RestReply execute(RequestContext& ctx, const RestCall& call) {
  struct Answer {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Response> got;
  };
  auto answer = std::make_shared<Answer>();
  ctx.release_db();  // the call leases its own
  ctx.services.call(ctx.caller(), rest_request(ctx, call), [answer](Response r) {
    std::lock_guard lock(answer->mu);
    answer->got = std::move(r);
    answer->cv.notify_all();
  });
  std::unique_lock lock(answer->mu);
  const auto limit = std::chrono::seconds(limits::kClipWaitMaxSeconds + 15);
  if (!answer->cv.wait_for(lock, limit, [&] { return answer->got.has_value(); }))
    return RestReply{500, "application/json", "", {{"error", {{"code", "internal_error"}, {"message", "no answer"}}}}};
  return reply_of(*answer->got);
}

bool read_only(const RequestContext& ctx) { return ctx.caller().permission == apikey::Permission::ReadOnly; }

Json tools_list(const RequestContext& ctx) {
  Json list = Json::array();
  for (const auto& t : tools())
    if (t.read_only || !read_only(ctx)) list.push_back(describe(t));
  return {{"tools", list}};
}

std::string sse_event(const Json& message) { return "event: message\ndata: " + message.dump() + "\n\n"; }

// waitForTranscription: /wait in slices of at most 10 s until the job is no
// longer processing or the caller's timeout is spent, a progress
// notification between slices. No thread or connection is held in between
// (each slice is the REST long-poll, and continues on a worker).
struct WaitCall {
  std::shared_ptr<RequestContext> ctx;
  Json id;  // the JSON-RPC id
  Json progress_token;
  int64_t transcription_id = 0;
  std::optional<std::string> include;
  std::chrono::steady_clock::time_point started, deadline;
  int timeout_seconds = 30;
  int64_t last_progress = 0;
  std::shared_ptr<ChunkStream> stream;  // set: answering as SSE
  Responder respond;
  Message message;
};

void finish_wait(const std::shared_ptr<WaitCall>& w, Json result) {
  const Json body = result_body(w->id, finish_result(w->message, std::move(result)));
  if (w->stream) {
    w->stream->push(sse_event(body));
    w->stream->close();
  } else {
    w->respond(rpc(200, body));
  }
}

void continue_wait(const std::shared_ptr<WaitCall>& w, const Response& r, int64_t slice,
                   std::chrono::steady_clock::time_point slice_started);

void wait_slice(const std::shared_ptr<WaitCall>& w) {
  using namespace std::chrono;
  const auto left = duration_cast<seconds>(w->deadline - steady_clock::now()).count();
  const int64_t slice = std::clamp<int64_t>(left, 1, 10);
  RestCall call{"GET",
                "/api/v1/transcriptions/" + std::to_string(w->transcription_id) + "/wait",
                {{"timeout", std::to_string(slice)}},
                std::nullopt,
                std::nullopt};
  if (w->include) call.query.push_back({"include", *w->include});
  const auto slice_started = steady_clock::now();
  w->ctx->services.call(w->ctx->caller(), rest_request(*w->ctx, call), [w, slice, slice_started](Response r) {
    w->ctx->services.workers->post([w, slice, slice_started, r = std::move(r)]() mutable {
      // Runs on a worker: nothing may escape, and the answer must go out.
      try {
        continue_wait(w, r, slice, slice_started);
      } catch (const std::exception& err) {
        log::error("mcp wait failed", {{"request_id", w->ctx->request_id}, {"error", err.what()}});
        finish_wait(w, error_result("internal_error", "the wait failed; call waitForTranscription again"));
      }
    });
  });
}

void continue_wait(const std::shared_ptr<WaitCall>& w, const Response& r, int64_t slice,
                   std::chrono::steady_clock::time_point slice_started) {
  const RestReply reply = reply_of(r);
  const bool timed_out = reply.status == 200 && reply.json.is_object() && reply.json.value("_timed_out", false);
  const auto now = std::chrono::steady_clock::now();
  const bool spent = now + std::chrono::milliseconds(500) >= w->deadline;
  // A slice that timed out long before its length was cut short (the
  // server is stopping its waits): answer now rather than spin.
  const bool cut_short = timed_out && now - slice_started < std::chrono::seconds(slice) / 2;
  if (!timed_out || spent || cut_short || (w->stream && w->stream->gone())) return finish_wait(w, result_of(reply));
  if (w->stream && !w->progress_token.is_null()) {
    // Seconds waited so far; progress must increase from one
    // notification to the next.
    const int64_t elapsed = std::max<int64_t>(
        w->last_progress + 1,
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - w->started).count());
    w->last_progress = elapsed;
    std::string what = "status " + (reply.json.contains("status") && reply.json["status"].is_string()
                                        ? reply.json["status"].get<std::string>()
                                        : std::string("?"));
    if (reply.json.contains("stage") && reply.json["stage"].is_string())
      what += ", stage " + reply.json["stage"].get<std::string>();
    w->stream->push(sse_event({{"jsonrpc", "2.0"},
                               {"method", "notifications/progress"},
                               {"params",
                                {{"progressToken", w->progress_token},
                                 {"progress", elapsed},
                                 {"total", w->timeout_seconds},
                                 {"message", what + "; still waiting"}}}}));
  }
  wait_slice(w);
}

void start_wait(std::shared_ptr<RequestContext> ctx, const Message& m, const Json& args, Responder respond) {
  auto bad = [&](const std::string& msg) {
    respond(rpc(200, result_body(m.id, finish_result(m, error_result("invalid_request", msg)))));
  };
  if (!args.contains("id") || !args["id"].is_number_integer() || args["id"].get<int64_t>() < 1)
    return bad("id must be a transcription id (an integer >= 1)");
  int timeout = limits::kWaitTimeoutDefaultSeconds;
  if (args.contains("timeout_seconds")) {
    if (!args["timeout_seconds"].is_number_integer()) return bad("timeout_seconds must be an integer 1-45");
    timeout = static_cast<int>(std::clamp<int64_t>(args["timeout_seconds"].get<int64_t>(),
                                                   limits::kWaitTimeoutMinSeconds, limits::kWaitTimeoutMaxSeconds));
  }
  auto w = std::make_shared<WaitCall>();
  w->ctx = ctx;
  w->id = m.id;
  w->message = m;
  w->transcription_id = args["id"].get<int64_t>();
  if (args.contains("include")) {
    // A list (the tool's schema) or a comma list, as /wait takes it.
    if (args["include"].is_string()) w->include = args["include"].get<std::string>();
    else if (args["include"].is_array()) {
      std::string joined;
      for (const auto& v : args["include"])
        if (v.is_string()) joined += (joined.empty() ? "" : ",") + v.get<std::string>();
      w->include = joined;
    } else {
      return bad("include must be a list of chapters, acts, sections, qna, segments, posting_chapters or all");
    }
  }
  w->timeout_seconds = timeout;
  w->started = std::chrono::steady_clock::now();
  w->deadline = w->started + std::chrono::seconds(timeout);
  if (m.params.contains("_meta") && m.params["_meta"].contains("progressToken"))
    w->progress_token = m.params["_meta"]["progressToken"];
  w->respond = std::move(respond);
  if (!w->progress_token.is_null()) {
    // Progress goes out as it happens: answer with an event stream now.
    w->stream = std::make_shared<ChunkStream>();
    Response r;
    r.content_type = "text/event-stream";
    r.set_header("Cache-Control", "no-cache, no-transform");
    r.set_header("X-Accel-Buffering", "no");
    r.stream = w->stream;
    w->respond(std::move(r));
  }
  ctx->release_db();
  wait_slice(w);
}

Json call_tool(RequestContext& ctx, const Tool& tool, const Json& args) {
  if (!tool.read_only && read_only(ctx))
    return error_result("scope_forbidden", "this API key is read-only; " + tool.name + " needs a full-access key");
  return tool.run(args, [&](const RestCall& call) { return execute(ctx, call); });
}

// Resources: the caller's transcripts as text, scribe://transcriptions/{id}.
Json resources_list(RequestContext& ctx) {
  auto reply = execute(ctx, {"GET", "/api/v1/transcriptions", {{"limit", "50"}}, std::nullopt, std::nullopt});
  Json list = Json::array();
  const Json* items = reply.json.is_object() ? (reply.json.contains("data")    ? &reply.json["data"]
                                                : reply.json.contains("items") ? &reply.json["items"]
                                                                               : nullptr)
                                             : nullptr;
  if (items && items->is_array())
    for (const auto& t : *items) {
      if (t.value("status", "") != "completed") continue;
      const std::string id = std::to_string(t.value("id", int64_t{0}));
      list.push_back({{"uri", "scribe://transcriptions/" + id},
                      {"name", t.contains("title") && t["title"].is_string() ? t["title"].get<std::string>()
                                                                             : "transcription " + id},
                      {"mimeType", "text/plain"}});
    }
  return {{"resources", list}};
}

std::optional<int64_t> resource_id(const Json& params) {
  static const std::string kPrefix = "scribe://transcriptions/";
  if (!params.contains("uri") || !params["uri"].is_string()) return std::nullopt;
  const std::string uri = params["uri"].get<std::string>();
  if (uri.rfind(kPrefix, 0) != 0) return std::nullopt;
  const std::string digits = uri.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(digits);
}

// One message, once its revision's checks passed. Answers through `respond`.
void handle_message(std::shared_ptr<RequestContext> ctx, const Message& m, const std::optional<Session>& session,
                    Responder respond) {
  auto ok = [&](Json result, bool cacheable = false) {
    respond(rpc(200, result_body(m.id, finish_result(m, std::move(result), cacheable))));
  };
  auto protocol_error = [&](int code, const std::string& message, int status = 200) {
    respond(refusal(Failure{status, m.id, code, message, nullptr}));
  };
  const std::string& method = m.method;
  if (method == "server/discover") {
    Json r = {{"supportedVersions", Json::array({std::string(kModernVersion)})},
              {"capabilities", {{"tools", Json::object()}, {"resources", Json::object()}}},
              {"instructions", kInstructions}};
    Json out = finish_result(m, r, true);
    out["cacheScope"] = "public";
    return respond(rpc(200, result_body(m.id, out)));
  }
  if (method == "ping") return ok(Json::object());
  if (method == "logging/setLevel") {
    const std::string level = m.params.value("level", "");
    if (std::find(kLogLevels.begin(), kLogLevels.end(), level) == kLogLevels.end())
      return protocol_error(kInvalidParams,
                            "Invalid params: level must be one of debug, info, notice, warning, "
                            "error, critical, alert, emergency");
    if (session) set_log_level(ctx->db(), session->id, level);
    return ok(Json::object());
  }
  if (method == "tools/list") return ok(tools_list(*ctx), true);
  if (method == "tools/call") {
    if (!m.params.contains("name") || !m.params["name"].is_string())
      return protocol_error(kInvalidParams, "Invalid params: name (the tool) is required");
    const Tool* tool = find_tool(m.params["name"].get<std::string>());
    if (!tool)
      return protocol_error(kInvalidParams, "Invalid params: unknown tool " + m.params["name"].get<std::string>());
    const Json args =
        m.params.contains("arguments") && m.params["arguments"].is_object() ? m.params["arguments"] : Json::object();
    if (m.params.contains("arguments") && !m.params["arguments"].is_object())
      return protocol_error(kInvalidParams, "Invalid params: arguments must be an object");
    if (tool->long_poll) {
      if (auto refused = refuse_arguments(tool->input_schema, args)) return ok(*refused);
      return start_wait(ctx, m, args, std::move(respond));
    }
    return ok(call_tool(*ctx, *tool, args));
  }
  if (method == "resources/list") return ok(resources_list(*ctx), true);
  if (method == "resources/templates/list")
    return ok({{"resourceTemplates", Json::array({{{"uriTemplate", "scribe://transcriptions/{id}"},
                                                   {"name", "transcript"},
                                                   {"description", "A completed transcription's transcript as text"},
                                                   {"mimeType", "text/plain"}}})}},
              true);
  if (method == "resources/read" || method == "resources/subscribe" || method == "resources/unsubscribe") {
    auto id = resource_id(m.params);
    if (!id) return protocol_error(kInvalidParams, "Invalid params: uri must be scribe://transcriptions/{id}");
    auto reply = execute(*ctx, {"GET",
                                "/api/v1/transcriptions/" + std::to_string(*id) + "/transcript",
                                {{"format", "txt"}},
                                std::nullopt,
                                std::nullopt});
    if (reply.status != 200)
      return protocol_error(kInvalidParams,
                            "Invalid params: no readable resource " + m.params["uri"].get<std::string>());
    if (method != "resources/read") return ok(Json::object());  // nothing changes a completed transcript
    Json r = {
        {"contents", Json::array({{{"uri", m.params["uri"]}, {"mimeType", "text/plain"}, {"text", reply.body}}})}};
    return ok(r, true);
  }
  if (method == "prompts/list") return ok({{"prompts", Json::array()}}, true);
  return protocol_error(kMethodNotFound, "Method not found: " + method, m.era == Era::Modern ? 404 : 200);
}

}  // namespace

void McpHandler::post(std::shared_ptr<RequestContext> ctx, Responder respond) {
  try {
    if (auto f = check_origin_and_host(*ctx)) return respond(refusal(*f));
    const auto type = ctx->req.header("content-type").value_or("");
    if (to_lower(type).rfind("application/json", 0) != 0)
      return respond(
          refusal(Failure{415, nullptr, kServerError, "Unsupported Media Type: send application/json", nullptr}));
    auto classified = classify(ctx->req.headers, ctx->req.body);
    if (auto* f = std::get_if<Failure>(&classified)) return respond(refusal(*f));
    const Message m = std::get<Message>(std::move(classified));
    if (m.response) return respond(accepted());

    std::optional<Session> session;
    const std::string principal = ctx->caller().idempotency_principal();
    if (m.era == Era::Legacy) {
      if (m.method == "initialize") {
        if (m.notification) return respond(accepted());
        const std::string asked = m.params.value("protocolVersion", "");
        const auto& known = legacy_versions();
        const std::string version =
            std::find(known.begin(), known.end(), asked) != known.end() ? asked : std::string(kLegacyVersion);
        const std::string id = open_session(ctx->db(), principal, version);
        Json result = {{"protocolVersion", version},
                       {"capabilities",
                        {{"tools", {{"listChanged", false}}},
                         {"resources", {{"subscribe", true}, {"listChanged", false}}},
                         {"logging", Json::object()}}},
                       {"serverInfo", server_info()},
                       {"instructions", kInstructions}};
        Response r = rpc(200, result_body(m.id, result));
        r.set_header("Mcp-Session-Id", id);
        return respond(std::move(r));
      }
      const auto sid = ctx->req.header("mcp-session-id");
      if (!sid)
        return respond(refusal(Failure{400, m.id, kServerError,
                                       "Bad Request: Mcp-Session-Id header is required (initialize first)", nullptr}));
      session = find_session(ctx->db(), *sid, principal);
      if (!session) return respond(refusal(Failure{404, m.id, -32001, "Session not found", nullptr}));
      if (m.notification) return respond(accepted());
      if (!has_method(Era::Legacy, m.method))
        return respond(refusal(Failure{200, m.id, kMethodNotFound, "Method not found: " + m.method, nullptr}));
    } else if (m.notification) {
      return respond(accepted());
    }
    handle_message(ctx, m, session, respond);
  } catch (const std::exception& err) {
    log::error("mcp request failed", {{"request_id", ctx->request_id}, {"error", err.what()}});
    respond(refusal(Failure{500, nullptr, kInternalError, "Internal error; retry", nullptr}));
  }
}

Response McpHandler::other(RequestContext& ctx) {
  if (auto f = check_origin_and_host(ctx)) return refusal(*f);
  // DELETE with a session ends it (2025-11-25); anything else has no
  // stream to offer: GET (no server-initiated messages) and a 2026-07-28
  // DELETE (no sessions) are 405.
  if (ctx.req.method == "DELETE") {
    if (auto sid = ctx.req.header("mcp-session-id")) {
      if (!end_session(ctx.db(), *sid, ctx.caller().idempotency_principal()))
        return refusal(Failure{404, nullptr, -32001, "Session not found", nullptr});
      Response r;
      r.status = 204;
      r.content_type.clear();
      return r;
    }
  }
  Response r = refusal(Failure{405, nullptr, kServerError, "Method not allowed: POST messages to /mcp", nullptr});
  r.set_header("Allow", "POST, DELETE");
  return r;
}

namespace {

Json remote(const RequestContext& ctx, bool card) {
  Json r = {{"type", "streamable-http"},
            {"url", ctx.services.config.public_url + "/mcp"},
            {"headers", Json::array({{{"name", "Authorization"},
                                      {"description", "Bearer <API key> (key_live_...)"},
                                      {"isRequired", true},
                                      {"isSecret", true}}})}};
  if (card) r["supportedProtocolVersions"] = Json::array({std::string(kModernVersion), std::string(kLegacyVersion)});
  return r;
}

Response discovery(const Json& body) {
  Response r = Response::json(200, body);
  r.set_header("Cache-Control", "public, max-age=3600");
  r.set_header("Access-Control-Allow-Origin", "*");
  return r;
}

}  // namespace

Response McpServerCardHandler::handle(RequestContext& ctx) {
  return discovery({{"$schema", "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"},
                    {"name", kRegistryName},
                    {"title", "scribe transcription"},
                    {"version", kServerVersion},
                    {"description", std::string(kInstructions)},
                    {"websiteUrl", ctx.services.config.public_url},
                    {"remotes", Json::array({remote(ctx, true)})}});
}

Response McpServerJsonHandler::handle(RequestContext& ctx) {
  return discovery({{"$schema", "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"},
                    {"name", kRegistryName},
                    {"title", "scribe transcription"},
                    {"description", "Self-hosted transcription: transcripts, chapters, Q&A, subtitles and search"},
                    {"version", kServerVersion},
                    {"websiteUrl", ctx.services.config.public_url},
                    {"remotes", Json::array({remote(ctx, false)})}});
}

}  // namespace scribe::api
