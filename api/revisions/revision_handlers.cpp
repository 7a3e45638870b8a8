#include "api/caller.h"
#include "api/params.h"
#include "api/revisions/handlers.h"
#include "api/revisions/revision_rows.h"
#include "api/services.h"
#include "commands/revision_commands.h"
#include "common/db.h"
#include "common/error.h"
#include "domain/limits.h"

namespace scribe::api::revisions {
namespace {

const db::Statement kOwned{"revisions.owned", "select 1 from transcriptions where id = $1 and account_id = $2"};

void require_owned(pqxx::transaction_base& txn, const RequestContext& ctx, int64_t id) {
  if (txn.exec_prepared(kOwned.name, id, ctx.caller().account_id).empty()) throw Error::not_found("transcription");
}

}  // namespace

Response RevisionsHandler::list(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  pqxx::read_transaction txn(ctx.db());
  require_owned(txn, ctx, id);
  Json out = Json::array();
  const auto rows = revisions::list(txn, id, limits::kRevisionListMax);
  for (const auto& r : rows) out.push_back(to_json(r, false));
  return Response::json(
      200, {{"revisions", std::move(out)}, {"latest", rows.empty() ? Json(nullptr) : Json(rows[0].revision)}});
}

Response RevisionsHandler::get(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  // GET .../revisions/latest is a route of its own (it shares the path of undo).
  const auto param = ctx.params.find("revision");
  const std::string which = param == ctx.params.end() ? "latest" : param->second;
  std::optional<int64_t> number;
  if (which != "latest") {
    // Like ids: a number that cannot name a revision is one that does not.
    if (which.empty() || which.size() > 9 || which.find_first_not_of("0123456789") != std::string::npos ||
        which[0] == '0')
      throw Error::not_found("revision");
    number = std::stoll(which);
  }
  pqxx::read_transaction txn(ctx.db());
  require_owned(txn, ctx, id);
  const auto row = number ? load(txn, id, *number) : load_latest(txn, id);
  if (!row)
    throw Error("not_found", number ? "this transcription has no revision " + which
                                    : "this transcription has no revision; its recognized transcript is current");
  return Response::json(200, to_json(*row, true));
}

Response RevisionsHandler::save(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  // Malformed JSON and repeated keys are refused as every body is (400 body).
  const Json body = JsonBody::parse(ctx.req).raw();
  const auto saved = commands::save_revision(ctx.services.store, ctx.db(), caller_of(ctx), id, body);
  pqxx::read_transaction txn(ctx.db());
  const auto row = load(txn, id, saved.revision);
  if (!row) throw Error::not_found("revision");  // deleted in between
  Response res = Response::json(201, to_json(*row, true));
  res.set_header("Location",
                 "/api/v1/transcriptions/" + std::to_string(id) + "/revisions/" + std::to_string(saved.revision));
  return res;
}

Response RevisionsHandler::undo(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  {
    pqxx::read_transaction txn(ctx.db());
    require_owned(txn, ctx, id);
  }
  const auto undone = commands::undo_revision(ctx.services.store, ctx.db(), caller_of(ctx), id);
  Json out = Json::object();
  out["undone_revision"] = undone.revision;
  out["latest"] = undone.current ? Json(*undone.current) : Json(nullptr);
  return Response::json(200, out);
}

}  // namespace scribe::api::revisions
