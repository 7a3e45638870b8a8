// GET /dashboard/api/v1/usage[?month=YYYY-MM]: what the account spent in a
// calendar month (UTC; default the current one), for the console's usage page.
//
// Decisions (also in api/openapi.yaml):
//  - `charged_usd` and `deposited_usd` are the wallet ledger's charges
//    (transcriptions and clips) and deposits recorded in the month; the
//    ledger is an asynchronous read model, so a charge may show a moment
//    after its transcription completes.
//  - `transcriptions` counts those created in the month, with their billed
//    minutes and charges, in total, per API key, and for the OAuth apps
//    together (`apps`: transcriptions created with an access token carry no
//    key).
#include <algorithm>
#include <cctype>

#include "api/dashboard/dashboard.h"
#include "api/params.h"
#include "api/services.h"
#include "common/db.h"
#include "common/error.h"
#include "common/sql_time.h"

namespace scribe::api::dashboard {
namespace {

// $2: the month's first day ('YYYY-MM-01'), or null for the current month.
const db::Statement kUsage{
    "dashboard.usage",
    "with m as (select coalesce($2::date, date_trunc('month', now() at time zone 'UTC')::date) as first), "
    "r as (select (m.first::timestamp at time zone 'UTC') as lo, "
    "((m.first + interval '1 month')::timestamp at time zone 'UTC') as hi, m.first from m) "
    "select to_char(r.first, 'YYYY-MM'), " SCRIBE_SQL_ISO_S("r.lo") ", " SCRIBE_SQL_ISO_S("r.hi") ", "
    "a.balance_micros, a.held_micros, "
    "coalesce((select -sum(amount_micros) from wallet_ledger l where l.account_id = a.id and l.kind = 'charge' "
    "and l.recorded_at >= r.lo and l.recorded_at < r.hi), 0), "
    "coalesce((select sum(amount_micros) from wallet_ledger l where l.account_id = a.id and l.kind = 'deposit' "
    "and l.recorded_at >= r.lo and l.recorded_at < r.hi), 0) "
    "from accounts a, r where a.id = $1"};
// Per key (null: OAuth apps), transcriptions created in [lo, hi).
const db::Statement kByKey{
    "dashboard.usage_by_key",
    "select t.key_id, k.name, count(*), count(*) filter (where t.status = 'completed'), "
    "coalesce(sum(t.billed_seconds), 0), coalesce(sum(t.charge_micros), 0) "
    "from transcriptions t left join api_keys k on k.id = t.key_id "
    "where t.account_id = $1 and t.created_at >= $2::timestamptz and t.created_at < $3::timestamptz "
    "group by t.key_id, k.name order by t.key_id nulls last"};

Json counts(int64_t created, int64_t completed, int64_t billed_seconds, int64_t charged) {
  return {{"created", created},
          {"completed", completed},
          {"billed_minutes", static_cast<double>(billed_seconds) / 60.0},
          {"charged_usd", money::to_usd(charged)}};
}

// 'YYYY-MM' from the query as the month's first day, or nullopt for the current month.
std::optional<std::string> month_param(const RequestContext& ctx) {
  auto m = QueryParams(ctx.req).string("month", 16);
  if (!m) return std::nullopt;
  const bool ok = m->size() == 7 && (*m)[4] == '-' && std::all_of(m->begin(), m->begin() + 4, ::isdigit) &&
                  std::isdigit(static_cast<unsigned char>((*m)[5])) &&
                  std::isdigit(static_cast<unsigned char>((*m)[6]));
  const int month = ok ? std::stoi(m->substr(5)) : 0;
  const int year = ok ? std::stoi(m->substr(0, 4)) : 0;
  if (!ok || month < 1 || month > 12 || year < 2000)
    throw Error::invalid("month", "month must be YYYY-MM, for example 2026-11");
  return *m + "-01";
}

}  // namespace

Response UsageHandler::get(RequestContext& ctx) {
  const auto first = month_param(ctx);
  pqxx::nontransaction txn(ctx.db());
  auto u = txn.exec_prepared(kUsage.name, ctx.caller().account_id, first);
  if (u.empty()) throw Error::not_found("account");
  const auto& r = u[0];
  Json by_key = Json::array();
  Json apps = counts(0, 0, 0, 0);
  int64_t created = 0, completed = 0, billed = 0, charged = 0;
  for (const auto& k : txn.exec_prepared(kByKey.name, ctx.caller().account_id, r[1].c_str(), r[2].c_str())) {
    const int64_t c = k[2].as<int64_t>(), d = k[3].as<int64_t>(), s = k[4].as<int64_t>(), m = k[5].as<int64_t>();
    created += c, completed += d, billed += s, charged += m;
    if (k[0].is_null()) {
      apps = counts(c, d, s, m);
      continue;
    }
    Json row = counts(c, d, s, m);
    row["key_id"] = k[0].as<int64_t>();
    row["name"] = k[1].is_null() ? Json(nullptr) : Json(k[1].c_str());
    by_key.push_back(row);
  }
  const int64_t balance = r[3].as<int64_t>(), held = r[4].as<int64_t>();
  return Response::json(200, {{"month", r[0].c_str()},
                              {"from", r[1].c_str()},
                              {"to", r[2].c_str()},
                              {"wallet",
                               {{"balance_usd", money::to_usd(balance)},
                                {"held_usd", money::to_usd(held)},
                                {"available_usd", money::to_usd(balance - held)}}},
                              {"charged_usd", money::to_usd(r[5].as<int64_t>())},
                              {"deposited_usd", money::to_usd(r[6].as<int64_t>())},
                              {"transcriptions", counts(created, completed, billed, charged)},
                              {"by_key", by_key},
                              {"apps", apps}});
}

}  // namespace scribe::api::dashboard
