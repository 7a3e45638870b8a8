// GET /api/v1/me: the Account object of the caller.
#include "api/handlers/handlers.h"
#include "api/oauth/token_verifier.h"
#include "api/services.h"
#include "common/db.h"
#include "common/error.h"
#include "common/sql_time.h"
#include "domain/limits.h"
#include "domain/oauth.h"
#include "domain/plans.h"

namespace scribe::api {
namespace {

// The account and, for an API key, the key's name, month-to-date spend and
// creation time, in one autocommit statement: one round trip instead of a
// read-only transaction around two (BEGIN, two SELECTs, ROLLBACK).
// It also reads what Authenticator::check_key needs (digest, revoked,
// expired), so that a caller taken from the key cache is checked in this same
// statement (the route has handler_checks_key).
const db::Statement kMe{"me.read",
                        "select a.email, a.plan, a.balance_micros, k.id is not null, k.name, "
                        "coalesce(s.settled_micros, 0) + coalesce(s.held_micros, 0), "
                        SCRIBE_SQL_ISO_MS("k.created_at") ", "
                        "k.key_hash, k.revoked_at is not null, k.expires_at is not null and k.expires_at <= now(), "
                        "a.held_micros, a.open_holds "
                        "from accounts a left join api_keys k on k.id = $2 "
                        "left join key_monthly_spend s on s.key_id = k.id "
                        "and s.month = date_trunc('month', now() at time zone 'UTC')::date where a.id = $1"};
// The same for an OAuth access token: the account, the token's row with its
// grant (what oauth::TokenVerifier::check needs for a cached caller) and the
// client's name, in one statement. The columns line up with kMe's where they
// mean the same (3: the credential's row exists, 7-9: digest, revoked, expired).
const db::Statement kMeOAuth{"me.read_oauth",
                             "select a.email, a.plan, a.balance_micros, t.token_hash is not null, c.client_name, "
                             "null, null, t.token_hash, t.revoked_at is not null or g.revoked_at is not null, "
                             "t.expires_at <= now(), a.held_micros, a.open_holds "
                             "from accounts a "
                             "left join (oauth_tokens t join oauth_grants g on g.id = t.grant_id) "
                             "on t.token_hash = $2 and t.kind = 'access' and t.account_id = a.id "
                             "left join oauth_clients c on c.client_id = $3 where a.id = $1"};

}  // namespace

Response MeHandler::handle(RequestContext& ctx) {
  const Principal& p = ctx.caller();
  const bool oauth = p.kind == Principal::Kind::OAuth;
  pqxx::nontransaction txn(ctx.db());
  auto acc = oauth ? txn.exec_prepared(kMeOAuth.name, p.account_id, p.digest, p.oauth_client_id)
                   : txn.exec_prepared(kMe.name, p.account_id, *p.key_id);
  if (!p.verified) {
    const bool found = !acc.empty() && acc[0][3].as<bool>();
    const std::string stored = found ? acc[0][7].c_str() : "";
    const bool revoked = found && acc[0][8].as<bool>(), expired = found && acc[0][9].as<bool>();
    if (oauth) oauth::TokenVerifier::check(p, found, stored, revoked, expired);
    else Authenticator::check_key(p, found, stored, revoked, expired);
  }
  if (acc.empty())
    throw Error(oauth ? "unauthenticated" : "invalid_api_key",
                oauth ? "the access token's account no longer exists" : "the API key's account no longer exists");
  auto tier = plans::parse(acc[0][1].c_str()).value_or(plans::Tier::Free);
  auto pl = plans::limits_of(tier);
  const std::string& base = ctx.services.config.public_url;
  Json body = {
      {"user_id", p.account_id},
      {"email", acc[0][0].c_str()},
      {"wallet_balance_usd", money::to_usd(acc[0][2].as<int64_t>())},
      // What new work can spend (the figure a 402 speaks of): the balance
      // minus the holds of work in flight.
      {"wallet_available_usd", money::to_usd(acc[0][2].as<int64_t>() - acc[0][10].as<int64_t>())},
      {"wallet_held_usd", money::to_usd(acc[0][10].as<int64_t>())},
      {"open_holds", acc[0][11].as<int64_t>()},
      {"subscription_tier", plans::name(tier)},
      {"limits",
       {{"max_file_minutes", pl.max_file_minutes},
        {"max_upload_bytes", limits::kMaxUploadBytes},
        {"max_concurrent_jobs", pl.max_concurrent_jobs ? Json(*pl.max_concurrent_jobs) : Json(nullptr)}}},
      // The web console's pages (api/console/console.h kPages).
      {"links",
       {{"dashboard", base + "/app"},
        {"api_keys", base + "/app/account/keys"},
        {"billing", base + "/app/account/billing"},
        {"docs", base + "/app/docs"},
        {"support", base + "/app/support"}}},
  };
  if (p.kind == Principal::Kind::ApiKey) {
    Json block = {{"id", *p.key_id},
                  {"prefix", p.key_prefix},
                  {"permission", apikey::permission_name(p.permission)},
                  {"scopes", apikey::scopes(p.permission)},
                  {"monthly_cap_usd", p.monthly_cap ? Json(money::to_usd(*p.monthly_cap)) : Json(nullptr)},
                  {"month_to_date_spend_usd", 0.0},
                  {"expires_at", p.expires_at ? Json(to_iso8601(*p.expires_at)) : Json(nullptr)}};
    if (acc[0][3].as<bool>()) {
      block["name"] = acc[0][4].c_str();
      block["month_to_date_spend_usd"] = money::to_usd(acc[0][5].as<int64_t>());
      block["created_at"] = acc[0][6].c_str();
    }
    body["api_key"] = block;
  } else {
    // Who acts for the user: the app the person connected (its registered
    // name; the built-in console's is fixed).
    Json name = acc[0][4].is_null() ? Json(nullptr) : Json(acc[0][4].c_str());
    if (p.first_party) name = "Scribe web console";
    body["oauth"] = {{"client_id", p.oauth_client_id}, {"client_name", name}};
  }
  return Response::json(200, body);
}

}  // namespace scribe::api
