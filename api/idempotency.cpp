#include "api/idempotency.h"

#include "api/params.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/text.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

const db::Statement kClaim{"idempotency.claim",
                           "insert into idempotency_keys(principal, key, method, path, body_hash) "
                           "values ($1, $2, $3, $4, $5) on conflict do nothing"};
const db::Statement kLookup{"idempotency.lookup",
                            "select method, path, body_hash, completed_at is not null, response_status, "
                            "response_headers::text, response_body, "
                            "extract(epoch from (now() - created_at))::float8 "
                            "from idempotency_keys where principal = $1 and key = $2"};
const db::Statement kExpire{"idempotency.expire",
                            "delete from idempotency_keys where principal = $1 and key = $2 "
                            "and created_at < now() - make_interval(secs => $3)"};
const db::Statement kPurge{"idempotency.purge",
                           "delete from idempotency_keys where ctid = any(array(select ctid from idempotency_keys "
                           "where created_at < now() - make_interval(secs => $1) limit $2))"};
const db::Statement kStore{"idempotency.store",
                           "update idempotency_keys set completed_at = now(), response_status = $3, "
                           "response_headers = $4::jsonb, response_body = $5, reveals = $6 "
                           "where principal = $1 and key = $2 and completed_at is null"};
const db::Statement kRelease{"idempotency.release",
                             "delete from idempotency_keys where principal = $1 and key = $2 and completed_at is null"};
const db::Statement kForget{"idempotency.forget",
                            "delete from idempotency_keys where principal = $1 and key = $2 "
                            "and completed_at is not null and response_body = $3"};

// Headers that describe this particular delivery, not the stored result.
bool replayable_header(const std::string& name) {
  const std::string n = to_lower(name);
  return n != "x-request-id" && n.rfind("access-control-", 0) != 0 && n != "idempotent-replayed";
}

void store(pqxx::transaction_base& txn, const std::string& principal, const std::string& key, const Response& res,
           const std::optional<std::string>& reveals) {
  Json headers = Json::object();
  headers["content-type"] = res.content_type;
  for (const auto& [k, v] : res.headers)
    if (replayable_header(k)) headers[k] = v;
  txn.exec_prepared(kStore.name, principal, key, res.status, headers.dump(), res.body, reveals);
}

}  // namespace

std::string Idempotency::body_fingerprint(const std::string& body) {
  try {
    // Parsed and dumped again: whitespace goes and keys come out sorted.
    return "json1:" + crypto::sha256_hex(parse_json_strictly(body).dump());
  } catch (const Error&) {
    return crypto::sha256_hex(body);  // not JSON the API would accept: the bytes themselves
  }
}

int Idempotency::purge_expired(pqxx::connection& conn, int batch) {
  pqxx::nontransaction txn(conn);
  return static_cast<int>(txn.exec_prepared(kPurge.name, limits::kIdempotencyTtlSeconds, batch).affected_rows());
}

void Idempotency::validate_key(const std::string& key) {
  if (key.empty() || key.size() > static_cast<std::size_t>(limits::kIdempotencyKeyMaxLength))
    throw Error::invalid("Idempotency-Key", "Idempotency-Key must be 1-" +
                                                std::to_string(limits::kIdempotencyKeyMaxLength) + " characters");
  if (has_control_chars(key)) throw Error::invalid("Idempotency-Key", "Idempotency-Key has control characters");
  if (!is_valid_utf8(key)) throw Error::invalid("Idempotency-Key", "Idempotency-Key is not UTF-8");
}

Idempotency::Outcome Idempotency::begin(pqxx::connection& conn, const std::string& principal, const std::string& key,
                                        const Request& req) {
  // Entries stored before fingerprints were canonical hold the bare SHA-256
  // of the bytes; for their remaining 24 h the same bytes still replay.
  return claim(conn, principal, key, req.method, req.path, body_fingerprint(req.body), crypto::sha256_hex(req.body));
}

Idempotency::Outcome Idempotency::begin_fingerprinted(pqxx::connection& conn, const std::string& principal,
                                                      const std::string& key, const std::string& method,
                                                      const std::string& path, const std::string& fingerprint) {
  return claim(conn, principal, key, method, path, fingerprint, fingerprint);
}

Idempotency::Outcome Idempotency::claim(pqxx::connection& conn, const std::string& principal, const std::string& key,
                                        const std::string& method, const std::string& path,
                                        const std::string& body_hash, const std::string& also_accepted) {
  validate_key(key);
  for (int attempt = 0; attempt < 3; ++attempt) {
    pqxx::nontransaction txn(conn);
    txn.exec_prepared(kExpire.name, principal, key, limits::kIdempotencyTtlSeconds);
    if (txn.exec_prepared(kClaim.name, principal, key, method, path, body_hash).affected_rows() == 1) return Proceed{};
    auto res = txn.exec_prepared(kLookup.name, principal, key);
    if (res.empty()) continue;  // released between our claim and lookup; try again
    const auto& row = res[0];
    if (row[0].c_str() != method || row[1].c_str() != path)
      throw Error::invalid("Idempotency-Key", "this Idempotency-Key was used for " + std::string(row[0].c_str()) + " " +
                                                  row[1].c_str() + "; use a new key for a different endpoint");
    if (row[2].c_str() != body_hash && row[2].c_str() != also_accepted)
      throw Error::invalid("Idempotency-Key",
                           "this Idempotency-Key was used with a different request body; use a new key");
    if (!row[3].as<bool>()) {
      double age = row[7].as<double>();
      Json extras = {{"in_flight_seconds", static_cast<int64_t>(age)}};
      if (age >= limits::kIdempotencyStaleSeconds) extras["stale"] = true;
      throw Error("not_ready", "a request with this Idempotency-Key is still in flight", extras);
    }
    Response r;
    r.status = row[4].as<int>();
    r.body = row[6].c_str();
    Json headers = Json::parse(row[5].c_str());
    r.content_type = headers.value("content-type", "application/json; charset=utf-8");
    for (auto& [k, v] : headers.items())
      if (k != "content-type") r.headers.emplace_back(k, v.get<std::string>());
    r.set_header("Idempotent-Replayed", "true");
    return r;
  }
  throw Error("internal_error", "could not claim the Idempotency-Key; retry");
}

void Idempotency::release(pqxx::connection& conn, const std::string& principal, const std::string& key) {
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kRelease.name, principal, key);
}

bool Idempotency::forget(pqxx::connection& conn, const std::string& principal, const std::string& key,
                         const std::string& stored_body) {
  pqxx::nontransaction txn(conn);
  return txn.exec_prepared(kForget.name, principal, key, stored_body).affected_rows() == 1;
}

void Idempotency::finish(pqxx::connection& conn, const std::string& principal, const std::string& key,
                         const Response& res) {
  pqxx::nontransaction txn(conn);
  if (res.status >= 500) {
    txn.exec_prepared(kRelease.name, principal, key);
    return;
  }
  store(txn, principal, key, res, std::nullopt);
}

void Idempotency::finish(pqxx::transaction_base& txn, const std::string& principal, const std::string& key,
                         const Response& res, const std::string& reveals) {
  if (res.status >= 500) throw Error("internal_error", "a 5xx response is never stored for replay");
  store(txn, principal, key, res, reveals);
}

}  // namespace scribe::api
