#include "domain/signed_link.h"

#include "common/crypto.h"

namespace scribe::signed_link {

std::string signature(const std::string& secret, const std::string& scope, int64_t expires_unix) {
  return crypto::hmac_sha256_hex(secret, scope + ":" + std::to_string(expires_unix));
}

bool verify(const std::string& secret, const std::string& scope, int64_t expires_unix, const std::string& sig,
            int64_t now_unix) {
  if (expires_unix < now_unix) return false;
  return crypto::constant_time_equal(signature(secret, scope, expires_unix), sig);
}

}  // namespace scribe::signed_link
