#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "api/services.h"
#include "common/json.h"

// The clients the authorization server knows: DCR registrations and fetched
// client metadata documents (oauth_clients, written through
// commands/oauth_commands.h), and the built-in first-party console.
namespace scribe::api::oauth {

struct Client {
  std::string client_id;
  std::string kind;  // "dcr" | "cimd" | "first_party"
  std::optional<std::string> client_name;
  std::vector<std::string> redirect_uris;
  bool first_party() const { return kind == "first_party"; }
  // What the consent page calls it.
  std::string display_name() const { return client_name.value_or(client_id); }
};

// The client an authorization request names, or why there is none (shown on
// the error page, never redirected). A metadata-document client_id is
// fetched (or taken from the cache while its Cache-Control allows) under the
// outbound URL policy with no redirects, 200 only, at most 5 KiB in 5 s, its
// document checked (client_id equal to the URL, public client), and the
// client registered (again when its document changed). Deleted DCR clients
// are unknown.
struct ClientLookup {
  std::optional<Client> client;
  std::string error;  // when there is no client
};
ClientLookup client_for_authorization(Services& services, pqxx::connection& conn, const std::string& client_id);

// The client of a token, refresh or revocation request: no fetch (a
// metadata-document client was registered when it was authorized). nullopt:
// unknown or deleted (401 invalid_client: it must register or authorize again).
std::optional<Client> client_for_token(Services& services, pqxx::connection& conn, const std::string& client_id);

// The document at `url` as this server fetches it (Services::outbound, plus
// SCRIBE_OAUTH_CIMD_ALLOW_PRIVATE); throws HttpError on a transport or policy
// failure, and std::runtime_error naming the status or a body too large or
// not JSON. Returns the document and how long it may be cached.
struct FetchedDocument {
  Json document;
  int cache_seconds = 0;
};
FetchedDocument fetch_metadata_document(const Services& services, const std::string& url);

}  // namespace scribe::api::oauth
