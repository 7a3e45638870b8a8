// GET /api/v1/search and GET /api/v1/transcriptions/{id}/search: substring
// search over the caller's completed transcriptions (api/search_query.h).
#include "api/handlers/handlers.h"
#include "api/heard_search.h"
#include "api/params.h"
#include "api/search_query.h"
#include "api/services.h"
#include "common/error.h"
#include "common/db.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

const db::Statement kOwned{"search.transcription_owned",
                           "select 1 from transcriptions where id = $1 and account_id = $2"};

// The parameters both endpoints share: q, limit and offset.
SearchQuery common_query(const RequestContext& ctx, const QueryParams& params) {
  SearchQuery query;
  query.account_id = ctx.caller().account_id;
  query.q = *params.trimmed_text("q", true, limits::kSearchQueryMin, limits::kSearchQueryMax);
  query.limit = static_cast<int>(
      params.integer("limit", limits::kSearchLimitDefault, limits::kSearchLimitMin, limits::kSearchLimitMax));
  query.offset = static_cast<int>(params.integer("offset", 0, 0, limits::kSearchOffsetMax));
  return query;
}

Response answer(RequestContext& ctx, const SearchQuery& query, const SearchPage& page) {
  Json hits = Json::array();
  for (const auto& h : page.hits) hits.push_back(hit_json(h, ctx.services.config.public_url));
  return Response::json(200, {{"query", query.q},
                              {"hits", std::move(hits)},
                              {"total", page.total},
                              {"offset", query.offset},
                              {"limit", query.limit},
                              {"has_more", page.has_more}});
}

// `match=heard` (docs/heard_matching.md): also where the recognizer probably
// heard the query, each hit saying how it matched. The default, `text`, is
// the spec's substring search, unchanged.
bool heard_mode(const QueryParams& params) { return params.one_of("match", {"text", "heard"}, "text") == "heard"; }

Response heard_answer(RequestContext& ctx, const SearchQuery& query, const HeardPage& page) {
  Json hits = Json::array();
  for (const auto& h : page.hits) hits.push_back(heard_hit_json(h, ctx.services.config.public_url));
  return Response::json(200, {{"query", query.q},
                              {"match", "heard"},
                              {"hits", std::move(hits)},
                              {"total", page.total},
                              {"offset", query.offset},
                              {"limit", query.limit},
                              {"has_more", page.has_more}});
}

}  // namespace

Response SearchHandler::handle(RequestContext& ctx) {
  QueryParams params(ctx.req);
  SearchQuery query = common_query(ctx, params);
  query.transcription_ids = params.id_list("transcription_ids", limits::kSearchMaxTranscriptionIds);
  const bool heard = heard_mode(params);
  pqxx::read_transaction txn(ctx.db());
  if (heard) return heard_answer(ctx, query, run_heard_search(txn, query));
  return answer(ctx, query, run_search(txn, query));
}

Response TranscriptionSearchHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  QueryParams params(ctx.req);
  SearchQuery query = common_query(ctx, params);
  query.transcription_id = id;
  const bool heard = heard_mode(params);
  pqxx::read_transaction txn(ctx.db());
  // Absent, deleted and other accounts' transcriptions alike are 404. One
  // that is not completed yet has no searchable segments: 200, no hits.
  if (txn.exec_prepared(kOwned.name, id, query.account_id).empty()) throw Error::not_found("transcription");
  if (heard) return heard_answer(ctx, query, run_heard_search(txn, query));
  return answer(ctx, query, run_search(txn, query));
}

}  // namespace scribe::api
