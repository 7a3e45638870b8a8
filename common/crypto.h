#pragma once
#include <string>
#include <string_view>

// Hashing, signing and randomness: the one place that talks to OpenSSL.
namespace scribe::crypto {

std::string sha256_hex(std::string_view data);
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
// Cryptographically secure random characters from [0-9A-Za-z].
std::string random_alnum(std::size_t length);
std::string random_hex(std::size_t bytes);
// Compares without an early exit so the time taken does not reveal where the
// first difference is.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace scribe::crypto
