// Writes the `webhooks` table (inline), which GET /api/v1/webhooks reads: a
// registration, replacement or revocation shows in the same transaction as
// its event. Delivery health lives in the dispatcher's `webhook_health`.
#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kRevokeActive{"webhooks.revoke_active",
                                  "update webhooks set revoked_at = $2::timestamptz "
                                  "where key_id = $1 and revoked_at is null"};
const db::Statement kInsert{"webhooks.insert",
                            "insert into webhooks(id, account_id, key_id, url, events, created_at) "
                            "values ($1, $2, $3, $4, $5::jsonb, $6::timestamptz)"};

class WebhooksProjection final : public Projection {
 public:
  std::string name() const override { return "webhooks"; }
  std::vector<std::string> tables() const override { return {"webhooks"}; }
  bool is_inline() const override { return true; }
  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const auto& d = e.data;
    if (e.type == events::kWebhookRegistered) {
      const int64_t key_id = d.at("key_id").get<int64_t>();
      txn.exec_prepared(kRevokeActive.name, key_id, e.recorded_at);
      txn.exec_prepared(kInsert.name, d.at("webhook_id").get<int64_t>(), d.at("account_id").get<int64_t>(), key_id,
                        d.at("url").get<std::string>(), d.at("events").dump(), e.recorded_at);
    } else if (e.type == events::kWebhookRevoked) {
      txn.exec_prepared(kRevokeActive.name, d.at("key_id").get<int64_t>(), e.recorded_at);
    }
  }
};

}  // namespace

Projection& webhooks_projection() {
  static WebhooksProjection p;
  return p;
}

}  // namespace scribe::projections
