#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cctype>
#include <stdexcept>

namespace scribe::crypto {
namespace {

std::string to_hex(const unsigned char* data, std::size_t len) {
  static const char digits[] = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (std::size_t i = 0; i < len; ++i) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 0xf];
  }
  return out;
}

void random_bytes(unsigned char* out, std::size_t len) {
  if (RAND_bytes(out, static_cast<int>(len)) != 1) throw std::runtime_error("RAND_bytes failed");
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_Digest failed");
  return to_hex(digest, len);
}

struct Sha256::Ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  if (!ctx_->md || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_DigestInit_ex failed");
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view data) {
  if (EVP_DigestUpdate(ctx_->md, data.data(), data.size()) != 1) throw std::runtime_error("EVP_DigestUpdate failed");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md, digest, &len) != 1) throw std::runtime_error("EVP_DigestFinal_ex failed");
  return to_hex(digest, len);
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), digest, &len))
    throw std::runtime_error("HMAC failed");
  return to_hex(digest, len);
}

std::string random_alnum(std::size_t length) {
  static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out;
  out.reserve(length);
  unsigned char buf[64];
  while (out.size() < length) {
    random_bytes(buf, sizeof buf);
    for (unsigned char b : buf) {
      // 62 * 4 = 248: rejecting bytes >= 248 keeps every character equally likely.
      if (b < 248 && out.size() < length) out.push_back(alphabet[b % 62]);
    }
  }
  return out;
}

std::string random_hex(std::size_t bytes) {
  const std::string raw = random_raw(bytes);
  return to_hex(reinterpret_cast<const unsigned char*>(raw.data()), bytes);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string base64url(std::string_view raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  out.resize(static_cast<std::size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+') c = '-';
    else if (c == '/') c = '_';
  }
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string padded(text);
  for (char& c : padded) {
    if (c == '-') c = '+';
    else if (c == '_') c = '/';
    else if (!std::isalnum(static_cast<unsigned char>(c))) return std::nullopt;
  }
  const std::size_t pad = (4 - padded.size() % 4) % 4;
  padded.append(pad, '=');
  std::string out(padded.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(padded.data()), static_cast<int>(padded.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding's zero bytes too.
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

std::string random_raw(std::size_t bytes) {
  std::string raw(bytes, '\0');
  random_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes);
  return raw;
}

std::string random_base64url(std::size_t bytes) { return base64url(random_raw(bytes)); }

std::string sha256_base64url(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_Digest failed");
  return base64url(std::string_view(reinterpret_cast<const char*>(digest), len));
}

std::string scrypt(std::string_view password, std::string_view salt, int log2_n, int r, int p, std::size_t out_len) {
  if (log2_n < 1 || log2_n > 30 || r < 1 || p < 1) throw std::runtime_error("scrypt: bad parameters");
  const uint64_t n = uint64_t{1} << log2_n;
  // 128 * r * N bytes of working memory, plus room for p lanes; OpenSSL's
  // default cap (32 MiB) refuses N = 2^15, r = 8 with nothing to spare.
  const uint64_t maxmem = 128 * static_cast<uint64_t>(r) * (n + static_cast<uint64_t>(p) + 2) + (1u << 20);
  std::string out(out_len, '\0');
  if (EVP_PBE_scrypt(password.data(), password.size(), reinterpret_cast<const unsigned char*>(salt.data()), salt.size(),
                     n, static_cast<uint64_t>(r), static_cast<uint64_t>(p), maxmem,
                     reinterpret_cast<unsigned char*>(out.data()), out_len) != 1)
    throw std::runtime_error("EVP_PBE_scrypt failed");
  return out;
}

}  // namespace scribe::crypto
