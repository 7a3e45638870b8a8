#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

// Who signs in on the /oauth pages: an account's email and the password set
// with `scribe admin set-password` (domain/password.h; operational rows of
// user_credentials), and the bound on failed attempts (oauth_sign_in_failures).
namespace scribe::api::oauth {

// Sets (or replaces) the password of the account with this email; throws
// 404 not_found for an unknown email, 400 invalid_request for a password the
// rules refuse. `log2_n`: the scrypt cost (Config::password_hash_cost_log2).
int64_t set_password(pqxx::connection& conn, const std::string& email, const std::string& password, int log2_n);

// The account whose email and password these are, or nullopt. An unknown
// email, an account without a password and a wrong password take the same
// time (a scrypt either way) and give the same answer.
std::optional<int64_t> check_password(pqxx::connection& conn, const std::string& email, const std::string& password,
                                      int log2_n);

// Failed sign-ins: whether the client address or the email has reached
// limits::kOAuthSignInFailuresMax in the last kOAuthSignInWindowSeconds, and
// recording one more failure for both.
bool sign_in_blocked(pqxx::connection& conn, const std::string& address, const std::string& email);
void record_sign_in_failure(pqxx::connection& conn, const std::string& address, const std::string& email);
// Removes failures older than the window (housekeeping).
int sweep_sign_in_failures(pqxx::connection& conn);

}  // namespace scribe::api::oauth
