#include "domain/password.h"

#include <map>
#include <mutex>
#include <vector>

#include "common/crypto.h"
#include "common/text.h"
#include "domain/limits.h"

namespace scribe::password {
namespace {

// The highest cost a stored hash may ask for: 2^20 x 8 x 128 bytes is 1 GiB
// of memory; anything above is a damaged row, not a choice.
constexpr int kMaxLog2N = 20;

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

std::optional<int> small_int(const std::string& s) {
  if (s.empty() || s.size() > 2 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoi(s);
}

std::string encode(int log2_n, int r, int p, const std::string& salt, const std::string& derived) {
  return "scrypt$" + std::to_string(log2_n) + "$" + std::to_string(r) + "$" + std::to_string(p) + "$" +
         crypto::base64url(salt) + "$" + crypto::base64url(derived);
}

}  // namespace

std::optional<std::string> new_password_error(std::string_view password) {
  if (password.size() > static_cast<std::size_t>(limits::kPasswordMaxBytes))
    return "is longer than " + std::to_string(limits::kPasswordMaxBytes) + " bytes";
  if (!is_valid_utf8(password)) return "is not UTF-8";
  if (has_control_chars(password)) return "contains control characters";
  if (utf8_length(password) < static_cast<std::size_t>(limits::kPasswordMinChars))
    return "must be at least " + std::to_string(limits::kPasswordMinChars) + " characters";
  return std::nullopt;
}

std::string hash(std::string_view password, int log2_n) {
  const std::string salt = crypto::random_raw(kSaltBytes);
  return encode(log2_n, kR, kP, salt, crypto::scrypt(password, salt, log2_n, kR, kP, kHashBytes));
}

bool verify(std::string_view password, std::string_view stored) {
  const auto parts = split(stored, '$');
  if (parts.size() != 6 || parts[0] != "scrypt") return false;
  const auto log2_n = small_int(parts[1]), r = small_int(parts[2]), p = small_int(parts[3]);
  if (!log2_n || !r || !p || *log2_n < 1 || *log2_n > kMaxLog2N || *r < 1 || *r > 16 || *p < 1 || *p > 4) return false;
  const auto salt = crypto::base64url_decode(parts[4]);
  const auto expected = crypto::base64url_decode(parts[5]);
  if (!salt || !expected || salt->empty() || expected->size() != kHashBytes) return false;
  try {
    return crypto::constant_time_equal(crypto::scrypt(password, *salt, *log2_n, *r, *p, kHashBytes), *expected);
  } catch (const std::exception&) {
    return false;  // OpenSSL refused the parameters (memory)
  }
}

const std::string& dummy_hash(int log2_n) {
  static std::mutex mu;
  static std::map<int, std::string> made;
  std::lock_guard lock(mu);
  auto it = made.find(log2_n);
  if (it == made.end()) it = made.emplace(log2_n, hash(crypto::random_base64url(32), log2_n)).first;
  return it->second;
}

}  // namespace scribe::password
