// The idempotency fingerprint without a database: which bodies count as the
// same request under one Idempotency-Key (rule 3).
#include <gtest/gtest.h>

#include "api/idempotency.h"
#include "common/crypto.h"

namespace scribe::api {
namespace {

std::string fp(const std::string& body) { return Idempotency::body_fingerprint(body); }

TEST(IdempotencyFingerprint, JsonIsComparedByMeaning) {
  const std::string compact = R"({"source":"external_url","duration_seconds":60,"addons":[]})";
  EXPECT_EQ(fp(compact), fp("{\n  \"source\": \"external_url\",\n  \"duration_seconds\": 60,\n  \"addons\": [ ]\n}\n"));
  EXPECT_EQ(fp(compact), fp(R"({"addons":[],"duration_seconds":60,"source":"external_url"})"));       // key order
  EXPECT_EQ(fp(compact), fp(R"({"source":"extern\u0061l_url","duration_seconds":60,"addons":[]})"));  // escapes
  EXPECT_EQ(fp(compact).rfind("json1:", 0), 0u);
  // A different value, or array order, is a different request.
  EXPECT_NE(fp(compact), fp(R"({"source":"external_url","duration_seconds":61,"addons":[]})"));
  EXPECT_NE(fp(R"({"a":[1,2]})"), fp(R"({"a":[2,1]})"));
  EXPECT_NE(fp(R"({"a":"x"})"), fp(R"({"a":"X"})"));
}

TEST(IdempotencyFingerprint, OtherBodiesAreComparedByTheirBytes) {
  // Not JSON, or JSON the API refuses (a repeated key): the bare SHA-256 of
  // the bytes, which is also what entries stored before held.
  EXPECT_EQ(fp(""), crypto::sha256_hex(""));
  EXPECT_EQ(fp("{\"a\":"), crypto::sha256_hex("{\"a\":"));
  const std::string twice = R"({"max_charge_usd":0,"max_charge_usd":100})";
  EXPECT_EQ(fp(twice), crypto::sha256_hex(twice));
  EXPECT_NE(fp(twice), fp(R"({"max_charge_usd":100})"));
  EXPECT_NE(fp("{\"a\":"), fp("{\"a\": "));
}

}  // namespace
}  // namespace scribe::api
