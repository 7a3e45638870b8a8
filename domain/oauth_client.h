#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/json.h"

// Client metadata: a Dynamic Client Registration body (RFC 7591 2) and a
// Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document,
// the MCP authorization spec's "Client ID Metadata Documents") are checked by
// the same rules; only public clients (token_endpoint_auth_method "none")
// exist here. docs/oauth_wire_rules.md has the sources.
namespace scribe::oauth {

struct ClientMetadata {
  std::optional<std::string> client_name;
  std::vector<std::string> redirect_uris;
  std::vector<std::string> grant_types;     // defaults to authorization_code + refresh_token
  std::vector<std::string> response_types;  // ["code"]
  std::string application_type = "web";     // "web" | "native"
  std::optional<std::string> scope;         // as sent; every token gets the one scope anyway
  Json to_json() const;                     // the registered metadata as a registration response echoes it
};

// An RFC 7591 3.2.2 error: `invalid_redirect_uri` or `invalid_client_metadata`.
struct MetadataError {
  std::string error;
  std::string description;
};

using MetadataResult = std::variant<ClientMetadata, MetadataError>;

// A registration body (DCR).
MetadataResult check_registration(const Json& body);
// A fetched metadata document for the client id `url`: its `client_id` must
// equal `url` exactly, and no client secret may appear.
MetadataResult check_metadata_document(const Json& doc, std::string_view url);

// Whether `client_id` names a Client ID Metadata Document: an https URL with
// a path other than "/", no userinfo, no fragment, no dot segments, at most
// kOAuthClientIdMaxLength characters. Other client ids are DCR ids.
bool is_metadata_document_url(std::string_view client_id);

// How long a fetched metadata document is used before it is fetched again:
// the response's Cache-Control max-age, within
// [kOAuthCimdCacheMinSeconds, kOAuthCimdCacheMaxSeconds]; no-store, no-cache
// and max-age=0 give the minimum; no max-age gives kOAuthCimdCacheDefaultSeconds.
int cache_seconds(std::string_view cache_control);

}  // namespace scribe::oauth
