#include "eventstore/migrator.h"

#include <stdexcept>

#include "common/crypto.h"
#include "common/embedded_assets.h"
#include "common/log.h"

namespace scribe::eventstore {

int migrate(pqxx::connection& conn) {
  {
    pqxx::work txn(conn);
    txn.exec("create extension if not exists pg_trgm");
    txn.exec("create extension if not exists btree_gin");
    txn.exec(
        "create table if not exists schema_migrations (version int primary key, name text not null, "
        "checksum text not null, applied_at timestamptz not null default now())");
    txn.commit();
  }
  int applied = 0;
  for (const auto& m : assets::migrations()) {
    int version = std::stoi(m.name.substr(0, m.name.find('_')));
    std::string checksum = crypto::sha256_hex(m.sql);
    pqxx::work txn(conn);
    txn.exec("select pg_advisory_xact_lock(hashtextextended('scribe:migrate', 0))");
    auto res = txn.exec_params("select checksum from schema_migrations where version = $1", version);
    if (!res.empty()) {
      if (res[0][0].c_str() != checksum)
        throw std::runtime_error("migration " + m.name + " was changed after it was applied");
      continue;
    }
    txn.exec(m.sql);
    txn.exec_params("insert into schema_migrations(version, name, checksum) values ($1, $2, $3)", version, m.name,
                    checksum);
    txn.commit();
    log::info("migration applied", {{"migration", m.name}});
    ++applied;
  }
  return applied;
}

}  // namespace scribe::eventstore
