#pragma once
#include <memory>
#include <string>
#include <string_view>

// Hashing, signing and randomness: the one place that talks to OpenSSL.
namespace scribe::crypto {

std::string sha256_hex(std::string_view data);
// SHA-256 of data that arrives in pieces (an upload hashed while it is
// written): update() any number of times, then hex() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  std::string hex();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
// Cryptographically secure random characters from [0-9A-Za-z].
std::string random_alnum(std::size_t length);
std::string random_hex(std::size_t bytes);
// Compares without an early exit so the time taken does not reveal where the
// first difference is.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace scribe::crypto
