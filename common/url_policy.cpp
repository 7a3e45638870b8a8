#include "common/url_policy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/error.h"
#include "common/text.h"

namespace scribe {
namespace {

enum class AddressClass { kPublic, kPrivate, kForbidden };

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `a` in host byte order.
AddressClass classify_v4(uint32_t a) {
  auto in = [a](uint32_t net, int bits) {
    uint32_t mask = bits == 0 ? 0 : (~uint32_t{0} << (32 - bits));
    return (a & mask) == (net & mask);
  };
  auto v4 = [](uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) { return (b0 << 24) | (b1 << 16) | (b2 << 8) | b3; };
  // Loopback and private ranges: refused unless the operator allows private targets.
  if (in(v4(127, 0, 0, 0), 8) || in(v4(10, 0, 0, 0), 8) || in(v4(172, 16, 0, 0), 12) || in(v4(192, 168, 0, 0), 16) ||
      in(v4(100, 64, 0, 0), 10)) {
    return AddressClass::kPrivate;
  }
  // Never reachable: unspecified/"this network", link-local (cloud metadata),
  // IETF protocol assignments, documentation, 6to4 relay, benchmarking,
  // multicast, reserved and broadcast.
  if (in(v4(0, 0, 0, 0), 8) || in(v4(169, 254, 0, 0), 16) || in(v4(192, 0, 0, 0), 24) || in(v4(192, 0, 2, 0), 24) ||
      in(v4(192, 88, 99, 0), 24) || in(v4(198, 18, 0, 0), 15) || in(v4(198, 51, 100, 0), 24) ||
      in(v4(203, 0, 113, 0), 24) || in(v4(224, 0, 0, 0), 4) || in(v4(240, 0, 0, 0), 4)) {
    return AddressClass::kForbidden;
  }
  return AddressClass::kPublic;
}

uint32_t v4_at(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

AddressClass classify_v6(const uint8_t* b) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  static constexpr uint8_t kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  if (std::memcmp(b, kMapped, 12) == 0 || std::memcmp(b, kNat64, 12) == 0) return classify_v4(v4_at(b + 12));
  if (std::memcmp(b, kLoopback, 16) == 0) return AddressClass::kPrivate;
  if ((b[0] & 0xfe) == 0xfc) return AddressClass::kPrivate;  // fc00::/7 unique-local
  // Only 2000::/3 is global unicast; everything else (::, ::/96 compatible,
  // 100::/64 discard, fe80::/10 link-local, fec0::/10 site-local, ff00::/8
  // multicast, 64:ff9b:1::/48 local NAT64 …) is refused.
  if ((b[0] & 0xe0) != 0x20) return AddressClass::kForbidden;
  uint16_t w0 = static_cast<uint16_t>((b[0] << 8) | b[1]);
  uint16_t w1 = static_cast<uint16_t>((b[2] << 8) | b[3]);
  if (w0 == 0x2001 && w1 < 0x0200) return AddressClass::kForbidden;   // 2001::/23 IETF (Teredo, ORCHID…)
  if (w0 == 0x2001 && w1 == 0x0db8) return AddressClass::kForbidden;  // 2001:db8::/32 documentation
  if (w0 == 0x2002) return AddressClass::kForbidden;                  // 2002::/16 6to4
  if (w0 == 0x3fff && w1 < 0x1000) return AddressClass::kForbidden;   // 3fff::/20 documentation
  return AddressClass::kPublic;
}

AddressClass classify(const sockaddr* sa) {
  if (!sa) return AddressClass::kForbidden;
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return classify_v4(ntohl(in->sin_addr.s_addr));
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    return classify_v6(in6->sin6_addr.s6_addr);
  }
  return AddressClass::kForbidden;
}

// Canonical "ip:port" / "[ip6]:port" of a socket address.
std::optional<std::string> endpoint_of(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    if (!inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf)) return std::nullopt;
    return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (!inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf)) return std::nullopt;
    return "[" + std::string(buf) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return std::nullopt;
}

// A numeric address and port as a sockaddr; nullopt when `host` is not numeric.
std::optional<sockaddr_storage> numeric_sockaddr(const std::string& host, uint16_t port) {
  sockaddr_storage ss{};
  auto* in = reinterpret_cast<sockaddr_in*>(&ss);
  if (inet_pton(AF_INET, host.c_str(), &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    return ss;
  }
  ss = sockaddr_storage{};
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    return ss;
  }
  return std::nullopt;
}

