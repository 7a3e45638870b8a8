// Writes `oauth_clients`, `oauth_grants` and `oauth_consents` (inline), which
// the authorization server and token verification read: a revoked grant ends
// its tokens in the same transaction as its event, on every process (tokens
// are checked joined with their grant on every request).
#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kClientInsert{
    "oauth_clients.insert",
    "insert into oauth_clients(client_id, kind, client_name, redirect_uris, application_type, registered_at) "
    "values ($1, $2, $3, $4::jsonb, $5, $6::timestamptz) on conflict (client_id) do update set "
    "kind = excluded.kind, client_name = excluded.client_name, redirect_uris = excluded.redirect_uris, "
    "application_type = excluded.application_type, registered_at = excluded.registered_at, "
    "last_used_at = null, deleted_at = null"};
const db::Statement kClientUsed{"oauth_clients.used",
                                "update oauth_clients set last_used_at = $2::timestamptz where client_id = $1"};
const db::Statement kClientExpired{"oauth_clients.expired",
                                   "update oauth_clients set deleted_at = $2::timestamptz where client_id = $1"};
const db::Statement kGrantInsert{"oauth_grants.insert",
                                 "insert into oauth_grants(id, account_id, client_id, resources, created_at) "
                                 "values ($1, $2, $3, $4::text[], $5::timestamptz)"};
const db::Statement kGrantRevoke{
    "oauth_grants.revoke", "update oauth_grants set revoked_at = $2::timestamptz where id = $1 and revoked_at is null"};
const db::Statement kConsentInsert{"oauth_consents.insert",
                                   "insert into oauth_consents(account_id, client_id, granted_at) "
                                   "values ($1, $2, $3::timestamptz) on conflict do nothing"};
const db::Statement kConsentDelete{"oauth_consents.delete",
                                   "delete from oauth_consents where account_id = $1 and client_id = $2"};

class OAuthProjection final : public Projection {
 public:
  std::string name() const override { return "oauth"; }
  std::vector<std::string> tables() const override { return {"oauth_clients", "oauth_grants", "oauth_consents"}; }
  bool is_inline() const override { return true; }
  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const auto& d = e.data;
    if (e.type == events::kOAuthClientRegistered) {
      txn.exec_prepared(kClientInsert.name, d.at("client_id").get<std::string>(), d.at("kind").get<std::string>(),
                        optional_field<std::string>(d, "client_name"), d.at("redirect_uris").dump(),
                        d.at("application_type").get<std::string>(), e.recorded_at);
    } else if (e.type == events::kOAuthClientUsed) {
      txn.exec_prepared(kClientUsed.name, d.at("client_id").get<std::string>(), e.recorded_at);
    } else if (e.type == events::kOAuthClientExpired) {
      txn.exec_prepared(kClientExpired.name, d.at("client_id").get<std::string>(), e.recorded_at);
    } else if (e.type == events::kOAuthGrantIssued) {
      txn.exec_prepared(kGrantInsert.name, d.at("grant_id").get<int64_t>(), d.at("account_id").get<int64_t>(),
                        d.at("client_id").get<std::string>(),
                        db::text_array_literal(d.at("resources").get<std::vector<std::string>>()), e.recorded_at);
    } else if (e.type == events::kOAuthGrantRevoked) {
      txn.exec_prepared(kGrantRevoke.name, d.at("grant_id").get<int64_t>(), e.recorded_at);
    } else if (e.type == events::kOAuthConsentGiven) {
      txn.exec_prepared(kConsentInsert.name, d.at("account_id").get<int64_t>(), d.at("client_id").get<std::string>(),
                        e.recorded_at);
    } else if (e.type == events::kOAuthConsentWithdrawn) {
      txn.exec_prepared(kConsentDelete.name, d.at("account_id").get<int64_t>(), d.at("client_id").get<std::string>());
    }
  }
};

}  // namespace

Projection& oauth_projection() {
  static OAuthProjection p;
  return p;
}

}  // namespace scribe::projections
