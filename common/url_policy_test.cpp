#include "common/url_policy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <string>

#include "common/error.h"
#include "common/http_client.h"

namespace scribe {
namespace {

// ---- parse_http_url -----------------------------------------------------------

TEST(UrlPolicyParse, AcceptsHttpAndHttpsWithDefaults) {
  auto u = parse_http_url("https://Example.COM/a/b?x=1#frag");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "example.com");
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->path_and_query, "/a/b?x=1");
  EXPECT_EQ(u->to_string(), "https://example.com:443/a/b?x=1");

  auto h = parse_http_url("HTTP://example.com");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->scheme, "http");
  EXPECT_EQ(h->port, 80);
  EXPECT_EQ(h->path_and_query, "/");

  auto q = parse_http_url("http://example.com?q=1");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->path_and_query, "/?q=1");
}

TEST(UrlPolicyParse, Ports) {
  EXPECT_EQ(parse_http_url("http://example.com:8080/x")->port, 8080);
  EXPECT_EQ(parse_http_url("http://example.com:1/")->port, 1);
  EXPECT_EQ(parse_http_url("http://example.com:65535/")->port, 65535);
  EXPECT_FALSE(parse_http_url("http://example.com:0/"));
  EXPECT_FALSE(parse_http_url("http://example.com:65536/"));
  EXPECT_FALSE(parse_http_url("http://example.com:99999999/"));
  EXPECT_FALSE(parse_http_url("http://example.com:80a/"));
  EXPECT_FALSE(parse_http_url("http://example.com:-1/"));
  EXPECT_FALSE(parse_http_url("http://example.com:/"));
}

TEST(UrlPolicyParse, Ipv6Literals) {
  auto u = parse_http_url("http://[2606:4700::1111]:8443/p");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "2606:4700::1111");
  EXPECT_EQ(u->port, 8443);
  EXPECT_TRUE(u->host_is_ipv6());
  EXPECT_EQ(u->authority(), "[2606:4700::1111]:8443");
  EXPECT_FALSE(parse_http_url("http://[::1/"));
  EXPECT_FALSE(parse_http_url("http://[not-an-ip]/"));
  EXPECT_FALSE(parse_http_url("http://[fe80::1%25eth0]/"));  // zone ids refused
  EXPECT_FALSE(parse_http_url("http://[::1]x/"));
}

TEST(UrlPolicyParse, RefusesOtherSchemesAndMalformed) {
  for (const char* bad : {"ftp://example.com/a",
                          "file:///etc/passwd",
                          "gopher://example.com/",
                          "javascript:alert(1)",
                          "data:text/plain,hi",
                          "//example.com/a",
                          "example.com/a",
                          "http:/example.com",
                          "http://",
                          "http:///path",
                          "",
                          "http://exa mple.com/",
                          "http://example.com/a b",
                          "http://example.com/\t",
                          "http://example.com\\@evil.com/",
                          "http://ex%41mple.com/",
                          "http://a..b/",
                          "http://.example.com/",
                          "http://ex\x01mple.com/",
                          "http://ex\xc3\xa4mple.com/",
                          "ws://example.com/",
                          "https//example.com"}) {
    EXPECT_FALSE(parse_http_url(bad)) << bad;
  }
}

TEST(UrlPolicyParse, RefusesUserinfo) {
  EXPECT_FALSE(parse_http_url("http://user:pass@example.com/"));
  EXPECT_FALSE(parse_http_url("http://user@example.com/"));
  EXPECT_FALSE(parse_http_url("http://example.com@127.0.0.1/"));
  EXPECT_FALSE(parse_http_url("http://@example.com/"));
  // An '@' after the authority is just part of the path.
  EXPECT_TRUE(parse_http_url("http://example.com/@user"));
}

TEST(UrlPolicyParse, Length) {
  std::string base = "https://example.com/";
  std::string ok = base + std::string(kMaxOutboundUrlLength - base.size(), 'a');
  EXPECT_EQ(ok.size(), 2048u);
  EXPECT_TRUE(parse_http_url(ok));
  EXPECT_FALSE(parse_http_url(ok + "a"));
}

