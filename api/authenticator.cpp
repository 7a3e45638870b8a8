#include "api/authenticator.h"

#include <strings.h>

#include <algorithm>

#include "common/crypto.h"
#include "common/db.h"
#include "common/error.h"
#include "common/sql_time.h"
#include "domain/limits.h"
#include "domain/oauth.h"

namespace scribe::api {
namespace {

const db::Statement kFindKey{"auth.find_key",
                             "select id, account_id, key_hash, permission, monthly_cap_micros, "
                             SCRIBE_SQL_ISO_US("expires_at") ", "
                             "revoked_at is not null, expires_at is not null and expires_at <= now(), key_prefix "
                             "from api_keys where key_hash = $1"};

Error invalid_key(const std::string& why) { return Error("invalid_api_key", why); }

bool is_key_token(const std::string& token) { return token.rfind("key_", 0) == 0; }

// The cache's and the unknown set's index: the SHA-256 the credential's row is
// found by (API keys and OAuth tokens alike).
std::string digest_of(const std::string& token) {
  return is_key_token(token) ? apikey::hash(token) : scribe::oauth::hash_secret(token);
}

Error not_known(const std::string& token) {
  return is_key_token(token) ? invalid_key("the API key is not known")
                             : Error("unauthenticated", "the access token is not known");
}

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

// The token of a request that presents one, else "" (no header, another
// scheme, an empty token: no authentication was attempted).
std::string presented_token(const Request& req) {
  try {
    return bearer_token(req);
  } catch (const Error&) {
    return {};
  }
}

// Addresses tracked at most by AuthFailures; beyond it the ones whose failures are all
// earned back are dropped, and if that is not enough the table starts over
// (an attacker spreading over this many addresses is not stopped by a
// per-address limit anyway).
constexpr std::size_t kMaxAddresses = 100000;
}  // namespace

AuthFailures::AuthFailures(int per_minute)
    : interval_(std::chrono::nanoseconds(std::chrono::minutes(1)) / std::max(1, per_minute)),
      window_(std::chrono::minutes(1)) {}

void AuthFailures::record(const std::string& address, Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (tat_.size() >= kMaxAddresses) {
    std::erase_if(tat_, [&](const auto& entry) { return entry.second <= now; });
    if (tat_.size() >= kMaxAddresses) tat_.clear();
  }
  auto& tat = tat_[address];
  // Never more than one window ahead: a flood earns no longer a wait than a
  // burst does, so Retry-After stays meaningful.
  tat = std::min(std::max(tat, now) + interval_, now + window_ + interval_);
}

int64_t AuthFailures::wait_seconds(const std::string& address, Clock::time_point now) const {
  std::lock_guard lock(mu_);
  auto it = tat_.find(address);
  if (it == tat_.end()) return 0;
  // Another failure would put the arrival time past the window: refused.
  auto over = it->second + interval_ - (now + window_);
  if (over <= Clock::duration::zero()) return 0;
  return std::max<int64_t>(1, (std::chrono::duration_cast<std::chrono::milliseconds>(over).count() + 999) / 1000);
}

Authenticator::Authenticator(OAuthVerifier* oauth) : oauth_(oauth), failures_(limits::kAuthFailuresPerMinute) {}

void Authenticator::screen(const Request& req) const {
  std::string token = bearer_token(req);
  const bool is_key = is_key_token(token);
  if (is_key && !apikey::is_well_formed(token)) throw invalid_key("the API key is malformed");
  const std::string digest = digest_of(token);
  if (int64_t wait = failures_.wait_seconds(req.remote); wait > 0) {
    std::lock_guard lock(mu_);
    // A credential this process has authenticated goes on (its row is still
    // read, so a revoked one is refused); anything else waits, unread.
    if (!cache_.contains(digest))
      throw Error("rate_limited",
                  "more than " + std::to_string(limits::kAuthFailuresPerMinute) +
                      " failed authentications per minute from this address; retry after " + std::to_string(wait) +
                      " s",
                  {{"retry_after", wait}});
  }
  std::lock_guard lock(mu_);
  auto it = unknown_.find(digest);
  if (it == unknown_.end()) return;
  if (std::chrono::steady_clock::now() < it->second) throw not_known(token);
  unknown_.erase(it);
}

void Authenticator::record_failure(const Request& req) const {
  std::string token = presented_token(req);
  if (token.empty()) return;
  failures_.record(req.remote);
  if (is_key_token(token) && !apikey::is_well_formed(token)) return;
  std::lock_guard lock(mu_);
  cache_.erase(digest_of(token));
}

void Authenticator::remember_unknown(const std::string& digest) const {
  std::lock_guard lock(mu_);
  if (unknown_.size() >= kMaxCachedKeys) unknown_.clear();
  unknown_[digest] = std::chrono::steady_clock::now() + std::chrono::seconds(limits::kUnknownKeyCacheSeconds);
}

void Authenticator::remember(const Principal& p) const {
  std::lock_guard lock(mu_);
  if (cache_.size() >= kMaxCachedKeys) cache_.clear();
  cache_[p.digest] = p;
}

Principal Authenticator::authenticate(pqxx::transaction_base& txn, const Request& req) const {
  std::string token = bearer_token(req);
  if (!is_key_token(token)) {
    if (!oauth_) throw Error("unauthenticated", "the access token could not be verified");
    // The verifier throws for a token it knows to be invalid (revoked,
    // expired) and answers nullopt for one it does not know.
    auto p = oauth_->verify(txn, token);
    if (!p) {
      remember_unknown(digest_of(token));
      throw not_known(token);
    }
    if (!p->digest.empty()) remember(*p);
    return *p;
  }
  if (!apikey::is_well_formed(token)) throw invalid_key("the API key is malformed");

  const std::string digest = apikey::hash(token);
  ++lookups_;
  auto res = txn.exec_prepared(kFindKey.name, digest);
  if (res.empty()) {
    remember_unknown(digest);
    throw invalid_key("the API key is not known");
  }
  const auto& row = res[0];
  Principal p;
  p.digest = digest;
  check_key(p, true, row[2].c_str(), row[6].as<bool>(), row[7].as<bool>());
  p.kind = Principal::Kind::ApiKey;
  p.key_id = row[0].as<int64_t>();
  p.account_id = row[1].as<int64_t>();
  p.permission = apikey::parse_permission(row[3].c_str()).value_or(apikey::Permission::ReadOnly);
  if (!row[4].is_null()) p.monthly_cap = row[4].as<int64_t>();
  if (!row[5].is_null()) p.expires_at = parse_iso8601(row[5].c_str());
  p.key_prefix = row[8].c_str();
  remember(p);
  return p;
}

std::optional<Principal> Authenticator::cached(const Request& req) const {
  std::string token = bearer_token(req);
  if (is_key_token(token) && !apikey::is_well_formed(token)) return std::nullopt;
  const std::string digest = digest_of(token);
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
  if (!crypto::constant_time_equal(stored_digest, p.digest)) throw invalid_key("the API key is not known");
  if (revoked) throw invalid_key("the API key has been revoked");
  if (expired) throw invalid_key("the API key has expired");
}

}  // namespace scribe::api
