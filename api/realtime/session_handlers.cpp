// POST, GET and DELETE of realtime sessions, and their resume: the money and
// the tickets are decided in commands/realtime_commands.h; these turn them
// into the wire (docs/realtime_protocol.md, section 1).
#include "api/caller.h"
#include "api/params.h"
#include "api/realtime/handlers.h"
#include "api/realtime/live_registry.h"
#include "api/realtime/session_view.h"
#include "api/services.h"
#include "commands/realtime_commands.h"
#include "common/db.h"
#include "domain/money.h"

namespace scribe::api {
namespace {

const db::Statement kSession{
    "realtime_api.session",
    "select s.id, s.transcription_id, s.status, s.language, s.cap_minutes, s.created_at, s.ended_at, s.end_reason, "
    "s.charge_micros, coalesce(l.samples_persisted, 0) from realtime_sessions s "
    "left join realtime_live l on l.session_id = s.id where s.id = $1 and s.account_id = $2"};

std::string session_param(const RequestContext& ctx) {
  const auto& id = ctx.params.at("sessionId");
  if (!scribe::realtime::is_session_id(id)) throw Error::not_found("realtime session");
  return id;
}

}  // namespace

Response CreateRealtimeSessionHandler::handle(RequestContext& ctx) {
  // No body, or an empty one, takes every default.
  Json body = ctx.req.body.empty() ? Json(nullptr) : JsonBody::parse(ctx.req, true).raw();
  const auto& p = ctx.caller();
  const bool console = p.kind == Principal::Kind::OAuth && p.first_party;
  auto t = commands::start_session(ctx.services.store, ctx.db(), caller_of(ctx), body, console,
                                   ctx.services.config.realtime_ticket_ttl_seconds);
  return Response::json(201, realtime::ticket_view(ctx.services.config, t));
}

Response ResumeRealtimeSessionHandler::handle(RequestContext& ctx) {
  const auto sid = session_param(ctx);
  auto t = commands::resume_session(ctx.db(), caller_of(ctx), sid, ctx.services.config.realtime_stale_seconds,
                                    ctx.services.config.realtime_ticket_ttl_seconds);
  return Response::json(201, realtime::ticket_view(ctx.services.config, t));
}

Response GetRealtimeSessionHandler::handle(RequestContext& ctx) {
  const auto sid = session_param(ctx);
  pqxx::read_transaction txn(ctx.db());
  auto rows = txn.exec_prepared(kSession.name, sid, ctx.caller().account_id);
  if (rows.empty()) throw Error::not_found("realtime session");
  const auto& r = rows[0];
  Json j{{"session_id", r[0].c_str()},
         {"transcription_id", r[1].as<int64_t>()},
         {"status", r[2].c_str()},
         {"language", r[3].c_str()},
         {"cap_minutes", r[4].as<int>()},
         {"created_at", to_iso8601(*parse_iso8601(r[5].c_str()))},
         {"audio_seconds", static_cast<double>(r[9].as<int64_t>()) / scribe::realtime::kSampleRate}};
  j["ended_at"] = r[6].is_null() ? Json(nullptr) : Json(to_iso8601(*parse_iso8601(r[6].c_str())));
  j["end_reason"] = r[7].is_null() ? Json(nullptr) : Json(r[7].c_str());
  j["charge_usd"] = r[8].is_null() ? Json(nullptr) : Json(money::to_usd(r[8].as<int64_t>()));
  return Response::json(200, j);
}

Response DeleteRealtimeSessionHandler::handle(RequestContext& ctx) {
  const auto sid = session_param(ctx);
  auto status = commands::request_end(ctx.services.store, ctx.db(), sid, ctx.caller().account_id,
                                      scribe::realtime::kReasonDeleted, caller_of(ctx).meta);
  // The connection on this process ends now; one on another process learns
  // of it at its next heartbeat, and a session no connection holds is ended
  // by housekeeping (commands::end_stale_sessions).
  if (ctx.services.realtime)
    if (auto live = ctx.services.realtime->find(sid)) live->request_end(scribe::realtime::kReasonDeleted);
  return Response::json(202, {{"session_id", sid}, {"status", status == "ended" ? "ended" : "ending"}});
}

}  // namespace scribe::api