TEST(UrlPolicyParse, LabelLimits) {
  EXPECT_TRUE(parse_http_url("http://" + std::string(63, 'a') + ".com/"));
  EXPECT_FALSE(parse_http_url("http://" + std::string(64, 'a') + ".com/"));
  EXPECT_TRUE(parse_http_url("http://example.com./"));  // fully qualified form
}

// ---- is_public_address -----------------------------------------------------------

TEST(UrlPolicyAddress, Ipv4Refused) {
  for (const char* ip :
       {"0.0.0.0",        "0.1.2.3",         "10.0.0.1",        "10.255.255.255", "100.64.0.1",      "100.127.255.255",
        "127.0.0.1",      "127.255.255.254", "169.254.169.254", "169.254.0.1",    "172.16.0.1",      "172.31.255.255",
        "192.0.0.8",      "192.0.2.1",       "192.88.99.1",     "192.168.0.1",    "192.168.255.255", "198.18.0.1",
        "198.19.255.255", "198.51.100.7",    "203.0.113.9",     "224.0.0.1",      "239.255.255.250", "240.0.0.1",
        "250.1.2.3",      "255.255.255.255"}) {
    EXPECT_FALSE(is_public_address(std::string(ip))) << ip;
  }
}

TEST(UrlPolicyAddress, Ipv4PublicIncludingRangeEdges) {
  for (const char* ip :
       {"1.1.1.1",     "8.8.8.8",         "93.184.216.34",  "9.255.255.255",   "11.0.0.0",    "100.63.255.255",
        "100.128.0.0", "126.255.255.255", "128.0.0.1",      "169.253.255.255", "169.255.0.0", "172.15.255.255",
        "172.32.0.0",  "192.0.1.1",       "192.0.3.1",      "192.167.255.255", "192.169.0.0", "198.17.255.255",
        "198.20.0.0",  "203.0.114.1",     "223.255.255.255"}) {
    EXPECT_TRUE(is_public_address(std::string(ip))) << ip;
  }
}

TEST(UrlPolicyAddress, Ipv6Refused) {
  for (const char* ip : {"::",
                         "::1",
                         "fc00::1",
                         "fd12:3456:789a::1",
                         "fe80::1",
                         "febf::1",
                         "fec0::1",
                         "ff02::1",
                         "ff0e::1",
                         "::ffff:127.0.0.1",
                         "::ffff:10.1.2.3",
                         "::ffff:169.254.169.254",
                         "::ffff:192.168.1.1",
                         "::ffff:0.0.0.0",
                         "::ffff:255.255.255.255",
                         "::127.0.0.1",
                         "64:ff9b::a00:1",
                         "64:ff9b:1::1",
                         "100::1",
                         "2001:db8::1",
                         "2001:db8:ffff::1",
                         "2001::1",
                         "2001:1ff::1",
                         "2002:7f00:1::1",
                         "3fff::1",
                         "3fff:fff::1",
                         "1234::1",
                         "4000::1",
                         "e000::1"}) {
    EXPECT_FALSE(is_public_address(std::string(ip))) << ip;
  }
}

TEST(UrlPolicyAddress, Ipv6Public) {
  for (const char* ip : {"2606:4700:4700::1111", "2a00:1450:4001:82b::200e", "2001:4860:4860::8888", "2001:200::1",
                         "3fff:1000::1", "::ffff:8.8.8.8", "64:ff9b::808:808"}) {
    EXPECT_TRUE(is_public_address(std::string(ip))) << ip;
  }
}

TEST(UrlPolicyAddress, NotNumericIsNotPublic) {
  EXPECT_FALSE(is_public_address(std::string("example.com")));
  EXPECT_FALSE(is_public_address(std::string("")));
  EXPECT_FALSE(is_public_address(static_cast<const sockaddr*>(nullptr)));
}

// ---- internal names --------------------------------------------------------------

