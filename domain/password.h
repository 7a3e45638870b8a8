#pragma once
#include <optional>
#include <string>
#include <string_view>

// Passwords of people signing in on the /oauth pages. Stored as
//   scrypt$<log2 N>$<r>$<p>$<base64url salt>$<base64url hash>
// (scrypt through OpenSSL's EVP_PBE_scrypt; 16-byte random salt, 32-byte
// output; N = 2^15, r = 8, p = 1 unless a test lowers N), so a stored hash
// says its own cost and keeps verifying when the default changes.
namespace scribe::password {

inline constexpr int kR = 8;
inline constexpr int kP = 1;
inline constexpr std::size_t kSaltBytes = 16;
inline constexpr std::size_t kHashBytes = 32;

// Why `password` may not be set (too short: fewer than
// limits::kPasswordMinChars code points; too long; not UTF-8; control
// characters), or nullopt.
std::optional<std::string> new_password_error(std::string_view password);

std::string hash(std::string_view password, int log2_n);
// Whether `password` is the one `stored` was made from; false for a stored
// value that is not of the format above (or asks for an absurd cost).
bool verify(std::string_view password, std::string_view stored);
// A hash of a random password at this cost (made once per process and
// cost): verified against when an email is unknown, so a wrong email costs
// as long as a wrong password and the answer tells nothing.
const std::string& dummy_hash(int log2_n);

}  // namespace scribe::password