// "127.0.0.1:9000" or "[::1]:9000" in canonical form; nullopt when malformed.
std::optional<std::string> canonical_endpoint(std::string entry) {
  entry = std::string(trim(entry, " \t"));
  if (entry.empty()) return std::nullopt;
  std::string host, port;
  if (!entry.empty() && entry[0] == '[') {
    auto close = entry.find(']');
    if (close == std::string::npos || close + 1 >= entry.size() || entry[close + 1] != ':') return std::nullopt;
    host = entry.substr(1, close - 1);
    port = entry.substr(close + 2);
  } else {
    auto colon = entry.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    host = entry.substr(0, colon);
    port = entry.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit)) return std::nullopt;
  int p = std::stoi(port);
  if (p < 1 || p > 65535) return std::nullopt;
  auto ss = numeric_sockaddr(host, static_cast<uint16_t>(p));
  if (!ss) return std::nullopt;
  return endpoint_of(reinterpret_cast<const sockaddr*>(&*ss));
}

bool is_host_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'; }

bool valid_reg_name(const std::string& host) {
  if (host.empty() || host.size() > 253 + 1) return false;
  std::string h = host;
  if (h.back() == '.') h.pop_back();  // fully qualified form "example.com."
  if (h.empty() || h.size() > 253) return false;
  std::size_t label_start = 0;
  for (std::size_t i = 0; i <= h.size(); ++i) {
    if (i == h.size() || h[i] == '.') {
      std::size_t len = i - label_start;
      if (len == 0 || len > 63) return false;
      label_start = i + 1;
    } else if (!is_host_char(h[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string ParsedUrl::authority() const {
  return (host_is_ipv6() ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string ParsedUrl::to_string() const { return scheme + "://" + authority() + path_and_query; }

std::optional<ParsedUrl> parse_http_url(const std::string& url) {
  if (url.empty() || url.size() > kMaxOutboundUrlLength) return std::nullopt;
  for (char c : url) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '\\') return std::nullopt;
  }
  auto sep = url.find("://");
  if (sep == std::string::npos) return std::nullopt;
  ParsedUrl out;
  out.scheme = to_lower(url.substr(0, sep));
  if (out.scheme != "http" && out.scheme != "https") return std::nullopt;
  std::size_t auth_start = sep + 3;
  std::size_t auth_end = url.find_first_of("/?#", auth_start);
  if (auth_end == std::string::npos) auth_end = url.size();
  std::string authority = url.substr(auth_start, auth_end - auth_start);
  if (authority.empty() || authority.find('@') != std::string::npos) return std::nullopt;

  std::string port_str;
  if (authority[0] == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    out.host = to_lower(authority.substr(1, close - 1));
    in6_addr tmp{};
    if (inet_pton(AF_INET6, out.host.c_str(), &tmp) != 1) return std::nullopt;  // also refuses zone ids
    std::string rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return std::nullopt;
      port_str = rest.substr(1);
      if (port_str.empty()) return std::nullopt;
    }
  } else {
    auto colon = authority.find(':');
    if (colon != std::string::npos) {
      port_str = authority.substr(colon + 1);
      if (port_str.empty()) return std::nullopt;
      authority = authority.substr(0, colon);
    }
    out.host = to_lower(authority);
    if (!valid_reg_name(out.host)) return std::nullopt;
  }
  if (!port_str.empty()) {
    if (port_str.size() > 5 || !std::all_of(port_str.begin(), port_str.end(), ::isdigit)) return std::nullopt;
    int p = std::stoi(port_str);
    if (p < 1 || p > 65535) return std::nullopt;
    out.port = static_cast<uint16_t>(p);
  } else {
    out.port = out.scheme == "https" ? 443 : 80;
  }
  std::string rest = url.substr(auth_end);
  auto hash = rest.find('#');
  if (hash != std::string::npos) rest.resize(hash);
  if (rest.empty() || rest[0] != '/') rest = "/" + rest;
  out.path_and_query = rest;
  return out;
}

bool is_public_address(const sockaddr* addr) { return classify(addr) == AddressClass::kPublic; }

bool is_public_address(const std::string& numeric_ip) {
  auto ss = numeric_sockaddr(numeric_ip, 0);
  return ss && is_public_address(reinterpret_cast<const sockaddr*>(&*ss));
}

bool is_internal_hostname(const std::string& host_in) {
  std::string host = to_lower(host_in);
  while (!host.empty() && host.back() == '.') host.pop_back();
  if (host.empty()) return true;
  if (host.find('.') == std::string::npos) return true;  // "localhost", "intranet", "db"
  static const std::array<const char*, 6> kSuffixes = {".localhost",   ".internal",  ".local",
                                                       ".localdomain", ".home.arpa", ".lan"};
  for (const char* s : kSuffixes) {
    if (ends_with(host, s)) return true;
  }
  return false;
}

bool UrlPolicy::address_allowed(const sockaddr* addr) const {
  if (!addr) return false;
  AddressClass cls = classify(addr);
  if (cls == AddressClass::kPublic) return true;
  if (cls == AddressClass::kPrivate && allow_private) return true;
  if (!allowed_private_endpoints.empty()) {
    auto ep = endpoint_of(addr);
    if (ep) {
      for (const auto& entry : allowed_private_endpoints) {
        auto canon = canonical_endpoint(entry);
        if (canon && *canon == *ep) return true;
      }
    }
  }
  return false;
}

std::optional<UrlViolation> UrlPolicy::violation(const std::string& url, ParsedUrl* out) const {
  using Kind = UrlViolation::Kind;
  if (url.size() > kMaxOutboundUrlLength) {
    return UrlViolation{Kind::kMalformed, "must be at most " + std::to_string(kMaxOutboundUrlLength) + " characters"};
  }
  auto parsed = parse_http_url(url);
  if (!parsed) {
    auto sep = url.find("://");
    if (sep != std::string::npos) {
      std::string scheme = to_lower(url.substr(0, sep));
      if (scheme != "http" && scheme != "https")
        return UrlViolation{Kind::kMalformed, "must use the http or https scheme"};
    }
    return UrlViolation{Kind::kMalformed, "must be an absolute http or https URL with a host and no credentials"};
  }
  const UrlViolation not_public{
      Kind::kNotPublic,
      "must point to a public host; private, loopback, link-local and internal addresses are refused"};
  if (auto numeric = numeric_sockaddr(parsed->host, parsed->port)) {
    if (!address_allowed(reinterpret_cast<const sockaddr*>(&*numeric))) return not_public;
  } else {
    if (!allow_private && is_internal_hostname(parsed->host)) return not_public;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    std::string port = std::to_string(parsed->port);
    int rc = getaddrinfo(parsed->host.c_str(), port.c_str(), &hints, &res);
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(res, [](addrinfo* a) {
      if (a) freeaddrinfo(a);
    });
    if (rc != 0 || !res) return UrlViolation{Kind::kUnresolvable, "host does not resolve"};
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
      if (!address_allowed(ai->ai_addr)) return not_public;
    }
  }
  if (out) *out = *parsed;
  return std::nullopt;
}

ParsedUrl UrlPolicy::validate(const std::string& url, const std::string& field) const {
  ParsedUrl parsed;
  if (auto why = violation(url, &parsed)) throw Error::invalid(field, field + " " + why->reason);
  return parsed;
}

void UrlPolicy::check(const std::string& url, const std::string& field) const { (void)validate(url, field); }

void CurlConnectGuard::attach(CURL* easy) {
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &CurlConnectGuard::open_socket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, this);
}

curl_socket_t CurlConnectGuard::open_socket(void* clientp, curlsocktype purpose, curl_sockaddr* address) {
  auto* self = static_cast<CurlConnectGuard*>(clientp);
  sockaddr_storage ss{};
  std::memcpy(&ss, &address->addr, std::min<std::size_t>(address->addrlen, sizeof ss));
  const auto* sa = reinterpret_cast<const sockaddr*>(&ss);
  if (purpose != CURLSOCKTYPE_IPCXN || !self->policy_.address_allowed(sa)) {
    self->refused_ = true;
    self->refused_address_ = endpoint_of(sa).value_or("?");
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype, address->protocol);
}

}  // namespace scribe
