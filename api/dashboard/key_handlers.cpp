// GET/POST /dashboard/api/v1/keys, DELETE .../keys/{id} and the key's
// webhook at .../keys/{id}/webhook (GET, PUT, DELETE; POST .../test, GET
// .../deliveries): the console's API-key page. Keys are created and revoked by the account commands `scribe admin
// key` uses (domain/account.cpp decides: at most 20 active keys, name
// length, the agent preset's cap and expiry); a key's webhook follows the
// public API's rules (api/key_webhook.h).
//
// Decisions (also in api/openapi.yaml):
//  - A key is listed with its status: active, revoked or expired.
//  - POST returns the plaintext key once (`api_key`); only its SHA-256 is
//    stored. Idempotency-Key is not honoured here (ignored): a replay would
//    have to keep the plaintext, and the console shows it once anyway.
//  - A key of another account is 404 not_found, like one that does not exist;
//    so is PUT on a revoked key's webhook.
//  - .../webhook/deliveries lists the newest 20 deliveries to the key's
//    webhooks, the replaced ones' included; a test just requested appears
//    once the outbox projection has queued it (asynchronous, under a second).
#include "api/dashboard/dashboard.h"
#include "api/key_webhook.h"
#include "api/params.h"
#include "api/services.h"
#include "commands/account_commands.h"
#include "commands/webhook_commands.h"
#include "common/db.h"
#include "common/error.h"
#include "common/sql_time.h"
#include "domain/limits.h"

namespace scribe::api::dashboard {
namespace {

const db::Statement kKeys{"dashboard.keys",
                          "select k.id, k.name, k.key_prefix, k.permission, k.monthly_cap_micros, "
                          SCRIBE_SQL_ISO_MS("k.expires_at") ", " SCRIBE_SQL_ISO_MS("k.created_at") ", "
                          SCRIBE_SQL_ISO_MS("k.revoked_at") ", k.expires_at is not null and k.expires_at <= now(), "
                          "coalesce(s.settled_micros, 0) + coalesce(s.held_micros, 0), "
                          "exists (select 1 from webhooks w where w.key_id = k.id and w.revoked_at is null) "
                          "from api_keys k left join key_monthly_spend s on s.key_id = k.id "
                          "and s.month = date_trunc('month', now() at time zone 'UTC')::date "
                          "where k.account_id = $1 and ($2::bigint is null or k.id = $2) order by k.id"};
// The deliveries to the key's webhooks (the current one and any it had
// before), newest first: what the outbox queued and what the dispatcher made
// of it (webhook_outbox_by_webhook, migration 065).
const db::Statement kDeliveries{
    "dashboard.key_webhook_deliveries",
    "select o.id, o.event, d.status, d.attempts, d.last_status, " SCRIBE_SQL_ISO_MS("o.created_at") ", "
    SCRIBE_SQL_ISO_MS("d.delivered_at")
    " from webhook_outbox o join webhook_deliveries d on d.delivery_id = o.id "
    "where o.webhook_id in (select w.id from webhooks w where w.key_id = $1 and w.account_id = $2) "
    "order by o.id desc limit $3"};
const db::Statement kOwnKey{"dashboard.own_key",
                            "select revoked_at is not null from api_keys where id = $1 and account_id = $2"};

Json usd_or_null(const pqxx::field& f) { return f.is_null() ? Json(nullptr) : Json(money::to_usd(f.as<int64_t>())); }
Json text_or_null(const pqxx::field& f) { return f.is_null() ? Json(nullptr) : Json(f.c_str()); }

Json key_json(const pqxx::row& r) {
  auto permission = apikey::parse_permission(r[3].c_str()).value_or(apikey::Permission::ReadOnly);
  return {{"id", r[0].as<int64_t>()},
          {"name", r[1].c_str()},
          {"prefix", r[2].c_str()},
          {"permission", apikey::permission_name(permission)},
          {"scopes", apikey::scopes(permission)},
          {"monthly_cap_usd", usd_or_null(r[4])},
          {"month_to_date_spend_usd", money::to_usd(r[9].as<int64_t>())},
          {"expires_at", text_or_null(r[5])},
          {"created_at", r[6].c_str()},
          {"revoked_at", text_or_null(r[7])},
          {"status", !r[7].is_null()   ? "revoked"
                     : r[8].as<bool>() ? "expired"
                                       : "active"},
          {"has_webhook", r[10].as<bool>()}};
}

Json keys_of(RequestContext& ctx, std::optional<int64_t> only) {
  pqxx::nontransaction txn(ctx.db());
  Json out = Json::array();
  for (const auto& r : txn.exec_prepared(kKeys.name, ctx.caller().account_id, only)) out.push_back(key_json(r));
  return out;
}

commands::Meta meta_of(const RequestContext& ctx) { return {ctx.caller().idempotency_principal(), ctx.request_id}; }

// The path's key when it is the caller's: whether it is revoked. 404 otherwise.
bool own_key_revoked(RequestContext& ctx, int64_t key_id) {
  pqxx::nontransaction txn(ctx.db());
  auto r = txn.exec_prepared(kOwnKey.name, key_id, ctx.caller().account_id);
  if (r.empty()) throw Error::not_found("API key");
  return r[0][0].as<bool>();
}

}  // namespace

Response KeysHandler::list(RequestContext& ctx) { return Response::json(200, {{"keys", keys_of(ctx, std::nullopt)}}); }

Response KeysHandler::create(RequestContext& ctx) {
  auto b = JsonBody::parse(ctx.req);
  const auto name = *b.trimmed_text("name", true, 1, limits::kApiKeyNameMaxLength);
  const auto permission =
      *apikey::parse_permission(b.one_of("permission", {"full", "read_only", "agent"}).value_or("full"));
  std::optional<money::Micros> cap;
  if (auto usd = b.number("monthly_cap_usd", false, {.min = 0, .max = 1e9})) cap = money::from_usd(*usd);
  std::optional<TimePoint> expires;
  if (auto at = b.string("expires_at", false, 1, 64)) {
    expires = parse_iso8601(*at);
    if (!expires) throw Error::invalid("expires_at", "expires_at must be an ISO 8601 date-time");
  }
  auto created = commands::create_key(ctx.services.store, ctx.db(), ctx.caller().account_id, name, permission, cap,
                                      expires, meta_of(ctx));
  auto listed = keys_of(ctx, created.key_id);
  if (listed.empty()) throw Error("internal_error", "the new key is not readable yet; list the keys again");
  Json body = listed[0];
  body["api_key"] = created.plaintext;
  return Response::json(201, body);
}

Response KeysHandler::revoke(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "API key");
  own_key_revoked(ctx, id);
  commands::revoke_key(ctx.services.store, ctx.db(), id, meta_of(ctx));
  return Response::json(200, keys_of(ctx, id).at(0));
}

