// Writes the `api_keys` table (inline), which authentication reads: a new key
// works and a revoked key stops in the same transaction as the event.
#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{"api_keys.insert",
                            "insert into api_keys(id, account_id, name, key_hash, key_prefix, permission, "
                            "monthly_cap_micros, expires_at, created_at) "
                            "values ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9::timestamptz)"};
const db::Statement kRevoke{"api_keys.revoke",
                            "update api_keys set revoked_at = $2::timestamptz where id = $1 and revoked_at is null"};

class ApiKeysProjection final : public Projection {
 public:
  std::string name() const override { return "api_keys"; }
  std::vector<std::string> tables() const override { return {"api_keys"}; }
  bool is_inline() const override { return true; }
  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const auto& d = e.data;
    if (e.type == events::kApiKeyCreated) {
      std::optional<int64_t> cap;
      if (!d.at("monthly_cap_micros").is_null()) cap = d.at("monthly_cap_micros").get<int64_t>();
      std::optional<std::string> expires;
      if (!d.at("expires_at").is_null()) expires = d.at("expires_at").get<std::string>();
      txn.exec_prepared(kInsert.name, d.at("key_id").get<int64_t>(), d.at("account_id").get<int64_t>(),
                        d.at("name").get<std::string>(), d.at("key_hash").get<std::string>(),
                        d.at("key_prefix").get<std::string>(), d.at("permission").get<std::string>(), cap, expires,
                        e.recorded_at);
    } else if (e.type == events::kApiKeyRevoked) {
      txn.exec_prepared(kRevoke.name, d.at("key_id").get<int64_t>(), e.recorded_at);
    }
  }
};

}  // namespace

Projection& api_keys_projection() {
  static ApiKeysProjection p;
  return p;
}

}  // namespace scribe::projections
