#include "api/mcp/mcp_sessions.h"

#include "common/crypto.h"
#include "common/db.h"

namespace scribe::api::mcp {
namespace {

const db::Statement kOpen{"mcp.open_session",
                          "insert into mcp_sessions(id, principal, protocol_version) values ($1, $2, $3)"};
// Touches the session as it reads it, and sweeps sessions ended a day ago.
const db::Statement kFind{"mcp.find_session",
                          "update mcp_sessions set last_seen_at = now() "
                          "where id = $1 and principal = $2 and ended_at is null "
                          "returning protocol_version, coalesce(log_level, '')"};
const db::Statement kEnd{"mcp.end_session",
                         "update mcp_sessions set ended_at = now() "
                         "where id = $1 and principal = $2 and ended_at is null"};
const db::Statement kSweep{"mcp.sweep_sessions", "delete from mcp_sessions where ended_at < now() - interval '1 day'"};
const db::Statement kLevel{"mcp.set_log_level", "update mcp_sessions set log_level = $2 where id = $1"};

}  // namespace

std::string open_session(pqxx::connection& conn, const std::string& principal, const std::string& protocol_version) {
  const std::string id = "mcp_" + crypto::random_alnum(32);
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kSweep.name);
  txn.exec_prepared(kOpen.name, id, principal, protocol_version);
  return id;
}

std::optional<Session> find_session(pqxx::connection& conn, const std::string& id, const std::string& principal) {
  pqxx::nontransaction txn(conn);
  auto r = txn.exec_prepared(kFind.name, id, principal);
  if (r.empty()) return std::nullopt;
  return Session{id, r[0][0].c_str(), r[0][1].c_str()};
}

bool end_session(pqxx::connection& conn, const std::string& id, const std::string& principal) {
  pqxx::nontransaction txn(conn);
  return txn.exec_prepared(kEnd.name, id, principal).affected_rows() > 0;
}

void set_log_level(pqxx::connection& conn, const std::string& id, const std::string& level) {
  pqxx::nontransaction txn(conn);
  txn.exec_prepared(kLevel.name, id, level);
}

}  // namespace scribe::api::mcp
