#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/url_policy.h"

// The project's one outbound HTTP client (libcurl): media downloads and webhook
// deliveries. Every URL, every redirect hop and every connected address goes
// through the UrlPolicy; only http and https; no proxy from the environment.
namespace scribe {

// A transport failure, kept apart from scribe::Error so that each caller maps
// it to its own contract (media probe codes, webhook retry).
class HttpError : public std::runtime_error {
 public:
  enum class Kind {
    kRefused,           // URL policy refused the URL, a redirect target or the connected address
    kUnreachable,       // DNS failure, connection refused/reset, TLS failure
    kTimeout,           // overall time limit or low-speed abort
    kTooLarge,          // body larger than the limit
    kTooManyRedirects,  // more hops than allowed
    kBadRedirect,       // 3xx without a usable Location
    kLocalIo,           // could not write the destination file
  };
  HttpError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct DownloadLimits {
  // The largest body accepted. common/ knows no product limit: the media
  // fetcher sets the spec's upload cap (media/media_probe.h).
  int64_t max_bytes = INT64_MAX;
  std::chrono::seconds total_timeout{600};  // all hops together
  std::chrono::seconds connect_timeout{20};
  long low_speed_bytes_per_second = 1024;     // abort when slower than this …
  std::chrono::seconds low_speed_window{60};  // … for this long
  int max_redirects = 5;
};

struct HttpResponse {
  long status = 0;
  std::string body;  // capped (see post)
};

struct DownloadResult {
  long status = 0;                 // the final response's status
  std::string final_url;           // after redirects
  std::optional<int> retry_after;  // Retry-After of a non-2xx final response, seconds
  bool ok() const { return status >= 200 && status < 300; }
};

// What HttpClient::get read: the final response's status, its body (a 2xx
// body whole, up to the limit; others' first 64 KiB) and its header fields
// (lower-case names; the last of a repeated field).
struct FetchResult : DownloadResult {
  std::string body;
  std::map<std::string, std::string> headers;
};

struct HttpExchange;

class HttpClient {
 public:
  // Reads SCRIBE_OUTBOUND_CA_FILE (a PEM bundle trusted for outbound HTTPS
  // instead of the system's CAs) once, here.
  explicit HttpClient(UrlPolicy policy, std::string user_agent = "scribe/1");

  // GETs `url` into `path` (created or truncated), following at most
  // limits.max_redirects redirects by hand, each hop re-checked by the policy.
  // A non-2xx final status is returned (the file is then left empty); transport
  // failures and limit violations throw HttpError. The file is removed on throw.
  DownloadResult download(const std::string& url, const std::string& path, const DownloadLimits& limits = {}) const;

  // GETs `url` into memory under the same rules as download(): at most
  // limits.max_redirects redirects (0: a redirect is kTooManyRedirects), a 2xx
  // body larger than limits.max_bytes is kTooLarge. For small documents
  // (OAuth client metadata).
  FetchResult get(const std::string& url, const DownloadLimits& limits) const;

  // POSTs `body` with `headers` ({name, value}); does not follow redirects.
  // The response body is kept up to 64 KiB. Throws HttpError on transport failure.
  HttpResponse post(const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers,
                    const std::string& body, std::chrono::milliseconds timeout) const;

  const UrlPolicy& policy() const { return policy_; }

 private:
  // The GET of download() and get(), following redirects; the final
  // exchange's body and headers go to `out`, a 2xx body to out.file when set.
  DownloadResult get_following(const ParsedUrl& first, const DownloadLimits& limits, HttpExchange& out) const;

  UrlPolicy policy_;
  std::string user_agent_;
};

// Parses a Retry-After value (delta-seconds or an HTTP date) into seconds from now.
std::optional<int> parse_retry_after(const std::string& value);

}  // namespace scribe
