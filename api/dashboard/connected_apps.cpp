#include "api/dashboard/connected_apps.h"

#include <algorithm>

#include "commands/oauth_commands.h"
#include "common/db.h"
#include "common/error.h"
#include "common/sql_time.h"
#include "domain/oauth.h"

namespace scribe::api::dashboard {
namespace {

// One row per live grant (oauth_grants_account index), oldest first; grouped
// by client below.
const db::Statement kGrants{"dashboard.connected_apps",
                            "select g.client_id, c.kind, c.client_name, coalesce(c.redirect_uris::text, '[]'), "
                            "g.resources, " SCRIBE_SQL_ISO_MS("g.created_at") ", "
                            SCRIBE_SQL_ISO_MS("(select max(t.created_at) from oauth_tokens t where t.grant_id = g.id)")
                            " from oauth_grants g left join oauth_clients c on c.client_id = g.client_id "
                            "where g.account_id = $1 and g.revoked_at is null and g.client_id <> $2 "
                            "order by g.created_at, g.id"};

// What a person recognizes of a redirect URI: its host (with port), or for
// a native app's private-use scheme the scheme.
std::string redirect_host(const std::string& uri) {
  const auto colon = uri.find(':');
  if (colon == std::string::npos) return uri;
  if (uri.compare(colon, 3, "://") != 0) return uri.substr(0, colon);
  const auto start = colon + 3;
  return uri.substr(start, uri.find_first_of("/?#", start) - start);
}

void add_unique(Json& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), Json(value)) == list.end()) list.push_back(value);
}

}  // namespace

Json list_connected_apps(pqxx::connection& conn, int64_t account_id) {
  pqxx::nontransaction txn(conn);
  Json apps = Json::array();
  for (const auto& r : txn.exec_prepared(kGrants.name, account_id, std::string(scribe::oauth::kConsoleClientId))) {
    const std::string client_id = r[0].c_str();
    auto it = std::find_if(apps.begin(), apps.end(), [&](const Json& a) { return a["client_id"] == client_id; });
    if (it == apps.end()) {
      Json hosts = Json::array();
      for (const auto& uri : Json::parse(r[3].c_str()))
        if (uri.is_string()) add_unique(hosts, redirect_host(uri.get<std::string>()));
      // A client without a row is one whose metadata document was never
      // recorded; its id says which kind it is.
      const std::string kind = !r[1].is_null() ? r[1].c_str() : client_id.rfind("https://", 0) == 0 ? "cimd" : "dcr";
      apps.push_back({{"client_id", client_id},
                      {"client_name", r[2].is_null() ? Json(nullptr) : Json(r[2].c_str())},
                      {"kind", kind},
                      {"redirect_hosts", hosts},
                      {"resources", Json::array()},
                      {"connected_at", r[5].c_str()},
                      {"last_token_at", nullptr},
                      {"grants", 0}});
      it = apps.end() - 1;
    }
    Json& app = *it;
    for (const auto& res : db::text_array(r[4])) add_unique(app["resources"], res);
    app["grants"] = app["grants"].get<int64_t>() + 1;
    if (!r[6].is_null() && (app["last_token_at"].is_null() || app["last_token_at"].get<std::string>() < r[6].c_str()))
      app["last_token_at"] = r[6].c_str();
  }
  return apps;
}

void disconnect_app(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                    const std::string& client_id, const commands::Meta& meta) {
  // The console is the person's own sign-in, not an app they connected.
  if (client_id == scribe::oauth::kConsoleClientId ||
      commands::revoke_client_for_account(store, conn, account_id, client_id, meta) == 0)
    throw Error::not_found("connected app");
}

}  // namespace scribe::api::dashboard
