#pragma once
#include <pqxx/pqxx>
#include <string>

namespace scribe::secrets {

// A named server-side secret (64 hex characters), created with OpenSSL's
// random generator by whichever process asks first and shared by all of them
// through the database, so derived values (callback secrets, upload URL
// signatures) agree across processes and restarts. Cached per process.
std::string get(pqxx::connection& conn, const std::string& name);

}  // namespace scribe::secrets
