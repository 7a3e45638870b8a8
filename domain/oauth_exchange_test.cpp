#include "domain/oauth_exchange.h"

#include <gtest/gtest.h>

namespace scribe::oauth {
namespace {

using std::chrono::seconds;

// RFC 7636 appendix B.
const std::string kVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const std::string kChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

TEST(OAuthPkce, S256) {
  EXPECT_TRUE(is_valid_code_challenge(kChallenge));
  EXPECT_TRUE(is_valid_code_verifier(kVerifier));
  EXPECT_TRUE(verify_s256(kVerifier, kChallenge));
  EXPECT_FALSE(verify_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXkx", kChallenge));
  // `plain`: the verifier itself as the challenge never verifies.
  EXPECT_FALSE(verify_s256(kVerifier, kVerifier));
  EXPECT_FALSE(verify_s256("", kChallenge));
  EXPECT_FALSE(is_valid_code_verifier(std::string(42, 'a')));
  EXPECT_TRUE(is_valid_code_verifier(std::string(128, '~')));
  EXPECT_FALSE(is_valid_code_verifier(std::string(129, 'a')));
  EXPECT_FALSE(is_valid_code_verifier("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa+"));
  EXPECT_FALSE(is_valid_code_challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM="));
  EXPECT_FALSE(is_valid_code_challenge(kChallenge.substr(1)));
  EXPECT_FALSE(is_valid_code_challenge(std::string(43, '+')));
  // A verifier that is not well formed fails even when it hashes right.
  const std::string short_verifier = "abc";
  EXPECT_FALSE(verify_s256(short_verifier, "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"));
}

TEST(OAuthCode, Decisions) {
  const TimePoint t0 = now();
  CodeRow row{"dcr_a", "http://127.0.0.1:3000/cb", kChallenge, t0 + seconds(60), false};
  CodeRequest req{"dcr_a", "http://127.0.0.1:3000/cb", kVerifier};
  EXPECT_EQ(decide_code(row, req, t0), CodeDecision::Issue);
  EXPECT_EQ(decide_code(std::nullopt, req, t0), CodeDecision::Unknown);
  EXPECT_EQ(decide_code(row, req, t0 + seconds(61)), CodeDecision::Expired);
  auto other = req;
  other.client_id = "dcr_b";
  EXPECT_EQ(decide_code(row, other, t0), CodeDecision::WrongClient);
  other = req;
  other.redirect_uri = "http://127.0.0.1:3001/cb";
  EXPECT_EQ(decide_code(row, other, t0), CodeDecision::WrongRedirect);
  other.redirect_uri = "";  // required: the authorization request always carries one
  EXPECT_EQ(decide_code(row, other, t0), CodeDecision::WrongRedirect);
  other = req;
  other.code_verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXY";
  EXPECT_EQ(decide_code(row, other, t0), CodeDecision::WrongVerifier);
  other.code_verifier = "";
  EXPECT_EQ(decide_code(row, other, t0), CodeDecision::WrongVerifier);
  // Used before: reuse, whatever else is wrong with this request.
  row.used = true;
  EXPECT_EQ(decide_code(row, req, t0), CodeDecision::Reused);
  EXPECT_EQ(decide_code(row, other, t0 + seconds(600)), CodeDecision::Reused);
  EXPECT_FALSE(describe(CodeDecision::Reused).empty());
}

TEST(OAuthRefresh, RotationGraceAndReplay) {
  const TimePoint t0 = now();
  const auto grace = seconds(10);
  RefreshRow row{"dcr_a", t0 + seconds(3600), false, false, std::nullopt};
  EXPECT_EQ(decide_refresh(row, "dcr_a", t0, grace), RefreshDecision::Rotate);
  EXPECT_EQ(decide_refresh(std::nullopt, "dcr_a", t0, grace), RefreshDecision::Unknown);
  EXPECT_EQ(decide_refresh(row, "dcr_b", t0, grace), RefreshDecision::WrongClient);
  EXPECT_EQ(decide_refresh(row, "dcr_a", t0 + seconds(3601), grace), RefreshDecision::Expired);
  auto revoked = row;
  revoked.revoked = true;
  EXPECT_EQ(decide_refresh(revoked, "dcr_a", t0, grace), RefreshDecision::Revoked);
  revoked = row;
  revoked.grant_revoked = true;
  EXPECT_EQ(decide_refresh(revoked, "dcr_a", t0, grace), RefreshDecision::Revoked);
  // Rotated: within the grace a retry, after it a replay.
  row.rotated_at = t0;
  EXPECT_EQ(decide_refresh(row, "dcr_a", t0 + seconds(3), grace), RefreshDecision::RetryInGrace);
  EXPECT_EQ(decide_refresh(row, "dcr_a", t0 + seconds(10), grace), RefreshDecision::RetryInGrace);
  EXPECT_EQ(decide_refresh(row, "dcr_a", t0 + seconds(11), grace), RefreshDecision::Replayed);
  // A replay by another client is still a replay: the token leaked.
  EXPECT_EQ(decide_refresh(row, "dcr_b", t0 + seconds(11), grace), RefreshDecision::Replayed);
  // A rotated token of a revoked grant is just revoked.
  row.grant_revoked = true;
  EXPECT_EQ(decide_refresh(row, "dcr_a", t0 + seconds(11), grace), RefreshDecision::Revoked);
}

}  // namespace
}  // namespace scribe::oauth
