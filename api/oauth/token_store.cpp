#include "api/oauth/token_store.h"

#include "commands/oauth_commands.h"
#include "common/db.h"
#include "domain/limits.h"
#include "domain/oauth.h"

namespace scribe::api::oauth {
namespace {

using scribe::oauth::CodeDecision;
using scribe::oauth::RefreshDecision;

// Times as microseconds since the epoch from the database's clock, so every
// process decides expiry on the same clock.
#define SCRIBE_SQL_MICROS(col) "(extract(epoch from " col ") * 1000000)::bigint"

const db::Statement kInsertCode{"oauth_codes.insert",
                                "insert into oauth_codes(code_hash, grant_id, account_id, client_id, redirect_uri, "
                                "code_challenge, resources, expires_at) "
                                "values ($1, $2, $3, $4, $5, $6, $7::text[], now() + make_interval(secs => $8))"};
const db::Statement kSelectCode{
    "oauth_codes.select",
    "select grant_id, account_id, client_id, redirect_uri, code_challenge, resources, " SCRIBE_SQL_MICROS(
        "expires_at") ", used_at is not null, " SCRIBE_SQL_MICROS("now()") " from oauth_codes where code_hash = $1"};
const db::Statement kSpendCode{"oauth_codes.spend",
                               "update oauth_codes set used_at = now() where code_hash = $1 and used_at is null"};
const db::Statement kInsertToken{"oauth_tokens.insert",
                                 "insert into oauth_tokens(token_hash, kind, grant_id, account_id, client_id, "
                                 "resources, expires_at, parent_hash) "
                                 "values ($1, $2, $3, $4, $5, $6::text[], now() + make_interval(secs => $7), $8)"};
const db::Statement kSelectRefresh{
    "oauth_tokens.select_refresh",
    "select t.client_id, " SCRIBE_SQL_MICROS("t.expires_at") ", t.revoked_at is not null, g.revoked_at is not null, "
    SCRIBE_SQL_MICROS("t.rotated_at") ", t.grant_id, t.account_id, t.resources, " SCRIBE_SQL_MICROS(
        "now()") " from oauth_tokens t join oauth_grants g on g.id = t.grant_id "
                 "where t.token_hash = $1 and t.kind = 'refresh' for update of t"};
const db::Statement kRotate{"oauth_tokens.rotate",
                            "update oauth_tokens set rotated_at = now() where token_hash = $1 and rotated_at is null"};
const db::Statement kChildRotated{"oauth_tokens.child_rotated",
                                  "select 1 from oauth_tokens where parent_hash = $1 and rotated_at is not null"};
const db::Statement kRevokeChildren{"oauth_tokens.revoke_children",
                                    "update oauth_tokens set revoked_at = now() where parent_hash = $1 "
                                    "and revoked_at is null"};
const db::Statement kSelectAny{"oauth_tokens.select_any",
                               "select kind, client_id, grant_id from oauth_tokens where token_hash = $1"};
const db::Statement kRevokeOne{
    "oauth_tokens.revoke_one",
    "update oauth_tokens set revoked_at = now() where token_hash = $1 and revoked_at is null"};
const db::Statement kSweepCodes{"oauth_codes.sweep",
                                "delete from oauth_codes where code_hash in (select code_hash from oauth_codes "
                                "where expires_at < now() - interval '1 day' limit 10000)"};
const db::Statement kSweepTokens{"oauth_tokens.sweep",
                                 "delete from oauth_tokens where token_hash in (select token_hash from oauth_tokens "
                                 "where expires_at < now() - interval '1 day' limit 10000)"};
const db::Statement kSweepSessions{"oauth_browser_sessions.sweep",
                                   "delete from oauth_browser_sessions where session_hash in (select session_hash "
                                   "from oauth_browser_sessions where expires_at < now() limit 10000)"};

TimePoint micros(const pqxx::field& f) { return from_unix_micros(f.as<int64_t>()); }

IssuedTokens insert_pair(pqxx::work& txn, int64_t grant_id, int64_t account_id, const std::string& client_id,
                         const std::vector<std::string>& access_resources,
                         const std::vector<std::string>& refresh_resources, const std::optional<std::string>& parent,
                         int access_ttl_seconds) {
  IssuedTokens t{scribe::oauth::generate_access_token(), scribe::oauth::generate_refresh_token(), access_ttl_seconds,
                 access_resources};
  txn.exec_prepared(kInsertToken.name, scribe::oauth::hash_secret(t.access_token), "access", grant_id, account_id,
                    client_id, db::text_array_literal(access_resources), access_ttl_seconds, parent);
  // The refresh token keeps the grant's resources, so a later refresh may
  // ask for any of them again (it narrows only the access token).
  txn.exec_prepared(kInsertToken.name, scribe::oauth::hash_secret(t.refresh_token), "refresh", grant_id, account_id,
                    client_id, db::text_array_literal(refresh_resources), limits::kOAuthRefreshTokenTtlSeconds, parent);
  return t;
}

}  // namespace

std::string store_code(pqxx::connection& conn, const CodeGrant& grant, int ttl_seconds) {
  const std::string code = scribe::oauth::generate_code();
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kInsertCode.name, scribe::oauth::hash_secret(code), grant.grant_id, grant.account_id,
                    grant.client_id, grant.redirect_uri, grant.code_challenge, db::text_array_literal(grant.resources),
                    ttl_seconds);
  return code;
}

