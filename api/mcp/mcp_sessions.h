#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>

// MCP 2025-11-25 sessions (migrations/056_mcp.sql): minted by initialize,
// required on every later request of that revision, ended by DELETE.
namespace scribe::api::mcp {

struct Session {
  std::string id;
  std::string protocol_version;
  std::string log_level;  // empty: none set (logging/setLevel)
};

// A new session of `principal` (Principal::idempotency_principal()); its id is
// 32 random alphanumerics after "mcp_" (visible ASCII, as the spec requires).
std::string open_session(pqxx::connection& conn, const std::string& principal, const std::string& protocol_version);
// The live session `id` of `principal`; nullopt when unknown, ended, or
// another principal's (never told apart: all are 404).
std::optional<Session> find_session(pqxx::connection& conn, const std::string& id, const std::string& principal);
// Ends it; false when there was no live session of that principal.
bool end_session(pqxx::connection& conn, const std::string& id, const std::string& principal);
void set_log_level(pqxx::connection& conn, const std::string& id, const std::string& level);

}  // namespace scribe::api::mcp
