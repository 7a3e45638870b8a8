#pragma once
#include <memory>
#include <optional>
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

// base64url without padding (RFC 4648 section 5), as OAuth writes tokens and
// PKCE challenges.
std::string base64url(std::string_view raw);
// The bytes of a base64url text without padding; nullopt when it is not one.
std::optional<std::string> base64url_decode(std::string_view text);
// `bytes` random bytes, base64url-encoded (32 bytes: 43 characters).
std::string random_base64url(std::size_t bytes);
// The SHA-256 digest of data, base64url-encoded (PKCE S256, RFC 7636 4.2).
std::string sha256_base64url(std::string_view data);
// scrypt (RFC 7914) through OpenSSL's EVP_PBE_scrypt: `out_len` raw bytes.
// N = 2^log2_n. Throws std::runtime_error when OpenSSL refuses the parameters.
std::string scrypt(std::string_view password, std::string_view salt, int log2_n, int r, int p, std::size_t out_len);
// `bytes` random bytes, raw.
std::string random_raw(std::size_t bytes);

}  // namespace scribe::crypto
