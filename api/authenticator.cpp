#include "api/authenticator.h"

#include <strings.h>

#include "common/crypto.h"
#include "common/db.h"
#include "common/error.h"

namespace scribe::api {
namespace {

const db::Statement kFindKey{"auth.find_key",
                             "select id, account_id, key_hash, permission, monthly_cap_micros, "
                             "to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
                             "revoked_at is not null, expires_at is not null and expires_at <= now(), key_prefix "
                             "from api_keys where key_hash = $1"};

Error invalid_key(const std::string& why) { return Error("invalid_api_key", why); }

}  // namespace

namespace {

// The token of a Bearer header, or the spec's 401 for a missing or malformed one.
std::string bearer_token(const Request& req) {
  auto header = req.header("authorization");
  if (!header || header->empty())
    throw Error("unauthenticated", "missing Authorization header; send 'Authorization: Bearer <API key>'");
  const std::string& h = *header;
  if (h.size() < 7 || strncasecmp(h.c_str(), "Bearer ", 7) != 0)
    throw Error("unauthenticated", "the Authorization header must use the Bearer scheme");
  std::string token = h.substr(7);
  while (!token.empty() && token.front() == ' ') token.erase(token.begin());
  while (!token.empty() && token.back() == ' ') token.pop_back();
  if (token.empty()) throw Error("unauthenticated", "the Bearer token is empty");
  return token;
}

// Keys cached at most; beyond it the cache starts over (it only saves reads).
constexpr std::size_t kMaxCachedKeys = 10000;

}  // namespace

Principal Authenticator::authenticate(pqxx::transaction_base& txn, const Request& req) const {
  std::string token = bearer_token(req);
  if (token.rfind("key_", 0) != 0) {
    if (oauth_)
      if (auto p = oauth_->verify(txn, token)) return *p;
    throw Error("unauthenticated", "the access token could not be verified");
  }
  if (!apikey::is_well_formed(token)) throw invalid_key("the API key is malformed");

  const std::string digest = apikey::hash(token);
  auto res = txn.exec_prepared(kFindKey.name, digest);
  if (res.empty()) throw invalid_key("the API key is not known");
  const auto& row = res[0];
  Principal p;
  p.key_digest = digest;
  check_key(p, true, row[2].c_str(), row[6].as<bool>(), row[7].as<bool>());
  p.kind = Principal::Kind::ApiKey;
  p.key_id = row[0].as<int64_t>();
  p.account_id = row[1].as<int64_t>();
  p.permission = apikey::parse_permission(row[3].c_str()).value_or(apikey::Permission::ReadOnly);
  if (!row[4].is_null()) p.monthly_cap = row[4].as<int64_t>();
  if (!row[5].is_null()) p.expires_at = parse_iso8601(row[5].c_str());
  p.key_prefix = row[8].c_str();
  {
    std::lock_guard lock(mu_);
    if (cache_.size() >= kMaxCachedKeys) cache_.clear();
    cache_[digest] = p;
  }
  return p;
}

std::optional<Principal> Authenticator::cached(const Request& req) const {
  std::string token = bearer_token(req);
  if (token.rfind("key_", 0) != 0 || !apikey::is_well_formed(token)) return std::nullopt;
  const std::string digest = apikey::hash(token);
  std::lock_guard lock(mu_);
  auto it = cache_.find(digest);
  if (it == cache_.end()) return std::nullopt;
  Principal p = it->second;
  p.verified = false;
  return p;
}

void Authenticator::check_key(const Principal& p, bool found, const std::string& stored_digest, bool revoked,
                              bool expired) {
  if (!found) throw invalid_key("the API key is not known");
  // The lookup is by hash or id; comparing again in constant time keeps the
  // check itself free of timing differences whatever the index does.
  if (!crypto::constant_time_equal(stored_digest, p.key_digest)) throw invalid_key("the API key is not known");
  if (revoked) throw invalid_key("the API key has been revoked");
  if (expired) throw invalid_key("the API key has expired");
}

}  // namespace scribe::api
