// Operational endpoints: liveness, readiness and Prometheus metrics. They are
// public (no API key) and outside /api/v1, so no CORS and no rate limit;
// metrics are served on their own listener (metrics_listener.h).
#include "api/handlers/handlers.h"
#include "api/metrics.h"
#include "api/services.h"
#include "api/wait_registry.h"
#include "common/embedded_assets.h"
#include "eventstore/event_store.h"
#include "projections/runner.h"

#include <sstream>

namespace scribe::api {
namespace {
const db::Statement kMigrations{"health.migrations", "select count(*) from schema_migrations"};
// Counted on the partial index of pending deliveries, so a scrape stays cheap
// however many deliveries were ever made.
const db::Statement kWebhookBacklog{"health.webhook_backlog",
                                    "select count(*), count(*) filter (where next_attempt_at <= now()) "
                                    "from webhook_deliveries where status = 'pending'"};
}  // namespace

Response HealthzHandler::handle(RequestContext&) { return Response::json(200, {{"status", "ok"}}); }

Response ReadyzHandler::handle(RequestContext& ctx) {
  Json checks = Json::object();
  bool ready = true;
  try {
    pqxx::read_transaction txn(ctx.db());
    auto applied = txn.exec_prepared1(kMigrations.name)[0].as<int64_t>();
    auto expected = static_cast<int64_t>(assets::migrations().size());
    checks["database"] = "ok";
    checks["migrations"] = {{"applied", applied}, {"expected", expected}};
    if (applied != expected) ready = false;
  } catch (const std::exception& err) {
    checks["database"] = err.what();
    ready = false;
  }
  return Response::json(ready ? 200 : 503, {{"status", ready ? "ready" : "not_ready"}, {"checks", checks}});
}

Response MetricsHandler::handle(RequestContext& ctx) {
  std::ostringstream out;
  out << Metrics::instance().render();
  out << "# HELP scribe_events_appended_total Events appended by this process.\n"
      << "# TYPE scribe_events_appended_total counter\n"
      << "scribe_events_appended_total " << eventstore::EventStore::appended_total() << "\n";
  const auto group = eventstore::EventStore::group_commit_stats();
  out << "# HELP scribe_append_group_transactions_total Group-commit transactions written by this process.\n"
      << "# TYPE scribe_append_group_transactions_total counter\n"
      << "scribe_append_group_transactions_total " << group.batches << "\n"
      << "# HELP scribe_append_group_units_total Commands' appends written in them (units per transaction = "
         "units / transactions).\n"
      << "# TYPE scribe_append_group_units_total counter\n"
      << "scribe_append_group_units_total " << group.units << "\n"
      << "# HELP scribe_append_group_isolated_total Appends written again alone after their shared transaction "
         "failed.\n"
      << "# TYPE scribe_append_group_isolated_total counter\n"
      << "scribe_append_group_isolated_total " << group.isolated << "\n";
  out << "# HELP scribe_projection_lag_events Events not yet applied, per asynchronous projection.\n"
      << "# TYPE scribe_projection_lag_events gauge\n";
  try {
    pqxx::read_transaction txn(ctx.db());
    for (auto* p : projections::all())
      if (!p->is_inline())
        out << "scribe_projection_lag_events{projection=\"" << p->name() << "\"} " << projections::lag(txn, p->name())
            << "\n";
    auto backlog = txn.exec_prepared1(kWebhookBacklog.name);
    out << "# HELP scribe_webhook_deliveries_pending Webhook and callback deliveries not yet delivered or given up.\n"
        << "# TYPE scribe_webhook_deliveries_pending gauge\n"
        << "scribe_webhook_deliveries_pending " << backlog[0].as<int64_t>() << "\n"
        << "# HELP scribe_webhook_deliveries_due Pending deliveries whose next attempt is due now.\n"
        << "# TYPE scribe_webhook_deliveries_due gauge\n"
        << "scribe_webhook_deliveries_due " << backlog[1].as<int64_t>() << "\n";
  } catch (const std::exception&) {
    // The database being down shows in /readyz; the process metrics still render.
  }
  out << "# HELP scribe_auth_key_lookups_total API-key rows read to authenticate requests (refusals decided in "
         "memory read none).\n"
      << "# TYPE scribe_auth_key_lookups_total counter\n"
      << "scribe_auth_key_lookups_total " << ctx.services.authenticator.lookups() << "\n";
  out << "# HELP scribe_db_pool_in_use Database connections leased right now.\n"
      << "# TYPE scribe_db_pool_in_use gauge\n"
      << "scribe_db_pool_in_use " << ctx.services.pool.in_use() << "\n";
  if (ctx.services.waits)
    out << "# HELP scribe_long_polls_waiting Long-polls (GET .../wait, a clip's wait, MCP tools waiting in them) held "
           "right now, each without a thread.\n"
        << "# TYPE scribe_long_polls_waiting gauge\n"
        << "scribe_long_polls_waiting " << ctx.services.waits->size() << "\n";
  Response r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = out.str();
  return r;
}

}  // namespace scribe::api
