#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

// Media intake rules that need no database: which content types a presigned
// upload accepts, how presigned URLs and resumable tickets are signed, and how
// the tus headers are read. The HTTP handlers (api/handlers/upload_handlers.cpp)
// and the uploads table (migrations/009_uploads.sql) build on these.
namespace scribe::upload {

// The media type of a Content-Type value, lower-cased and without
// parameters or surrounding spaces ("Audio/MPEG; charset=binary" ->
// "audio/mpeg"): media types are case-insensitive (RFC 9110 section 8.3.1).
std::string media_type(std::string_view content_type);
// The spec's list for POST /api/v1/uploads; compares media_type(content_type).
bool is_allowed_content_type(std::string_view content_type);
const char* allowed_content_types_text();

// Presigned PUT URLs: `signature` is the hex HMAC-SHA256, keyed by the
// service secret "upload_url", over
//   "PUT\n<upload id>\n<content type>\n<file size>\n<expires unix>\n<account id>"
// so the URL cannot be replayed for another upload, size, type, account or
// lifetime. The id, type, size and account are read back from the uploads row
// when verifying; only `expires` and `signature` travel in the query string.
struct PresignedFields {
  std::string upload_id;
  std::string content_type;
  int64_t file_size = 0;
  int64_t expires_unix = 0;
  int64_t account_id = 0;
};
std::string presigned_signature(std::string_view key, const PresignedFields& f);
bool verify_presigned(std::string_view key, const PresignedFields& f, std::string_view signature);

// Resumable tickets: "v1.<account id>.<file size>.<expires unix>.<hex HMAC>"
// with the HMAC (service secret "upload_token") over
//   "tus\n<account id>\n<file size>\n<expires unix>".
// The ticket is stateless and may create several uploads until it expires;
// each is bound to the ticket's account and at most its size.
struct Ticket {
  int64_t account_id = 0;
  int64_t file_size = 0;
  int64_t expires_unix = 0;
};
std::string make_ticket(std::string_view key, const Ticket& t);
// nullopt when malformed or the signature does not match (expiry is the
// caller's check, so that it can say "expired" rather than "invalid").
std::optional<Ticket> verify_ticket(std::string_view key, std::string_view token);

// tus Upload-Metadata: comma-separated "key base64value" pairs (the value may
// be absent). nullopt when malformed (bad key, bad base64, duplicate key).
std::optional<std::map<std::string, std::string>> parse_upload_metadata(std::string_view header);
// Standard base64 with padding; nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view in);
std::string base64_encode(std::string_view in);

// A non-negative decimal header value (Upload-Length, Upload-Offset,
// Content-Length); nullopt when empty, signed, non-decimal or over 18 digits.
std::optional<int64_t> parse_length(std::string_view value);

// "<id>+<resume token>" from the last path segment of a tus upload URL.
struct TusLocator {
  std::string id;
  std::string token;
};
std::optional<TusLocator> parse_tus_locator(std::string_view segment);

// An HTTP date (RFC 7231 IMF-fixdate), as tus' Upload-Expires wants it.
std::string http_date(int64_t unix_seconds);

}  // namespace scribe::upload