TEST(UrlPolicyNames, InternalNames) {
  for (const char* h :
       {"localhost", "LOCALHOST", "localhost.", "foo.localhost", "metadata.google.internal", "db.internal",
        "printer.local", "box.localdomain", "nas.home.arpa", "router.lan", "intranet", "db", ""}) {
    EXPECT_TRUE(is_internal_hostname(h)) << h;
  }
  for (const char* h :
       {"example.com", "localhost.example.com", "internal.example.org", "local.example.net", "example.com."}) {
    EXPECT_FALSE(is_internal_hostname(h)) << h;
  }
}

// ---- UrlPolicy::check ----------------------------------------------------------------

std::string refusal_field(const UrlPolicy& p, const std::string& url, const std::string& field) {
  try {
    p.check(url, field);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "invalid_request");
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_NE(e.message().find(field), std::string::npos) << e.message();
    return e.extras().value("field", "");
  }
  return "";
}

TEST(UrlPolicyCheck, RefusesMalformedAndPrivateNamingTheField) {
  UrlPolicy p;
  for (const char* url : {"ftp://93.184.216.34/a",
                          "not a url",
                          "http://user@93.184.216.34/",
                          "http://127.0.0.1/",
                          "http://127.0.0.1:8080/x",
                          "http://10.0.0.5/",
                          "http://172.20.1.1/",
                          "http://192.168.1.1/",
                          "http://169.254.169.254/latest/meta-data/",
                          "http://100.64.1.1/",
                          "http://0.0.0.0/",
                          "http://255.255.255.255/",
                          "http://224.0.0.1/",
                          "http://240.0.0.1/",
                          "http://[::1]/",
                          "http://[fe80::1]/",
                          "http://[fd00::1]/",
                          "http://[::ffff:127.0.0.1]/",
                          "http://[::ffff:a9fe:a9fe]/",
                          "http://localhost/",
                          "http://localhost:8080/",
                          "http://foo.localhost/",
                          "http://metadata.google.internal/",
                          "http://printer.local/",
                          "http://intranet/",
                          "http://2130706433/",
                          "http://192.0.2.10/",
                          "http://198.51.100.1/",
                          "http://203.0.113.1/",
                          "http://[2001:db8::1]/"}) {
    EXPECT_EQ(refusal_field(p, url, "callback_url"), "callback_url") << url;
  }
}

TEST(UrlPolicyCheck, TooLongIsRefused) {
  UrlPolicy p;
  std::string url = "http://93.184.216.34/" + std::string(2100, 'a');
  EXPECT_EQ(refusal_field(p, url, "url"), "url");
  try {
    p.check(url, "url");
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("2048"), std::string::npos);
  }
}

TEST(UrlPolicyCheck, NumericFormsResolvedByTheResolverAreCheckedToo) {
  UrlPolicy p;
  // inet_aton forms that getaddrinfo turns into 127.0.0.1 / 10.0.0.1.
  EXPECT_EQ(refusal_field(p, "http://127.1/", "url"), "url");
  EXPECT_EQ(refusal_field(p, "http://0x7f.0.0.1/", "url"), "url");
  EXPECT_EQ(refusal_field(p, "http://10.1/", "url"), "url");
}

TEST(UrlPolicyCheck, UnresolvableNameIsRefused) {
  UrlPolicy p;
  p.allow_private = true;  // even then
  try {
    p.check("http://no-such-host.invalid/a.mp3", "url");
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "invalid_request");
    EXPECT_NE(e.message().find("does not resolve"), std::string::npos) << e.message();
  }
}

TEST(UrlPolicyCheck, PublicLiteralsPass) {
  UrlPolicy p;
  EXPECT_NO_THROW(p.check("https://93.184.216.34/video.mp4", "url"));
  EXPECT_NO_THROW(p.check("http://[2606:4700:4700::1111]:8080/a", "url"));
  ParsedUrl parsed = p.validate("HTTPS://1.1.1.1/x?y#z", "url");
  EXPECT_EQ(parsed.to_string(), "https://1.1.1.1:443/x?y");
  EXPECT_FALSE(p.violation("http://8.8.8.8/"));
  EXPECT_TRUE(p.violation("http://8.8.8.8@10.0.0.1/"));
}

