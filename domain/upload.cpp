#include "domain/upload.h"

#include <cctype>
#include <ctime>
#include <vector>

#include "common/crypto.h"
#include "common/text.h"

namespace scribe::upload {
namespace {

constexpr const char* kContentTypes[] = {"audio/mpeg",  "audio/mp3",  "audio/wav",       "audio/m4a",      "audio/mp4",
                                         "audio/x-m4a", "audio/aac",  "audio/ogg",       "audio/webm",     "audio/flac",
                                         "video/mp4",   "video/webm", "video/quicktime", "video/x-msvideo"};

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string ticket_payload(const Ticket& t) {
  return "tus\n" + std::to_string(t.account_id) + "\n" + std::to_string(t.file_size) + "\n" +
         std::to_string(t.expires_unix);
}

bool is_token_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

}  // namespace

std::string media_type(std::string_view content_type) {
  // Only spaces and tabs are trimmed: a content_type given in a JSON body may
  // hold a line break, and such a type is refused rather than cleaned up.
  return to_lower(trim(content_type.substr(0, content_type.find(';')), " \t"));
}

bool is_allowed_content_type(std::string_view content_type) {
  const std::string type = media_type(content_type);
  for (const char* t : kContentTypes)
    if (type == t) return true;
  return false;
}

const char* allowed_content_types_text() {
  return "audio/mpeg, audio/mp3, audio/wav, audio/m4a, audio/mp4, audio/x-m4a, audio/aac, audio/ogg, audio/webm, "
         "audio/flac, video/mp4, video/webm, video/quicktime, video/x-msvideo";
}

std::string presigned_signature(std::string_view key, const PresignedFields& f) {
  return crypto::hmac_sha256_hex(key, "PUT\n" + f.upload_id + "\n" + f.content_type + "\n" +
                                          std::to_string(f.file_size) + "\n" + std::to_string(f.expires_unix) + "\n" +
                                          std::to_string(f.account_id));
}

bool verify_presigned(std::string_view key, const PresignedFields& f, std::string_view signature) {
  return crypto::constant_time_equal(presigned_signature(key, f), signature);
}

std::string make_ticket(std::string_view key, const Ticket& t) {
  return "v1." + std::to_string(t.account_id) + "." + std::to_string(t.file_size) + "." +
         std::to_string(t.expires_unix) + "." + crypto::hmac_sha256_hex(key, ticket_payload(t));
}

std::optional<Ticket> verify_ticket(std::string_view key, std::string_view token) {
  std::vector<std::string_view> parts;
  while (true) {
    auto dot = token.find('.');
    parts.push_back(token.substr(0, dot));
    if (dot == std::string_view::npos) break;
    token.remove_prefix(dot + 1);
  }
  if (parts.size() != 5 || parts[0] != "v1") return std::nullopt;
  auto account = parse_length(parts[1]), size = parse_length(parts[2]), expires = parse_length(parts[3]);
  if (!account || !size || !expires) return std::nullopt;
  Ticket t{*account, *size, *expires};
  if (!crypto::constant_time_equal(crypto::hmac_sha256_hex(key, ticket_payload(t)), parts[4])) return std::nullopt;
  return t;
}

std::optional<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      char c = in[i + j];
      if (c == '=') {
        // Padding only at the very end, in the last one or two places.
        if (i + 4 != in.size() || j < 2) return std::nullopt;
        ++pad;
        v[j] = 0;
        continue;
      }
      if (pad) return std::nullopt;
      auto pos = kAlphabet.find(c);
      if (pos == std::string_view::npos) return std::nullopt;
      v[j] = static_cast<int>(pos);
    }
    int triple = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>((triple >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<char>((triple >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(triple & 0xff));
  }
  return out;
}

std::string base64_encode(std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    int n = static_cast<int>(std::min<std::size_t>(3, in.size() - i));
    unsigned triple = static_cast<unsigned char>(in[i]) << 16;
    if (n > 1) triple |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (n > 2) triple |= static_cast<unsigned char>(in[i + 2]);
    out.push_back(kAlphabet[(triple >> 18) & 63]);
    out.push_back(kAlphabet[(triple >> 12) & 63]);
    out.push_back(n > 1 ? kAlphabet[(triple >> 6) & 63] : '=');
    out.push_back(n > 2 ? kAlphabet[triple & 63] : '=');
  }
  return out;
}

std::optional<std::map<std::string, std::string>> parse_upload_metadata(std::string_view header) {
  std::map<std::string, std::string> out;
  if (trim(header).empty()) return out;
  // A header value has no CR or LF (the HTTP parser unfolds and refuses
  // them), so trimming blanks is trimming spaces and tabs.
  for (const std::string& item : split_list(header, EmptyItems::kKeep)) {
    const std::string_view pair = item;
    auto space = pair.find(' ');
    std::string_view key = pair.substr(0, space);
    if (key.empty()) return std::nullopt;
    for (char c : key)
      if (c <= ' ' || c >= 127 || c == ',') return std::nullopt;
    std::string value;
    if (space != std::string_view::npos) {
      auto decoded = base64_decode(trim(pair.substr(space + 1)));
      if (!decoded) return std::nullopt;
      value = std::move(*decoded);
    }
    if (!out.emplace(std::string(key), std::move(value)).second) return std::nullopt;
  }
  return out;
}

std::optional<int64_t> parse_length(std::string_view value) {
  if (value.empty() || value.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::optional<TusLocator> parse_tus_locator(std::string_view segment) {
  auto plus = segment.find('+');
  if (plus == std::string_view::npos) return std::nullopt;
  TusLocator l{std::string(segment.substr(0, plus)), std::string(segment.substr(plus + 1))};
  if (l.id.empty() || l.id.size() > 64 || l.token.empty() || l.token.size() > 128) return std::nullopt;
  for (char c : l.id + l.token)
    if (!is_token_char(c)) return std::nullopt;
  return l;
}

std::string http_date(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

}  // namespace scribe::upload
