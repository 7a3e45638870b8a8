#include "api/upload_store.h"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string_view>
#include <vector>

#include "common/db.h"
#include "common/error.h"
#include "common/object_store.h"
#include "common/time.h"

namespace scribe::api::uploads {
namespace fs = std::filesystem;
namespace {

const db::Statement kSelect{"uploads.select",
                            "select account_id, kind, filename, content_type, declared_size, received_bytes, "
                            "resume_token_hash, extract(epoch from expires_at)::bigint, completed_at is not null "
                            "from uploads where id = $1"};
const db::Statement kInsert{"uploads.insert",
                            "insert into uploads(id, account_id, kind, filename, content_type, declared_size, "
                            "received_bytes, resume_token_hash, expires_at) "
                            "values ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9))"};
const db::Statement kSetReceived{"uploads.set_received",
                                 "update uploads set received_bytes = $2 where id = $1 and completed_at is null"};
const db::Statement kComplete{"uploads.complete",
                              "update uploads set received_bytes = $2, completed_at = now() "
                              "where id = $1 and completed_at is null returning id"};
const db::Statement kIncomplete{"uploads.incomplete", "update uploads set completed_at = null where id = $1"};
const db::Statement kDelete{"uploads.delete", "delete from uploads where id = $1"};
// The partial index uploads_unfinished_expiry serves both statements.
const db::Statement kExpired{"uploads.expired",
                             "select id, kind from uploads where completed_at is null "
                             "and expires_at < now() - make_interval(secs => $1) order by expires_at limit $2"};
const db::Statement kDeleteExpired{"uploads.delete_expired",
                                   "delete from uploads where id = any($1::text[]) and completed_at is null "
                                   "and expires_at < now() - make_interval(secs => $2)"};

template <typename T>
std::optional<T> opt(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<T>();
}

}  // namespace

int64_t unix_now() { return to_unix_micros(now()) / 1'000'000; }

std::optional<Row> load(pqxx::connection& conn, const std::string& id) {
  pqxx::nontransaction txn(conn);
  auto r = txn.exec_prepared(kSelect.name, id);
  if (r.empty()) return std::nullopt;
  Row row;
  row.id = id;
  row.account_id = r[0][0].as<int64_t>();
  row.kind = r[0][1].c_str();
  row.filename = opt<std::string>(r[0][2]);
  row.content_type = opt<std::string>(r[0][3]);
  row.declared_size = r[0][4].as<int64_t>();
  row.received_bytes = r[0][5].as<int64_t>();
  row.resume_token_hash = opt<std::string>(r[0][6]);
  row.expires_unix = r[0][7].as<int64_t>();
  row.completed = r[0][8].as<bool>();
  return row;
}

void insert(pqxx::connection& conn, const Row& row) {
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kInsert.name, row.id, row.account_id, row.kind, row.filename, row.content_type, row.declared_size,
                    row.received_bytes, row.resume_token_hash, row.expires_unix);
}

void set_received(pqxx::connection& conn, const std::string& id, int64_t received_bytes) {
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kSetReceived.name, id, received_bytes);
}

bool mark_completed(pqxx::connection& conn, const std::string& id, int64_t received_bytes) {
  pqxx::nontransaction txn(conn);
  return !txn.exec_prepared(kComplete.name, id, received_bytes).empty();
}

void mark_incomplete(pqxx::connection& conn, const std::string& id) {
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kIncomplete.name, id);
}

void remove(pqxx::connection& conn, const std::string& id) {
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kDelete.name, id);
}

namespace {
std::string& staging_root() {
  static std::string root;
  return root;
}
}  // namespace

void configure_staging(const std::string& work_dir) {
  fs::path d = fs::path(work_dir) / "staging";
  fs::create_directories(d / "tus");
  fs::create_directories(d / "presigned");
  staging_root() = d.string();
}

std::string staging_dir() {
  const std::string& dir = staging_root();
  if (dir.empty()) throw std::logic_error("upload staging is not configured (configure_staging at start-up)");
  return dir;
}

int sweep_expired(pqxx::connection& conn, int64_t grace_seconds, int batch) {
  std::vector<std::string> ids;
  std::set<std::string> presigned;
  {
    pqxx::nontransaction txn(conn);
    for (const auto& r : txn.exec_prepared(kExpired.name, grace_seconds, batch)) {
      ids.emplace_back(r[0].c_str());
      if (std::string_view(r[1].c_str()) == "presigned") presigned.insert(ids.back());
    }
  }
  if (ids.empty()) return 0;
  std::error_code ec;
  for (const auto& id : ids)
    if (id.rfind("tus/", 0) == 0) fs::remove(tus_staging_file(id.substr(4)), ec);
  // A presigned PUT streams into "<id>.<random>"; the handler removes its file
  // when it ends, so only a process killed mid-PUT leaves one behind.
  if (!presigned.empty()) {
    for (const auto& entry : fs::directory_iterator(fs::path(staging_dir()) / "presigned", ec)) {
      std::string name = entry.path().filename().string();
      auto dot = name.rfind('.');
      if (dot != std::string::npos && presigned.count(name.substr(0, dot))) fs::remove(entry.path(), ec);
    }
  }
  pqxx::nontransaction txn(conn);
  std::string array = "{";
  for (const auto& id : ids) {
    if (array.size() > 1) array += ',';
    array += '"' + id + '"';  // ids are upl_<hex> or tus/<hex>: nothing to escape
  }
  array += '}';
  return static_cast<int>(txn.exec_prepared(kDeleteExpired.name, array, grace_seconds).affected_rows());
}

void require_completed(pqxx::connection& conn, int64_t account_id, const std::string& id) {
  auto row = load(conn, id);
  if (!row || row->account_id != account_id)
    throw Error::invalid("upload_id", "upload_id '" + id + "' is not an upload of this account");
  if (!row->completed)
    throw Error::invalid("upload_id", "upload '" + id + "' is not complete: " + std::to_string(row->received_bytes) +
                                          " of " + std::to_string(row->declared_size) + " bytes received");
}

}  // namespace scribe::api::uploads