CodeExchange exchange_code(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& code,
                           const scribe::oauth::CodeRequest& req, const NarrowResources& narrow, int access_ttl_seconds,
                           const commands::Meta& meta) {
  const std::string hash = scribe::oauth::hash_secret(code);
  CodeExchange out;
  auto reused = [&](int64_t grant_id) {
    out.decision = CodeDecision::Reused;
    out.error = ExchangeError::InvalidGrant;
    out.grant_id = grant_id;
    // OAuth 2.1 4.1.3: a code presented again means it leaked; what it
    // issued is revoked (the grant, so every token of it, at once).
    commands::revoke_grant(store, conn, grant_id, "code_reuse", meta);
    return out;
  };
  int64_t grant_id = 0;
  try {
    pqxx::work txn(conn);
    auto rows = txn.exec_prepared(kSelectCode.name, hash);
    std::optional<scribe::oauth::CodeRow> row;
    CodeGrant grant;
    TimePoint db_now = now();
    if (!rows.empty()) {
      const auto& r = rows[0];
      grant = {r[0].as<int64_t>(),     r[1].as<int64_t>(),     r[2].as<std::string>(),
               r[3].as<std::string>(), r[4].as<std::string>(), db::text_array(r[5])};
      row = scribe::oauth::CodeRow{grant.client_id, grant.redirect_uri, grant.code_challenge, micros(r[6]),
                                   r[7].as<bool>()};
      db_now = micros(r[8]);
      grant_id = grant.grant_id;
    }
    out.decision = scribe::oauth::decide_code(row, req, db_now);
    if (out.decision == CodeDecision::Reused) {
      txn.abort();
      return reused(grant_id);
    }
    if (out.decision != CodeDecision::Issue) return out;
    auto resources = narrow(grant.resources);
    if (!resources) {
      out.error = ExchangeError::InvalidTarget;
      return out;
    }
    // The grant's event first: an append must be the transaction's first
    // write. A concurrent exchange of the same code waits for this
    // transaction on the stream's lock, then finds the stream taken.
    store.append(txn, scribe::oauth::grant_stream(grant.grant_id), eventstore::ExpectedVersion::no_stream(),
                 {scribe::oauth::grant_issued(grant.grant_id, grant.account_id, grant.client_id, grant.resources)});
    if (txn.exec_prepared(kSpendCode.name, hash).affected_rows() != 1) {
      txn.abort();
      return reused(grant_id);
    }
    out.tokens = insert_pair(txn, grant.grant_id, grant.account_id, grant.client_id, *resources, grant.resources,
                             std::nullopt, access_ttl_seconds);
    eventstore::EventStore::commit(txn);
    out.error = ExchangeError::None;
    out.grant_id = grant.grant_id;
    return out;
  } catch (const eventstore::ConcurrencyError&) {
    out.tokens.reset();
    return reused(grant_id);
  }
}

