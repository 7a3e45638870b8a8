// POST /api/v1/quotes, POST/GET /api/v1/transcriptions, GET/DELETE
// /api/v1/transcriptions/{id}, POST /api/v1/transcriptions/{id}/retry and
// GET /api/v1/transcriptions/{id}/result.
#include "api/handlers/handlers.h"
#include "api/params.h"
#include "api/result_view.h"
#include "api/services.h"
#include "api/transcription_view.h"
#include "api/upload_store.h"
#include "api/caller.h"
#include "commands/transcription_commands.h"
#include "common/error.h"
#include "domain/limits.h"
#include "domain/pipelines.h"
#include "domain/pricing.h"

namespace scribe::api {
namespace {

std::optional<money::Micros> max_charge_of(const JsonBody& b) {
  auto usd = b.number("max_charge_usd", false, {0.0, 1e9});
  if (!usd) return std::nullopt;
  return money::from_usd(*usd);
}

// Turns the JSON body of a create or quote into a validated request; probes
// link sources whose duration is not given.
transcription::Request parse_request(RequestContext& ctx) {
  auto b = JsonBody::parse(ctx.req);
  transcription::Request r;
  r.source = *b.one_of("source", {"video_site", "platform_url", "external_url", "upload"}, true);
  if (r.source == "upload") {
    auto raw = b.string("upload_id", true, 1, 200);
    r.upload_id = transcription::normalize_upload_id(*raw);
    if (!r.upload_id) throw Error::invalid("upload_id", "upload_id must be an id returned by POST /api/v1/uploads");
    r.original_filename = b.string("original_filename", false, 1, 255);
  } else {
    r.url = b.string("url", true, 1, limits::kCallbackUrlMaxLength);
  }
  r.duration_seconds = b.number("duration_seconds", false, {0.001, 1e7});
  r.language = b.string("language", false, 1, 16).value_or("auto");
  if (auto code = b.string("pipeline_code", false, 1, 64)) {
    auto resolved = pipelines::resolve_code(*code);
    if (!resolved)
      throw Error("unsupported_pipeline", "pipeline_code '" + *code + "' is unknown; see GET /api/v1/pipelines",
                  {{"field", "pipeline_code"}});
    r.pipeline_code = *resolved;
  }
  r.addons = b.string_array("addons", false, limits::kMaxAddons).value_or(std::vector<std::string>{});
  r.max_charge = max_charge_of(b);
  r.callback_url = b.string("callback_url", false, 1, limits::kCallbackUrlMaxLength);
  r.client_reference = b.string("client_reference", false, 0, 100000);
  transcription::check_request(r);  // the remaining rules, before any network work
  // Hosts are resolved only once the whole body is valid, so a DNS failure
  // never hides an error in another field.
  if (r.url) ctx.services.check_url(*r.url, "url");
  if (r.callback_url) ctx.services.check_url(*r.callback_url, "callback_url");
  if (r.source == "upload") uploads::require_completed(ctx.db(), ctx.caller().account_id, *r.upload_id);
  if (r.source == "upload") {
    r.title = r.original_filename;
    // The file is here already: what is quoted, held and charged is its
    // measured length, not the declared one (which stays required by the
    // contract, and is what a client without ffprobe would send).
    if (ctx.services.probe_upload) {
      ctx.release_db();
      r.duration_seconds = ctx.services.probe_upload(*r.upload_id).duration_seconds;
    }
  } else if (!r.duration_seconds || r.source != "external_url") {
    // The probe may take a while: the database connection is not held meanwhile.
    ctx.release_db();
    auto probed = ctx.services.probe(r.source, *r.url);
    if (!r.duration_seconds) r.duration_seconds = probed.duration_seconds;
    r.title = probed.title;
  }
  return r;
}

Json priced_json(const commands::Priced& p) {
  return {{"duration_seconds", p.duration_seconds},
          {"billed_minutes", p.billed_minutes},
          {"retail_usd", money::to_usd(p.charge)}};
}

}  // namespace

Response QuoteHandler::handle(RequestContext& ctx) {
  auto req = parse_request(ctx);
  auto p = commands::quote(ctx.services.store, ctx.db(), caller_of(ctx), req);
  Json body = priced_json(p);
  body["transcription_id"] = p.transcription_id;
  body["retail_usd_per_minute"] = pricing::kDisplayUsdPerMinute;
  body["retail_usd_per_hour"] = pricing::kDisplayUsdPerHour;
  body["subscription_tier"] = plans::name(p.tier);
  body["expires_at"] = to_iso8601(p.expires_at);
  body["addons"] = req.addons;
  body["status"] = "quoted";
  return Response::json(200, body);
}

Response CreateTranscriptionHandler::handle(RequestContext& ctx) {
  auto req = parse_request(ctx);
  auto p = commands::create(ctx.services.store, ctx.db(), caller_of(ctx), req);
  Json body = priced_json(p);
  body["id"] = p.transcription_id;
  body["status"] = "processing";
  body["stage"] = "queued";
  body["pipeline_code"] = req.pipeline_code;
  body["language"] = req.language;
  body["source"] = req.source;
  if (req.upload_id) body["upload_id"] = *req.upload_id;
  else body["url"] = *req.url;
  body["addons"] = req.addons;
  body["client_reference"] = req.client_reference ? Json(*req.client_reference) : Json(nullptr);
  if (req.callback_url)
    body["callback"] = {{"url", *req.callback_url},
                        {"secret", commands::callback_secret(ctx.db(), p.transcription_id)}};
  return Response::json(202, body);
}

Response ListTranscriptionsHandler::handle(RequestContext& ctx) {
  QueryParams q(ctx.req);
  int limit =
      static_cast<int>(q.integer("limit", limits::kListLimitDefault, limits::kListLimitMin, limits::kListLimitMax));
  std::optional<int64_t> before;
  if (auto cursor = q.string("cursor", 64)) {
    // The cursor is opaque to clients: "c" followed by the last id seen, in hex.
    bool ok = cursor->size() > 1 && cursor->size() <= 17 && (*cursor)[0] == 'c';
    for (std::size_t i = 1; ok && i < cursor->size(); ++i) ok = std::isxdigit(static_cast<unsigned char>((*cursor)[i]));
    if (!ok) throw Error::invalid("cursor", "cursor must be a next_cursor returned by this endpoint");
    before = static_cast<int64_t>(std::stoull(cursor->substr(1), nullptr, 16));
  }
  bool api_only = q.boolean("api_only", false);
  // Up to 200 characters of UTF-8 (4 bytes each at most).
  auto client_reference = q.string("client_reference", 4 * limits::kClientReferenceMaxLength);
  pqxx::read_transaction txn(ctx.db());
  auto rows = list_transcriptions(txn, ctx.caller().account_id, before, client_reference, api_only, limit + 1);
  Json next = nullptr;
  if (static_cast<int>(rows.size()) > limit) {
    rows.pop_back();
    char buf[24];
    std::snprintf(buf, sizeof buf, "c%llx", static_cast<unsigned long long>(rows.back()["id"].get<int64_t>()));
    next = buf;
  }
  return Response::json(200, {{"data", rows}, {"next_cursor", next}});
}

Response GetTranscriptionHandler::handle(RequestContext& ctx) {
  int64_t id = ctx.id_param("id", "transcription");
  pqxx::read_transaction txn(ctx.db());
  auto t = load_transcription(txn, ctx.caller().account_id, id);
  if (!t) throw Error::not_found("transcription");
  return Response::json(200, *t);
}

Response DeleteTranscriptionHandler::handle(RequestContext& ctx) {
  int64_t id = ctx.id_param("id", "transcription");
  commands::remove(ctx.services.store, ctx.db(), caller_of(ctx), id);
  return Response::json(200, {{"id", id}, {"deleted", true}});
}

Response RetryTranscriptionHandler::handle(RequestContext& ctx) {
  int64_t id = ctx.id_param("id", "transcription");
  auto b = JsonBody::parse(ctx.req, true);
  auto p = commands::retry(ctx.services.store, ctx.db(), caller_of(ctx), id, max_charge_of(b));
  return Response::json(202, {{"id", id},
                              {"status", "processing"},
                              {"stage", "queued"},
                              {"billed_minutes", p.billed_minutes},
                              {"retail_usd", money::to_usd(p.charge)}});
}

Response ResultHandler::handle(RequestContext& ctx) {
  int64_t id = ctx.id_param("id", "transcription");
  auto opts = parse_result_options(QueryParams(ctx.req), {"chapters", "sections", "qna"});
  opts.public_url = ctx.services.config.public_url;
  pqxx::read_transaction txn(ctx.db());
  auto body = result_body(txn, ctx.caller().account_id, id, opts);
  if (!body) throw Error::not_found("transcription");
  return Response::json(200, *body);
}

}  // namespace scribe::api
