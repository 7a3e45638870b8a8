#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <curl/curl.h>

// The one outbound-URL safety check. Every URL the service fetches or posts to
// on a user's behalf (media links, per-request callbacks, registered webhooks)
// goes through UrlPolicy, and every libcurl connection through CurlConnectGuard,
// so that a user cannot make the server reach loopback, private, link-local or
// other internal addresses (SSRF), not even by DNS rebinding or by a redirect.
namespace scribe {

inline constexpr std::size_t kMaxOutboundUrlLength = 2048;

struct ParsedUrl {
  std::string scheme;          // "http" or "https", lower case
  std::string host;            // lower case; an IPv6 literal without brackets
  uint16_t port = 0;           // explicit, or 80/443 from the scheme
  std::string path_and_query;  // starts with '/'; the fragment is dropped

  bool host_is_ipv6() const { return host.find(':') != std::string::npos; }
  // "host:port" with IPv6 literals in brackets.
  std::string authority() const;
  // The normalized URL: scheme://host:port/path?query (what libcurl is given).
  std::string to_string() const;
};

// Accepts only absolute http/https URLs of at most 2048 characters, with a host,
// no userinfo, an optional port 1-65535, printable ASCII only (no spaces,
// backslashes or control characters; IDNs must arrive in punycode).
std::optional<ParsedUrl> parse_http_url(const std::string& url);

// True only for globally routable unicast addresses. Refuses 0.0.0.0/8,
// 10/8, 100.64/10 (CGNAT), 127/8, 169.254/16, 172.16/12, 192.0.0/24,
// 192.0.2/24, 192.88.99/24, 192.168/16, 198.18/15, 198.51.100/24,
// 203.0.113/24, 224/4 (multicast), 240/4 (reserved, incl. 255.255.255.255);
// IPv6 outside 2000::/3 (::, ::1, fc00::/7, fe80::/10, fec0::/10, ff00::/8 …),
// 2001::/23, 2001:db8::/32, 2002::/16, 3fff::/20, and IPv4-mapped/NAT64
// addresses whose IPv4 part is refused.
bool is_public_address(const sockaddr* addr);
// The same for a numeric address string ("10.0.0.1", "::1"); false when the
// string is not a numeric address.
bool is_public_address(const std::string& numeric_ip);

// Names that only mean something inside a network: localhost, *.localhost,
// *.internal, *.local, *.localdomain, *.home.arpa, *.lan and names without a
// dot. (IP literals are not names; pass them to is_public_address.)
bool is_internal_hostname(const std::string& host);

// Why a URL is refused.
struct UrlViolation {
  enum class Kind {
    kMalformed,     // not an absolute http(s) URL, credentials, too long
    kNotPublic,     // internal name, or an address that is not public
    kUnresolvable,  // the host name does not resolve (now)
  };
  Kind kind;
  std::string reason;  // "must …" / "host does not resolve", to follow the field name
};

struct UrlPolicy {
  // Operator flag for local testing (env SCRIBE_ALLOW_PRIVATE_URLS=1): lets
  // loopback, RFC 1918, CGNAT and unique-local addresses and internal names
  // through. Link-local (cloud metadata), multicast, broadcast, unspecified,
  // reserved and documentation addresses stay refused even then.
  bool allow_private = false;
  // Operator allowlist (env SCRIBE_ALLOWED_PRIVATE_ENDPOINTS, comma separated):
  // exact numeric "ip:port" endpoints ("127.0.0.1:9000", "[::1]:9000") that
  // may be reached although private, e.g. an in-house media server. Only the
  // URL form with that literal IP and port matches, and at connect time only
  // that address and port.
  std::vector<std::string> allowed_private_endpoints;
  // An operator's CA bundle for outbound TLS (an in-house CA, or the
  // self-signed receiver of the tests), used instead of the system's; empty
  // for the system's.
  std::string ca_file;

  // Throws Error::invalid(field, ...) (400 invalid_request naming the field)
  // when the URL is malformed, not http(s), too long, or when its host is
  // internal, does not resolve, or resolves to any non-public address.
  void check(const std::string& url, const std::string& field) const;
  // Same check, returning the parsed URL.
  ParsedUrl validate(const std::string& url, const std::string& field) const;
  // Same check without throwing: why the URL is refused, or nullopt when it
  // is allowed (then *out, if given, receives the parsed URL).
  std::optional<UrlViolation> violation(const std::string& url, ParsedUrl* out = nullptr) const;

  // Whether a connection to this (resolved) address and port is allowed.
  bool address_allowed(const sockaddr* addr) const;
};

// Validates every socket libcurl opens for a handle, against the address it
// actually connects to (CURLOPT_OPENSOCKETFUNCTION), so that a name that
// passed UrlPolicy::check and then resolves to an internal address (DNS
// rebinding) is refused before any packet is sent. The guard must outlive the
// transfers of the handle it is attached to. A refused connection makes
// curl_easy_perform fail with CURLE_COULDNT_CONNECT and sets refused().
class CurlConnectGuard {
 public:
  explicit CurlConnectGuard(UrlPolicy policy) : policy_(std::move(policy)) {}
  CurlConnectGuard(const CurlConnectGuard&) = delete;
  CurlConnectGuard& operator=(const CurlConnectGuard&) = delete;

  void attach(CURL* easy);
  bool refused() const { return refused_; }
  const std::string& refused_address() const { return refused_address_; }
  void reset() {
    refused_ = false;
    refused_address_.clear();
  }

 private:
  static curl_socket_t open_socket(void* clientp, curlsocktype purpose, curl_sockaddr* address);

  UrlPolicy policy_;
  bool refused_ = false;
  std::string refused_address_;
};

}  // namespace scribe
