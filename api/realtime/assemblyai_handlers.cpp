// The AssemblyAI Universal-Streaming v3 alias (docs/realtime_assemblyai_wire.md):
// GET /v3/token makes a realtime session and answers its single-use ticket as
// AssemblyAI's temporary token; GET /v3/ws is the same live session as
// /api/v1/realtime/ws speaking that service's messages and close codes. A
// program written against the `assemblyai` SDK changes its base URLs and key.
#include "api/caller.h"
#include "api/realtime/handlers.h"
#include "api/realtime/stream_accept.h"
#include "api/services.h"
#include "commands/realtime_commands.h"
#include "domain/api_key.h"
#include "domain/realtime.h"

namespace scribe::api {
namespace {

using realtime::Dialect;

// An integer query parameter, or a 400 naming it (AssemblyAI's own bounds).
std::optional<int> query_int(const Request& req, std::string_view name, int lo, int hi, bool required) {
  auto v = req.query_param(name);
  if (!v || v->empty()) {
    if (required) throw Error::invalid(std::string(name), std::string(name) + " is required");
    return std::nullopt;
  }
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(*v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v->size() || n < lo || n > hi)
    throw Error::invalid(std::string(name), std::string(name) + " must be an integer from " + std::to_string(lo) +
                                                " to " + std::to_string(hi));
  return n;
}

// Whole minutes of a duration in seconds, for our cap (rounded down, at
// least one: the cap is never longer than asked, except below a minute).
int cap_minutes_of(int seconds) { return std::clamp(seconds / 60, 1, scribe::realtime::kMaxCapMinutes); }

}  // namespace

Response AssemblyAiTokenHandler::handle(RequestContext& ctx) {
  // A GET that spends money: read-only keys may not (AssemblyAI's keys have
  // no such kind, so the method rule alone would let them).
  if (!apikey::allows_method(ctx.caller().permission, "POST"))
    throw Error("scope_forbidden", "this API key is read-only; creating a realtime session needs a full-access key");
  query_int(ctx.req, "expires_in_seconds", 1, 600, true);
  auto max_seconds = query_int(ctx.req, "max_session_duration_seconds", 60, 10800, false);
  Json body{{"cap_minutes", cap_minutes_of(max_seconds.value_or(10800))}};
  auto t = commands::start_session(ctx.services.store, ctx.db(), caller_of(ctx), body, false,
                                   ctx.services.config.realtime_ticket_ttl_seconds);
  // The ticket's own lifetime stands: the spec makes it 60 s, whatever was asked.
  auto left = std::chrono::duration_cast<std::chrono::seconds>(t.ticket_expires_at - now()).count();
  Response res = Response::json(200, {{"token", t.ticket}, {"expires_in_seconds", std::max<int64_t>(1, left)}});
  res.set_header("Cache-Control", "no-store");
  return res;
}

Response AssemblyAiStreamHandler::handle(RequestContext& ctx) {
  realtime::StreamParams p;
  p.dialect = Dialect::AssemblyAI;
  const auto& req = ctx.req;
  // Parameters are checked before the ticket is spent: the SDK retries the
  // same URL, which would otherwise meet "ticket used" instead of the reason.
  auto refuse_param = [](const std::string& message) {
    return realtime::refusal("bad_message", message, scribe::realtime::close_code::kBadMessage, Dialect::AssemblyAI);
  };
  if (!req.websocket_upgrade)
    throw Error("invalid_request", "This endpoint is a WebSocket: connect with an Upgrade: websocket request.",
                {{"field", "upgrade"}}, 426);
  if (auto rate = req.query_param("sample_rate"); rate && *rate != "16000")
    return refuse_param("sample_rate must be 16000: this server takes 16 kHz 16-bit mono PCM only.");
  if (auto enc = req.query_param("encoding"); enc && *enc != "pcm_s16le")
    return refuse_param("encoding must be pcm_s16le.");
  // The SDK (4.41.5) sends min_turn_silence, also for its deprecated
  // minEndOfTurnSilenceWhenConfident; older SDKs sent that name as is. Our
  // endpointer has one window: the confident one when given, else the ceiling.
  auto silence = req.query_param("min_turn_silence");
  if (!silence) silence = req.query_param("min_end_of_turn_silence_when_confident");
  if (!silence) silence = req.query_param("max_turn_silence");
  if (silence) {
    try {
      p.end_of_turn_silence_ms = std::clamp(std::stoi(*silence), 200, 5000);
    } catch (const std::exception&) {
      return refuse_param("the end-of-turn silence must be an integer of milliseconds.");
    }
  }
  auto credential = realtime::bearer_or_query(req, "token").value_or("");
  if (credential.rfind("key_", 0) == 0) {
    // An API key on the socket itself: a session with the default cap.
    Request as_bearer = req;
    as_bearer.headers["authorization"] = "Bearer " + credential;
    try {
      ctx.services.authenticator.screen(as_bearer);
      {
        pqxx::nontransaction txn(ctx.db());
        ctx.principal = ctx.services.authenticator.authenticate(txn, as_bearer);
      }
      if (!apikey::allows_method(ctx.principal->permission, "POST"))
        throw Error("scope_forbidden", "this API key is read-only");
      auto t = commands::start_session(ctx.services.store, ctx.db(), caller_of(ctx), Json(nullptr), false,
                                       ctx.services.config.realtime_ticket_ttl_seconds);
      credential = t.ticket;
    } catch (const Error& e) {
      return realtime::refusal("unauthorized", e.message(), scribe::realtime::close_code::kNotAllowed,
                               Dialect::AssemblyAI);
    }
  }
  return realtime::accept_stream(ctx, credential, p);
}

}  // namespace scribe::api