Response KeyWebhookHandler::get(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "API key");
  own_key_revoked(ctx, id);
  return Response::json(200, {{"webhook", key_webhook(ctx, id)}});
}

Response KeyWebhookHandler::put(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "API key");
  if (own_key_revoked(ctx, id)) throw Error::not_found("API key");
  return Response::json(201, register_key_webhook(ctx, id));
}

Response KeyWebhookHandler::remove(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "API key");
  own_key_revoked(ctx, id);
  revoke_key_webhook(ctx, id);
  return Response::json(200, {{"revoked", true}});
}

Response KeyWebhookHandler::test(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "API key");
  own_key_revoked(ctx, id);
  // As POST /api/v1/webhooks/test does for the caller's key: 404 without a webhook.
  auto delivery =
      commands::request_webhook_test(ctx.services.store, ctx.db(), ctx.caller().account_id, id, meta_of(ctx));
  return Response::json(202, {{"delivery_id", delivery}, {"enqueued", true}});
}

Response KeyWebhookHandler::deliveries(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "API key");
  own_key_revoked(ctx, id);
  pqxx::nontransaction txn(ctx.db());
  Json out = Json::array();
  for (const auto& r :
       txn.exec_prepared(kDeliveries.name, id, ctx.caller().account_id, limits::kDashboardDeliveriesListed))
    out.push_back({{"id", r[0].as<int64_t>()},
                   {"event", r[1].c_str()},
                   {"status", r[2].c_str()},
                   {"attempts", r[3].as<int>()},
                   {"last_status_code", r[4].is_null() ? Json(nullptr) : Json(r[4].as<int>())},
                   {"created_at", r[5].c_str()},
                   {"delivered_at", text_or_null(r[6])}});
  return Response::json(200, {{"deliveries", out}});
}

}  // namespace scribe::api::dashboard
