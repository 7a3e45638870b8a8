#include "domain/api_key.h"

#include <gtest/gtest.h>

#include <set>

namespace scribe::apikey {
namespace {

const std::string kGood = "key_live_" + std::string("aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5hJ7k");

TEST(ApiKey, GeneratedKeysAreWellFormed) {
  ASSERT_EQ(kGood.size(), 49u);
  ASSERT_TRUE(is_well_formed(kGood));
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    std::string k = generate();
    EXPECT_EQ(k.size(), 49u) << k;
    EXPECT_EQ(k.substr(0, 9), "key_live_") << k;
    EXPECT_TRUE(is_well_formed(k)) << k;
    seen.insert(k);
  }
  EXPECT_EQ(seen.size(), 200u) << "generated keys repeat";
  EXPECT_NE(generate(), generate());
}

TEST(ApiKey, GeneratedSecretsUseTheWholeAlphabet) {
  std::set<char> chars;
  for (int i = 0; i < 100; ++i) {
    std::string k = generate();
    for (char c : k.substr(9)) chars.insert(c);
  }
  // 4,000 random characters from 62: every one appears (the chance that one is
  // missing is about 62 * (61/62)^4000, i.e. never).
  EXPECT_EQ(chars.size(), 62u);
}

TEST(ApiKey, WellFormedRejectsWrongPrefixLengthAndCharacters) {
  const std::string secret = kGood.substr(9);
  EXPECT_FALSE(is_well_formed(""));
  EXPECT_FALSE(is_well_formed("key_live_"));
  EXPECT_FALSE(is_well_formed("key_test_" + secret));
  EXPECT_FALSE(is_well_formed("KEY_LIVE_" + secret));
  EXPECT_FALSE(is_well_formed("key-live_" + secret));
  EXPECT_FALSE(is_well_formed("xkey_live" + secret));
  EXPECT_FALSE(is_well_formed(secret + "key_live_"));
  EXPECT_FALSE(is_well_formed(kGood.substr(0, 48)));  // one short
  EXPECT_FALSE(is_well_formed(kGood + "a"));          // one long
  EXPECT_FALSE(is_well_formed(" " + kGood.substr(1)));
  for (char bad : std::string("-_+/=. \t\n!~")) {
    std::string k = kGood;
    k[30] = bad;
    EXPECT_FALSE(is_well_formed(k)) << "accepted '" << bad << "'";
  }
  std::string nul = kGood;
  nul[20] = '\0';
  EXPECT_FALSE(is_well_formed(nul));
  std::string high = kGood;
  high[48] = static_cast<char>(0xC3);
  EXPECT_FALSE(is_well_formed(high));
  // The edges of each character class are accepted.
  std::string edges = "key_live_09AZaz" + std::string(34, 'x');
  EXPECT_TRUE(is_well_formed(edges));
  for (char c : std::string("/:@[`{")) {  // just outside 0-9, A-Z, a-z
    std::string k = edges;
    k[12] = c;
    EXPECT_FALSE(is_well_formed(k)) << "accepted '" << c << "'";
  }
}

TEST(ApiKey, HashIsSha256HexAndDeterministic) {
  EXPECT_EQ(hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string h = hash(kGood);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
  EXPECT_EQ(hash(kGood), h);
  std::string other = kGood;
  other.back() = other.back() == 'k' ? 'j' : 'k';
  EXPECT_NE(hash(other), h);
  EXPECT_EQ(h.find(kGood.substr(9)), std::string::npos);
}

TEST(ApiKey, DisplayPrefixShowsFourSecretCharacters) {
  EXPECT_EQ(display_prefix(kGood), "key_live_aB3d");
  std::string k = generate();
  EXPECT_EQ(display_prefix(k), k.substr(0, 13));
}

TEST(ApiKey, ReadOnlyAllowsOnlySafeMethods) {
  for (const char* m : {"GET", "HEAD", "OPTIONS"}) EXPECT_TRUE(allows_method(Permission::ReadOnly, m)) << m;
  for (const char* m : {"POST", "PUT", "PATCH", "DELETE", "TRACE", "CONNECT", "", "get", "GETX"})
    EXPECT_FALSE(allows_method(Permission::ReadOnly, m)) << m;
  for (Permission p : {Permission::Full, Permission::Agent})
    for (const char* m : {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
      EXPECT_TRUE(allows_method(p, m)) << permission_name(p) << " " << m;
}

TEST(ApiKey, ScopesFollowThePermission) {
  EXPECT_EQ(scopes(Permission::ReadOnly), (std::vector<std::string>{"read"}));
  EXPECT_EQ(scopes(Permission::Full), (std::vector<std::string>{"read", "write"}));
  EXPECT_EQ(scopes(Permission::Agent), (std::vector<std::string>{"read", "write"}));
}

TEST(ApiKey, PermissionNamesRoundTrip) {
  for (Permission p : {Permission::Full, Permission::ReadOnly, Permission::Agent}) {
    auto parsed = parse_permission(permission_name(p));
    ASSERT_TRUE(parsed.has_value()) << permission_name(p);
    EXPECT_EQ(*parsed, p);
  }
  EXPECT_EQ(permission_name(Permission::Full), "full");
  EXPECT_EQ(permission_name(Permission::ReadOnly), "read_only");
  EXPECT_EQ(permission_name(Permission::Agent), "agent");
  EXPECT_FALSE(parse_permission("").has_value());
  EXPECT_FALSE(parse_permission("admin").has_value());
  EXPECT_FALSE(parse_permission("READ_ONLY").has_value());
  EXPECT_FALSE(parse_permission("read-only").has_value());
}

}  // namespace
}  // namespace scribe::apikey
