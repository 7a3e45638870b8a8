// The MCP server at /mcp (Streamable HTTP), both protocol revisions on one
// endpoint (api/mcp/mcp_protocol.h tells them apart), and its discovery
// documents. Every tool runs as REST calls on the caller's behalf
// (api/mcp/mcp_tools.h, Services::call), so the REST rules hold unchanged;
// this file is the protocol: sessions (2025-11-25), headers, results, and
// running tools as continuations of their REST calls, so that a tool whose
// call is a long-poll (getClip with wait, waitForTranscription) holds no
// thread while it waits, with progress as Server-Sent Events.
#include <atomic>
#include <memory>
#include <thread>

#include "api/handlers/handlers.h"
#include "api/mcp/mcp_origins.h"
#include "api/mcp/mcp_protocol.h"
#include "api/mcp/mcp_sessions.h"
#include "api/mcp/mcp_tools.h"
#include "api/services.h"
#include "common/log.h"
#include "common/text.h"
#include "common/thread_pool.h"

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

// The request's Origin, when a browser sends one, must be one of a fixed list
// (api/mcp/mcp_origins.h: this server's own under its loopback names, listen
// host and public URL, and the operator's): a page elsewhere must not drive
// the caller's account. Its Host must be one of this server's names (DNS
// rebinding: a hostile name resolving to this address).
std::optional<Failure> check_origin_and_host(const RequestContext& ctx) {
  const auto pub = parse_absolute_target(ctx.services.config.public_url + "/");
  if (auto origin = ctx.req.header("origin"); origin && !origin_allowed(ctx.services.config, *origin))
    return Failure{403, nullptr, kServerError, "Forbidden: Origin " + *origin + " is not allowed to call this server",
                   nullptr};
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

// Runs the REST calls of a tool with the MCP caller's credentials, and never
// waits for one: a synchronous route answers inside Services::call, on this
// thread, and the tool goes on right here; a long-poll (GET .../wait, a clip
// with `wait`) answers later from whichever thread saw its event or its
// deadline (the wait registry's timer, the subscription that saw the job
// finish), and the tool goes on as a task on the request threads, never on
// that thread. Between the two nothing of the server is held.
Execute executor(const std::shared_ptr<RequestContext>& ctx) {
  return [ctx](const RestCall& call, Then then) {
    ctx->release_db();  // the call leases its own
    struct Calling {
      std::thread::id thread = std::this_thread::get_id();
      std::atomic<bool> returned{false};
    };
    auto calling = std::make_shared<Calling>();
    ctx->services.call(ctx->caller(), rest_request(*ctx, call), [ctx, calling, then](Response r) {
      if (!calling->returned.load() && std::this_thread::get_id() == calling->thread) return then(reply_of(r));
      ctx->services.workers->post([then, r = std::move(r)] { then(reply_of(r)); });
    });
    calling->returned = true;
  };
}

bool read_only(const RequestContext& ctx) { return ctx.caller().permission == apikey::Permission::ReadOnly; }

Json tools_list(const RequestContext& ctx) {
  Json list = Json::array();
  for (const auto& t : tools())
    if (t.read_only || !read_only(ctx)) list.push_back(describe(t));
  return {{"tools", list}};
}

std::string sse_event(const Json& message) { return "event: message\ndata: " + message.dump() + "\n\n"; }

// A result of message `m`, answered through `respond`.
void answer(const Message& m, const Responder& respond, Json result, bool cacheable = false) {
  respond(rpc(200, result_body(m.id, finish_result(m, std::move(result), cacheable))));
}

// tools/call: the tool runs as the continuations of its REST calls (see
// executor) and answers when it is done. A tool that reports progress,
// called with a progressToken, answers at once with an event stream, sends
// notifications/progress on it and ends it with the result.
void call_tool(const std::shared_ptr<RequestContext>& ctx, const Message& m, const Tool& tool, const Json& args,
               const Responder& respond) {
  if (!tool.read_only && read_only(*ctx))
    return answer(
        m, respond,
        error_result("scope_forbidden", "this API key is read-only; " + tool.name + " needs a full-access key"));
  ToolCall call;
  call.execute = executor(ctx);
  std::shared_ptr<ChunkStream> stream;
  if (tool.reports_progress && m.params.contains("_meta") && m.params["_meta"].is_object() &&
      m.params["_meta"].contains("progressToken")) {
    stream = std::make_shared<ChunkStream>();
    Response r;
    r.content_type = "text/event-stream";
    r.set_header("Cache-Control", "no-cache, no-transform");
    r.set_header("X-Accel-Buffering", "no");
    r.stream = stream;
    respond(std::move(r));
    call.progress = [stream, token = m.params["_meta"]["progressToken"]](int64_t progress, int64_t total,
                                                                         const std::string& message) {
      if (stream->gone()) return false;
      stream->push(sse_event(
          {{"jsonrpc", "2.0"},
           {"method", "notifications/progress"},
           {"params", {{"progressToken", token}, {"progress", progress}, {"total", total}, {"message", message}}}}));
      return true;
    };
  }
  call.done = [m, stream, respond](Json result) {
    try {
      if (!stream) return answer(m, respond, std::move(result));
      stream->push(sse_event(result_body(m.id, finish_result(m, std::move(result)))));
    } catch (const std::exception& err) {
      // Runs where the tool's last reply came: nothing may escape, and the answer must go out.
      log::error("mcp tool result not sent", {{"method", m.method}, {"error", err.what()}});
      if (!stream) respond(refusal(Failure{500, m.id, kInternalError, "Internal error; retry", nullptr}));
    }
    if (stream) stream->close();
  };
  ctx->release_db();
  tool.run(args, std::move(call));
}

// Resources: the caller's transcripts as text, scribe://transcriptions/{id}.
Json resources_of(const RestReply& reply) {
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

// One REST call whose reply becomes the answer to `m` (the resources
// methods), a continuation like a tool's.
void with_reply(const std::shared_ptr<RequestContext>& ctx, const Message& m, const Responder& respond,
                const RestCall& call, std::function<void(const RestReply&)> then) {
  executor(ctx)(call, [m, respond, then = std::move(then)](RestReply reply) {
    try {
      then(reply);
    } catch (const std::exception& err) {
      log::error("mcp request failed", {{"method", m.method}, {"error", err.what()}});
      respond(refusal(Failure{500, m.id, kInternalError, "Internal error; retry", nullptr}));
    }
  });
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
              {"capabilities", server_capabilities(Era::Modern)},
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
    return call_tool(ctx, m, *tool, args, respond);
  }
  if (method == "resources/list")
    return with_reply(ctx, m, respond, {"GET", "/api/v1/transcriptions", {{"limit", "50"}}, std::nullopt, std::nullopt},
                      [m, respond](const RestReply& reply) { answer(m, respond, resources_of(reply), true); });
  if (method == "resources/templates/list")
    return ok({{"resourceTemplates", Json::array({{{"uriTemplate", "scribe://transcriptions/{id}"},
                                                   {"name", "transcript"},
                                                   {"description", "A completed transcription's transcript as text"},
                                                   {"mimeType", "text/plain"}}})}},
              true);
  if (method == "resources/read" || method == "resources/subscribe" || method == "resources/unsubscribe") {
    auto id = resource_id(m.params);
    if (!id) return protocol_error(kInvalidParams, "Invalid params: uri must be scribe://transcriptions/{id}");
    const RestCall call{"GET",
                        "/api/v1/transcriptions/" + std::to_string(*id) + "/transcript",
                        {{"format", "txt"}},
                        std::nullopt,
                        std::nullopt};
    return with_reply(ctx, m, respond, call, [m, respond](const RestReply& reply) {
      const Json uri = m.params["uri"];
      if (reply.status != 200)
        return respond(refusal(Failure{200, m.id, kInvalidParams,
                                       "Invalid params: no readable resource " + uri.get<std::string>(), nullptr}));
      // Nothing changes a completed transcript: (un)subscribing is {}.
      if (m.method != "resources/read") return answer(m, respond, Json::object());
      answer(m, respond,
             {{"contents", Json::array({{{"uri", uri}, {"mimeType", "text/plain"}, {"text", reply.body}}})}}, true);
    });
  }
  // The prompts capability, with no prompts: an empty list, and no name to get.
  if (method == "prompts/list") return ok({{"prompts", Json::array()}}, true);
  if (method == "prompts/get")
    return protocol_error(kInvalidParams, "Invalid params: no prompt " +
                                              (m.params.contains("name") && m.params["name"].is_string()
                                                   ? m.params["name"].get<std::string>()
                                                   : std::string("without a name")) +
                                              "; this server has no prompts (prompts/list is empty)");
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
                       {"capabilities", server_capabilities(Era::Legacy)},
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
