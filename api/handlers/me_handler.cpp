// GET /api/v1/me: the Account object of the caller.
#include "api/handlers/handlers.h"
#include "api/services.h"
#include "common/db.h"
#include "common/error.h"
#include "domain/limits.h"
#include "domain/plans.h"

namespace scribe::api {
namespace {

const db::Statement kAccount{"me.account", "select email, plan, balance_micros from accounts where id = $1"};
const db::Statement kKey{"me.key",
                         "select k.name, coalesce(s.settled_micros, 0) + coalesce(s.held_micros, 0), "
                         "to_char(k.created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') "
                         "from api_keys k left join key_monthly_spend s on s.key_id = k.id "
                         "and s.month = date_trunc('month', now() at time zone 'UTC')::date where k.id = $1"};

}  // namespace

Response MeHandler::handle(RequestContext& ctx) {
  const Principal& p = ctx.caller();
  pqxx::read_transaction txn(ctx.db());
  auto acc = txn.exec_prepared(kAccount.name, p.account_id);
  if (acc.empty()) throw Error("invalid_api_key", "the API key's account no longer exists");
  auto tier = plans::parse(acc[0][1].c_str()).value_or(plans::Tier::Free);
  auto pl = plans::limits_of(tier);
  const std::string& base = ctx.services.config.public_url;
  Json body = {
      {"user_id", p.account_id},
      {"email", acc[0][0].c_str()},
      {"wallet_balance_usd", money::to_usd(acc[0][2].as<int64_t>())},
      {"subscription_tier", plans::name(tier)},
      {"limits",
       {{"max_file_minutes", pl.max_file_minutes},
        {"max_upload_bytes", limits::kMaxUploadBytes},
        {"max_concurrent_jobs", pl.max_concurrent_jobs ? Json(*pl.max_concurrent_jobs) : Json(nullptr)}}},
      {"links",
       {{"dashboard", base + "/dashboard"},
        {"api_keys", base + "/dashboard/api-keys"},
        {"billing", base + "/dashboard/billing"},
        {"docs", base + "/api/v1/openapi.yaml"},
        {"support", base + "/support"}}},
  };
  if (p.kind == Principal::Kind::ApiKey) {
    auto key = txn.exec_prepared(kKey.name, *p.key_id);
    Json block = {{"id", *p.key_id},
                  {"prefix", p.key_prefix},
                  {"permission", apikey::permission_name(p.permission)},
                  {"scopes", apikey::scopes(p.permission)},
                  {"monthly_cap_usd", p.monthly_cap ? Json(money::to_usd(*p.monthly_cap)) : Json(nullptr)},
                  {"month_to_date_spend_usd", 0.0},
                  {"expires_at", p.expires_at ? Json(to_iso8601(*p.expires_at)) : Json(nullptr)}};
    if (!key.empty()) {
      block["name"] = key[0][0].c_str();
      block["month_to_date_spend_usd"] = money::to_usd(key[0][1].as<int64_t>());
      block["created_at"] = key[0][2].c_str();
    }
    body["api_key"] = block;
  }
  return Response::json(200, body);
}

}  // namespace scribe::api