RefreshExchange exchange_refresh(const eventstore::EventStore& store, pqxx::connection& conn,
                                 const std::string& refresh_token, const std::string& client_id,
                                 const NarrowResources& narrow, int access_ttl_seconds, const commands::Meta& meta) {
  RefreshExchange out;
  if (!scribe::oauth::is_refresh_token(refresh_token)) return out;  // Unknown
  const std::string hash = scribe::oauth::hash_secret(refresh_token);
  int64_t grant_id = 0;
  {
    pqxx::work txn(conn);
    auto rows = txn.exec_prepared(kSelectRefresh.name, hash);
    std::optional<scribe::oauth::RefreshRow> row;
    TimePoint db_now = now();
    int64_t account_id = 0;
    std::vector<std::string> held;
    if (!rows.empty()) {
      const auto& r = rows[0];
      row = scribe::oauth::RefreshRow{r[0].as<std::string>(), micros(r[1]), r[2].as<bool>(), r[3].as<bool>(),
                                      r[4].is_null() ? std::nullopt : std::optional<TimePoint>(micros(r[4]))};
      grant_id = r[5].as<int64_t>();
      account_id = r[6].as<int64_t>();
      held = db::text_array(r[7]);
      db_now = micros(r[8]);
    }
    out.decision =
        scribe::oauth::decide_refresh(row, client_id, db_now, std::chrono::seconds(limits::kOAuthRefreshGraceSeconds));
    // A retry in the grace whose first rotation was itself rotated already is
    // not a lost response: the client moved on, so this is a replay.
    if (out.decision == RefreshDecision::RetryInGrace && !txn.exec_prepared(kChildRotated.name, hash).empty())
      out.decision = RefreshDecision::Replayed;
    if (out.decision == RefreshDecision::Rotate || out.decision == RefreshDecision::RetryInGrace) {
      auto resources = narrow(held);
      if (!resources) {
        out.error = ExchangeError::InvalidTarget;
        return out;
      }
      if (out.decision == RefreshDecision::Rotate) txn.exec_prepared(kRotate.name, hash);
      else txn.exec_prepared(kRevokeChildren.name, hash);
      out.tokens = insert_pair(txn, grant_id, account_id, row->client_id, *resources, held, hash, access_ttl_seconds);
      txn.commit();
      out.error = ExchangeError::None;
      return out;
    }
  }
  // OAuth 2.1 4.3.1 / RFC 9700 4.14.2: a rotated refresh token presented
  // again after the grace: two parties hold it; end the grant.
  if (out.decision == RefreshDecision::Replayed) commands::revoke_grant(store, conn, grant_id, "refresh_reuse", meta);
  return out;
}

void revoke_token(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& token,
                  const std::string& client_id, const commands::Meta& meta) {
  if (!scribe::oauth::is_access_token(token) && !scribe::oauth::is_refresh_token(token)) return;
  const std::string hash = scribe::oauth::hash_secret(token);
  std::string kind;
  int64_t grant_id = 0;
  {
    pqxx::nontransaction txn(conn);
    auto rows = txn.exec_prepared(kSelectAny.name, hash);
    if (rows.empty() || rows[0][1].as<std::string>() != client_id) return;
    kind = rows[0][0].as<std::string>();
    grant_id = rows[0][2].as<int64_t>();
    txn.exec_prepared(kRevokeOne.name, hash);
  }
  // RFC 7009 2.1: revoking a refresh token ends the grant's access tokens too.
  if (kind == "refresh") commands::revoke_grant(store, conn, grant_id, "client", meta);
}

int sweep_expired(pqxx::connection& conn) {
  pqxx::nontransaction txn(conn);
  int n = 0;
  for (const auto* s : {&kSweepCodes, &kSweepTokens, &kSweepSessions})
    n += static_cast<int>(txn.exec_prepared(s->name).affected_rows());
  return n;
}

}  // namespace scribe::api::oauth
