#include "api/oauth/token_verifier.h"

#include "common/crypto.h"
#include "common/db.h"
#include "common/error.h"
#include "common/sql_time.h"
#include "domain/oauth.h"

namespace scribe::api::oauth {
namespace {

// By the token's primary key, its grant by the grant's: one round trip, two
// index probes. Only access tokens: a refresh token is never a Bearer
// credential.
const db::Statement kFindToken{"oauth.find_access_token",
                               "select t.token_hash, t.account_id, t.client_id, t.resources, "
                               SCRIBE_SQL_ISO_US("t.expires_at") ", "
                               "t.revoked_at is not null or g.revoked_at is not null, t.expires_at <= now() "
                               "from oauth_tokens t join oauth_grants g on g.id = t.grant_id "
                               "where t.token_hash = $1 and t.kind = 'access'"};

Error unauthenticated(const std::string& why) { return Error("unauthenticated", why); }

}  // namespace

std::optional<Principal> TokenVerifier::verify(pqxx::transaction_base& txn, const std::string& token) {
  // Not one this server could have issued: refused without a lookup.
  if (scribe::oauth::is_refresh_token(token))
    throw unauthenticated(
        "a refresh token is no Bearer credential; exchange it at the token endpoint for an access "
        "token");
  if (!scribe::oauth::is_access_token(token))
    throw unauthenticated(
        "the Bearer token is neither an API key (key_live_...) nor an access token this server issued");
  const std::string digest = scribe::oauth::hash_secret(token);
  ++lookups_;
  auto res = txn.exec_prepared(kFindToken.name, digest);
  if (res.empty()) return std::nullopt;
  const auto& row = res[0];
  Principal p;
  p.kind = Principal::Kind::OAuth;
  p.digest = digest;
  check(p, true, row[0].c_str(), row[5].as<bool>(), row[6].as<bool>());
  p.account_id = row[1].as<int64_t>();
  p.oauth_client_id = row[2].c_str();
  p.first_party = p.oauth_client_id == scribe::oauth::kConsoleClientId;
  p.resources = db::text_array(row[3]);
  p.expires_at = parse_iso8601(row[4].c_str());
  p.permission = apikey::Permission::Full;  // spec, Authentication 5: always full access
  return p;
}

void TokenVerifier::check(const Principal& p, bool found, const std::string& stored_digest, bool revoked,
                          bool expired) {
  if (!found) throw unauthenticated("the access token is not known");
  // Compared again in constant time whatever the index lookup did.
  if (!crypto::constant_time_equal(stored_digest, p.digest)) throw unauthenticated("the access token is not known");
  if (revoked)
    throw unauthenticated(
        "the access token has been revoked (the app was disconnected or signed out); authorize again");
  if (expired) throw unauthenticated("the access token has expired; use the refresh token or authorize again");
}

}  // namespace scribe::api::oauth