TEST(UrlPolicyCheck, AllowPrivateLetsLoopbackAndPrivateThroughButNotLinkLocal) {
  UrlPolicy p;
  p.allow_private = true;
  EXPECT_NO_THROW(p.check("http://127.0.0.1:8080/x", "url"));
  EXPECT_NO_THROW(p.check("http://10.0.0.5/", "url"));
  EXPECT_NO_THROW(p.check("http://[::1]:9/", "url"));
  EXPECT_NO_THROW(p.check("http://[fd00::1]/", "url"));
  EXPECT_NO_THROW(p.check("http://100.64.0.1/", "url"));
  EXPECT_NO_THROW(p.check("http://localhost:8080/", "url"));
  EXPECT_EQ(refusal_field(p, "http://169.254.169.254/", "url"), "url");
  EXPECT_EQ(refusal_field(p, "http://[fe80::1]/", "url"), "url");
  EXPECT_EQ(refusal_field(p, "http://0.0.0.0/", "url"), "url");
  EXPECT_EQ(refusal_field(p, "http://224.0.0.1/", "url"), "url");
  EXPECT_EQ(refusal_field(p, "ftp://127.0.0.1/", "url"), "url");
}

TEST(UrlPolicyCheck, AllowedPrivateEndpointsMatchExactIpAndPort) {
  UrlPolicy p;
  p.allowed_private_endpoints = {" 127.0.0.1:9000", "[::1]:9001"};
  EXPECT_NO_THROW(p.check("http://127.0.0.1:9000/a.mp3", "url"));
  EXPECT_NO_THROW(p.check("http://[0:0::1]:9001/", "url"));
  EXPECT_EQ(refusal_field(p, "http://127.0.0.1:9001/a.mp3", "url"), "url");
  EXPECT_EQ(refusal_field(p, "http://127.0.0.2:9000/a.mp3", "url"), "url");
  EXPECT_EQ(refusal_field(p, "http://localhost:9000/a.mp3", "url"), "url");
  EXPECT_EQ(refusal_field(p, "http://[::1]:9000/", "url"), "url");
}

TEST(UrlPolicyCheck, AddressAllowedHonoursPolicy) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(80);
  inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
  UrlPolicy strict;
  UrlPolicy lax;
  lax.allow_private = true;
  EXPECT_FALSE(strict.address_allowed(reinterpret_cast<sockaddr*>(&in)));
  EXPECT_TRUE(lax.address_allowed(reinterpret_cast<sockaddr*>(&in)));
  inet_pton(AF_INET, "169.254.169.254", &in.sin_addr);
  EXPECT_FALSE(lax.address_allowed(reinterpret_cast<sockaddr*>(&in)));
  inet_pton(AF_INET, "8.8.8.8", &in.sin_addr);
  EXPECT_TRUE(strict.address_allowed(reinterpret_cast<sockaddr*>(&in)));
}

// ---- Retry-After parsing (http_client) ----------------------------------------------

TEST(UrlPolicyHttpClient, ParseRetryAfter) {
  EXPECT_EQ(parse_retry_after("120"), 120);
  EXPECT_EQ(parse_retry_after(" 7 "), 7);
  EXPECT_FALSE(parse_retry_after(""));
  EXPECT_FALSE(parse_retry_after("soon"));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0);  // in the past
  auto future = parse_retry_after("Fri, 01 Jan 2100 00:00:00 GMT");
  ASSERT_TRUE(future);
  EXPECT_GT(*future, 300);
}

TEST(UrlPolicyHttpClient, RefusesPrivateBeforeConnecting) {
  HttpClient client{UrlPolicy{}};
  try {
    client.post("http://127.0.0.1:1/hook", {}, "{}", std::chrono::milliseconds(1000));
    FAIL() << "expected a refusal";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpError::Kind::kRefused);
  }
}

}  // namespace
}  // namespace scribe
