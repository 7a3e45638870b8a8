// GET /api/v1/realtime/ws: the stream. The ticket is redeemed here, on a
// handler thread (it is a database write); the upgrade is then accepted
// whatever the outcome, because a browser sees nothing of a refused
// handshake but close code 1006: a refusal is one Error message and a close
// code of docs/realtime_protocol.md's table.
#include "api/realtime/stream_accept.h"

#include "api/realtime/handlers.h"
#include "api/realtime/live_registry.h"
#include "api/websocket.h"
#include "api/services.h"
#include "commands/realtime_commands.h"
#include "common/db.h"
#include "domain/realtime.h"

namespace scribe::api {
namespace realtime {
namespace {

namespace cc = scribe::realtime::close_code;

const db::Statement kResumePoint{
    "realtime_api.resume_point",
    "select (select coalesce(max(seq) + 1, 0) from realtime_audio_pieces where session_id = $1), "
    "(select max(turn_order) from realtime_turns where session_id = $1), "
    "(select samples_persisted from realtime_live where session_id = $1)"};

std::optional<int> optional_int(const Request& req, std::string_view name, int lo, int hi) {
  auto v = req.query_param(name);
  if (!v || v->empty() || v->size() > 6) return std::nullopt;
  try {
    std::size_t used = 0;
    int n = std::stoi(*v, &used);
    if (used != v->size() || n < lo || n > hi) return std::nullopt;
    return n;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> bearer_or_query(const Request& req, std::string_view query_name) {
  if (auto q = req.query_param(query_name); q && !q->empty()) return q;
  if (auto h = req.header("authorization")) {
    if (h->size() > 7 && (h->rfind("Bearer ", 0) == 0 || h->rfind("bearer ", 0) == 0)) return h->substr(7);
    if (!h->empty()) return h;  // AssemblyAI's SDK sends the credential bare
  }
  return std::nullopt;
}

Response accept_stream(RequestContext& ctx, const std::string& ticket, const StreamParams& params) {
  const Dialect d = params.dialect;
  if (!ctx.req.websocket_upgrade)
    throw Error("invalid_request", "This endpoint is a WebSocket: connect with an Upgrade: websocket request.",
                {{"field", "upgrade"}}, 426);
  auto* registry = ctx.services.realtime;
  if (!registry) throw Error("internal_error", "Realtime transcription is not running on this server.");
  auto redeemed = commands::redeem_ticket(ctx.db(), ticket);
  if (!redeemed.session) {
    auto why = *redeemed.refusal;
    static const char* kMessages[] = {
        "The ticket is unknown or malformed.", "The ticket has expired (tickets live 60 s).",
        "The ticket was already used; resume the session for a fresh one.", "The session has ended."};
    return refusal(scribe::realtime::error_code_of(why), kMessages[static_cast<int>(why)],
                   scribe::realtime::close_code_of(why), d);
  }
  const auto& live = *redeemed.session;
  auto generation = commands::claim_connection(ctx.db(), live.session_id, registry->owner());
  if (!generation) return refusal("session_ended", "The session has ended.", cc::kSessionEnded, d);

  SessionStart start;
  start.session_id = live.session_id;
  start.transcription_id = live.transcription_id;
  start.account_id = live.account_id;
  start.cap_minutes = live.cap_minutes;
  start.generation = *generation;
  start.samples_persisted = live.samples_persisted;
  start.resumed = live.resumed;
  start.created_at = live.created_at;
  start.dialect = d;
  start.end_of_turn_silence_ms =
      params.end_of_turn_silence_ms.value_or(registry->settings().default_end_of_turn_silence_ms);
  start.partials = params.partials.value_or(true);
  start.client_last_turn_order = params.last_turn_order;
  {
    pqxx::read_transaction txn(ctx.db());
    auto r = txn.exec_prepared1(kResumePoint.name, live.session_id);
    // Read after the claim: from then on an older connection can store
    // nothing more, so where this one starts is settled.
    start.next_seq = r[0].as<int64_t>();
    if (!r[1].is_null()) start.last_turn_order = r[1].as<int>();
    if (!r[2].is_null()) start.samples_persisted = r[2].as<int64_t>();
  }
  ctx.release_db();

  Response res;
  res.websocket = std::make_shared<WebSocketAccept>();
  // Audio frames are at most 1 s (32,000 bytes); control messages are small.
  res.websocket->max_message_bytes = 64 * 1024;
  // A dead peer is dropped after this with nothing received; longer than the
  // idle window, so a client that pauses its reading but sends KeepAlive, or
  // one waiting out the idle timeout, is ended by the protocol's rules.
  res.websocket->keepalive_seconds =
      std::max(registry->settings().idle_seconds + 10, 3 * registry->settings().heartbeat_seconds);
  res.websocket->on_open = [registry, start](std::shared_ptr<WebSocketConnection> conn) {
    auto session = std::make_shared<LiveSession>(*registry, start, std::move(conn));
    registry->adopt(session);
    session->begin();
    WebSocketHandler h;
    h.on_binary = [session](std::string frame) { session->on_binary(std::move(frame)); };
    h.on_text = [session](std::string text) { session->on_text(std::move(text)); };
    h.on_shutdown = [session] { session->shut_down(); };
    h.on_closed = [session](uint16_t code) { session->on_closed(code); };
    return h;
  };
  return res;
}

Response refusal(const std::string& code, const std::string& message, int close_code, Dialect d) {
  Response res;
  res.websocket = std::make_shared<WebSocketAccept>();
  res.websocket->on_open = [=](std::shared_ptr<WebSocketConnection> conn) {
    conn->send_text(error_message(code, message, false, d, "", close_code));
    conn->close(static_cast<uint16_t>(dialect_close_code(close_code, d)), code);
    return WebSocketHandler{};
  };
  return res;
}

StreamParams native_params(const Request& req) {
  StreamParams p;
  p.dialect = Dialect::Native;
  p.last_turn_order = optional_int(req, "last_turn_order", -1, 1000000);
  p.end_of_turn_silence_ms = optional_int(req, "end_of_turn_silence_ms", 200, 5000);
  if (auto v = req.query_param("partials")) p.partials = *v != "false" && *v != "0";
  return p;
}

}  // namespace realtime

Response RealtimeStreamHandler::handle(RequestContext& ctx) {
  auto ticket = realtime::bearer_or_query(ctx.req, "ticket");
  return realtime::accept_stream(ctx, ticket.value_or(""), realtime::native_params(ctx.req));
}

}  // namespace scribe::api
