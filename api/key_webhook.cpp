#include "api/key_webhook.h"

#include "api/params.h"
#include "api/services.h"
#include "commands/webhook_commands.h"
#include "common/db.h"
#include "common/error.h"
#include "common/sql_time.h"
#include "common/url_policy.h"
#include "domain/limits.h"
#include "domain/webhook.h"

namespace scribe::api {
namespace {

const db::Statement kActive{
    "webhooks.view_active",
    "select w.id, w.url, w.events::text, coalesce(h.consecutive_failures, 0), " SCRIBE_SQL_ISO_MS("h.disabled_at")
    ", " SCRIBE_SQL_ISO_MS("h.last_delivery_at") ", " SCRIBE_SQL_ISO_MS("h.last_success_at") ", "
    SCRIBE_SQL_ISO_MS("w.created_at")
    " from webhooks w left join webhook_health h on h.webhook_id = w.id "
    "where w.key_id = $1 and w.account_id = $2 and w.revoked_at is null"};

constexpr std::size_t kMaxEventNames = 20;

Json text_or_null(const pqxx::field& f) { return f.is_null() ? Json(nullptr) : Json(f.c_str()); }

commands::Meta meta_of(const RequestContext& ctx) { return {ctx.caller().idempotency_principal(), ctx.request_id}; }

}  // namespace

Json key_webhook(RequestContext& ctx, int64_t key_id) {
  pqxx::read_transaction txn(ctx.db());
  auto res = txn.exec_prepared(kActive.name, key_id, ctx.caller().account_id);
  if (res.empty()) return nullptr;
  const auto& r = res[0];
  return {{"id", r[0].as<int64_t>()},
          {"url", r[1].c_str()},
          {"events", Json::parse(r[2].c_str())},
          {"consecutive_failures", r[3].as<int>()},
          {"disabled_at", text_or_null(r[4])},
          {"last_delivery_at", text_or_null(r[5])},
          {"last_success_at", text_or_null(r[6])},
          {"created_at", r[7].c_str()}};
}

Json register_key_webhook(RequestContext& ctx, int64_t key_id) {
  auto b = JsonBody::parse(ctx.req);
  auto url = *b.string("url", true, 1, limits::kCallbackUrlMaxLength);
  auto parsed = parse_http_url(url);
  if (!parsed || parsed->scheme != "https")
    throw Error::invalid("url", "url must be an absolute https URL of at most 2048 characters");
  auto kinds = webhook::normalize_events(b.string_array("events", false, kMaxEventNames));
  // The whole body is valid before the host is looked up: a bad `events` is
  // reported as such, not hidden behind a DNS failure (and costs no lookup).
  ctx.services.check_url(url, "url");
  auto created = commands::register_webhook(ctx.services.store, ctx.db(), ctx.caller().account_id, key_id, url, kinds,
                                            meta_of(ctx));
  Json body = key_webhook(ctx, key_id);
  if (body.is_null() || body["id"] != created.webhook_id)
    throw Error("internal_error", "the webhook was replaced by a concurrent request; read it again");
  body["signing_secret"] = created.signing_secret;
  return body;
}

void revoke_key_webhook(RequestContext& ctx, int64_t key_id) {
  if (!commands::revoke_webhook(ctx.services.store, ctx.db(), ctx.caller().account_id, key_id, meta_of(ctx)))
    throw Error::not_found("webhook");
}

}  // namespace scribe::api
