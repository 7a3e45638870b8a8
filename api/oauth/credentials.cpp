#include "api/oauth/credentials.h"

#include "common/db.h"
#include "common/error.h"
#include "common/text.h"
#include "domain/limits.h"
#include "domain/password.h"

namespace scribe::api::oauth {
namespace {

const db::Statement kAccountByEmail{"oauth_credentials.account_by_email",
                                    "select id from accounts where lower(email) = lower($1)"};
const db::Statement kUpsert{
    "oauth_credentials.upsert",
    "insert into user_credentials(account_id, password_hash, updated_at) values ($1, $2, now()) "
    "on conflict (account_id) do update set password_hash = excluded.password_hash, "
    "updated_at = now()"};
const db::Statement kHashByEmail{
    "oauth_credentials.hash_by_email",
    "select a.id, c.password_hash from accounts a "
    "left join user_credentials c on c.account_id = a.id where lower(a.email) = lower($1)"};
const db::Statement kFailures{"oauth_credentials.failures",
                              "select count(*) from oauth_sign_in_failures where bucket = any($1::text[]) "
                              "and failed_at > now() - make_interval(secs => $2) group by bucket "
                              "order by count(*) desc limit 1"};
const db::Statement kRecordFailure{"oauth_credentials.record_failure",
                                   "insert into oauth_sign_in_failures(bucket) select unnest($1::text[])"};
const db::Statement kSweepFailures{
    "oauth_credentials.sweep_failures",
    "delete from oauth_sign_in_failures where failed_at < now() - make_interval(secs => $1)"};

std::vector<std::string> buckets(const std::string& address, const std::string& email) {
  return {"addr:" + address, "email:" + to_lower(trim(email))};
}

}  // namespace

int64_t set_password(pqxx::connection& conn, const std::string& email, const std::string& password, int log2_n) {
  if (auto why = password::new_password_error(password)) throw Error::invalid("password", "the password " + *why);
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kAccountByEmail.name, email);
  if (r.empty()) throw Error::not_found("account with this email");
  const int64_t account = r[0][0].as<int64_t>();
  txn.exec_prepared(kUpsert.name, account, password::hash(password, log2_n));
  txn.commit();
  return account;
}

std::optional<int64_t> check_password(pqxx::connection& conn, const std::string& email, const std::string& password,
                                      int log2_n) {
  std::optional<int64_t> account;
  std::string stored;
  // No password that long can have been set; not worth a scrypt over it.
  if (password.size() > static_cast<std::size_t>(limits::kPasswordMaxBytes)) return std::nullopt;
  {
    pqxx::nontransaction txn(conn);
    auto r = txn.exec_prepared(kHashByEmail.name, std::string(trim(email)));
    if (!r.empty() && !r[0][1].is_null()) {
      account = r[0][0].as<int64_t>();
      stored = r[0][1].as<std::string>();
    }
  }
  // No such person: the same work against a hash nobody knows the password of.
  if (!account) {
    (void)password::verify(password, password::dummy_hash(log2_n));
    return std::nullopt;
  }
  if (!password::verify(password, stored)) return std::nullopt;
  return account;
}

bool sign_in_blocked(pqxx::connection& conn, const std::string& address, const std::string& email) {
  pqxx::nontransaction txn(conn);
  auto r = txn.exec_prepared(kFailures.name, db::text_array_literal(buckets(address, email)),
                             limits::kOAuthSignInWindowSeconds);
  return !r.empty() && r[0][0].as<int64_t>() >= limits::kOAuthSignInFailuresMax;
}

void record_sign_in_failure(pqxx::connection& conn, const std::string& address, const std::string& email) {
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kRecordFailure.name, db::text_array_literal(buckets(address, email)));
}

int sweep_sign_in_failures(pqxx::connection& conn) {
  pqxx::nontransaction txn(conn);
  return static_cast<int>(txn.exec_prepared(kSweepFailures.name, limits::kOAuthSignInWindowSeconds).affected_rows());
}

}  // namespace scribe::api::oauth
