#include "common/secrets.h"

#include <map>
#include <mutex>

#include "common/crypto.h"
#include "common/db.h"

namespace scribe::secrets {
namespace {

const db::Statement kInsert{"secrets.insert",
                            "insert into service_secrets(name, value) values ($1, $2) on conflict do nothing"};
const db::Statement kSelect{"secrets.select", "select value from service_secrets where name = $1"};

std::mutex mu;
std::map<std::string, std::string> cache;

}  // namespace

std::string get(pqxx::connection& conn, const std::string& name) {
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(name); it != cache.end()) return it->second;
  }
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kInsert.name, name, crypto::random_hex(32));
  std::string value = txn.exec_prepared1(kSelect.name, name)[0].c_str();
  std::lock_guard lock(mu);
  cache[name] = value;
  return value;
}

}  // namespace scribe::secrets
