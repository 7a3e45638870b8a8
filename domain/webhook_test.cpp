// Webhook registration decisions, event filtering, the signature, the retry
// schedule and the transcription snapshot that deliveries carry.
#include "domain/webhook.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "domain/events.h"

namespace scribe::webhook {
namespace {

TEST(WebhookEvents, DefaultIsAllFourAndUnknownNamesAreDropped) {
  EXPECT_EQ(normalize_events(std::nullopt), subscribable_kinds());
  EXPECT_EQ(normalize_events(std::vector<std::string>{"clip.failed", "nope", "transcription.completed", "clip.failed"}),
            (std::vector<std::string>{"transcription.completed", "clip.failed"}));
  try {
    normalize_events(std::vector<std::string>{"nope", "webhook.test"});
    FAIL() << "an empty result must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "invalid_request");
    EXPECT_EQ(e.extras().value("field", ""), "events");
  }
  EXPECT_THROW(normalize_events(std::vector<std::string>{}), Error);
}

TEST(WebhookEvents, SubscriptionFilterAndTestAlwaysPasses) {
  Json only_failed = Json::array({"transcription.failed"});
  EXPECT_TRUE(subscribes(only_failed, kTranscriptionFailed));
  EXPECT_FALSE(subscribes(only_failed, kTranscriptionCompleted));
  EXPECT_TRUE(subscribes(only_failed, kTest));
}

TEST(WebhookAggregate, RegisterReplacesRevokeAndTestNeedAWebhook) {
  State s;
  EXPECT_FALSE(revoked(s, 1, 2).has_value());
  EXPECT_THROW(test_requested(s, 1, 2), Error);
  auto first = registered(s, 1, 2, 10, "https://a.example/h", {"transcription.completed"});
  EXPECT_EQ(first.type, events::kWebhookRegistered);
  EXPECT_TRUE(first.data["replaced_webhook_id"].is_null());
  apply(s, first.type, first.data);
  auto second = registered(s, 1, 2, 11, "https://b.example/h", {"clip.failed"});
  EXPECT_EQ(second.data["replaced_webhook_id"], 10);
  apply(s, second.type, second.data);
  EXPECT_EQ(test_requested(s, 1, 2).data["webhook_id"], 11);
  auto gone = revoked(s, 1, 2);
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(gone->data["webhook_id"], 11);
  apply(s, gone->type, gone->data);
  EXPECT_FALSE(s.active_webhook_id.has_value());
}

TEST(WebhookSignature, MatchesKnownHmacAndBindsTimestampAndBody) {
  // HMAC-SHA256("whsec_test", "1700000000.{}"), computed independently with
  // `printf '1700000000.{}' | openssl dgst -sha256 -hmac whsec_test`.
  EXPECT_EQ(signature_header("whsec_test", 1700000000, "{}"),
            "t=1700000000,v1=35495024f4ef3f94e5a93e22221544c4b75e9a42300cd965ab81cb85cd994e91");
  EXPECT_NE(signature_header("whsec_test", 1700000000, "{}"), signature_header("whsec_test", 1700000001, "{}"));
  EXPECT_NE(signature_header("whsec_test", 1700000000, "{}"), signature_header("whsec_test", 1700000000, "{ }"));
  EXPECT_NE(signature_header("whsec_test", 1700000000, "{}"), signature_header("whsec_other", 1700000000, "{}"));
}

TEST(WebhookBody, IdsFollowTheEventPosition) {
  EXPECT_EQ(delivery_id(7, false), 14);
  EXPECT_EQ(delivery_id(7, true), 15);
  EXPECT_EQ(event_id(7), "evt_7");
  Json body = Json::parse(delivery_body("evt_7", kTest, 1700000000, {{"message", "hi"}}));
  EXPECT_EQ(body["id"], "evt_7");
  EXPECT_EQ(body["event"], "webhook.test");
  EXPECT_EQ(body["created"], 1700000000);
  EXPECT_EQ(body["data"]["message"], "hi");
}

TEST(WebhookRetry, SpecScheduleFiveAttempts) {
  auto p = RetryPolicy::spec();
  EXPECT_EQ(p.max_attempts, 5);
  EXPECT_EQ(next_delay(p, 1), std::chrono::seconds(60));
  EXPECT_EQ(next_delay(p, 2), std::chrono::seconds(300));
  EXPECT_EQ(next_delay(p, 3), std::chrono::seconds(1800));
  EXPECT_EQ(next_delay(p, 4), std::chrono::seconds(10800));
  EXPECT_FALSE(next_delay(p, 5).has_value());
  auto fast = RetryPolicy::parse("1,2", 5);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(next_delay(*fast, 1), std::chrono::seconds(1));
  EXPECT_EQ(next_delay(*fast, 4), std::chrono::seconds(2));
  EXPECT_FALSE(RetryPolicy::parse("", 5).has_value());
  EXPECT_FALSE(RetryPolicy::parse("1,,2", 5).has_value());
  EXPECT_FALSE(RetryPolicy::parse("-1", 5).has_value());
  EXPECT_TRUE(is_success(204));
  EXPECT_FALSE(is_success(301));
  EXPECT_FALSE(is_success(500));
}

TEST(WebhookSnapshot, FollowsTheTranscriptionThroughFailureRetryAndCompletion) {
  Json s;
  evolve_snapshot(s, events::kTranscriptionCreated,
                  {{"transcription_id", 5},
                   {"source", "external_url"},
                   {"pipeline_code", "standard"},
                   {"language", "auto"},
                   {"title", nullptr},
                   {"duration_seconds", 60.0},
                   {"charge_micros", 16667}},
                  "2026-11-23T10:00:00.123456Z");
  EXPECT_EQ(s["id"], 5);
  EXPECT_EQ(s["status"], "processing");
  EXPECT_EQ(s["created_at"], "2026-11-23T10:00:00.123Z");
  EXPECT_TRUE(s["processing_started_at"].is_null());
  evolve_snapshot(s, events::kTranscriptionStageChanged, {{"transcription_id", 5}, {"stage", "decoding"}},
                  "2026-11-23T10:00:01Z");
  EXPECT_EQ(s["stage"], "decoding");
  EXPECT_EQ(s["processing_started_at"], "2026-11-23T10:00:01.000Z");
  evolve_snapshot(
      s, events::kTranscriptionFailed,
      {{"transcription_id", 5}, {"error", {{"code", "no_speech"}, {"message", "m"}}}, {"charge_micros", 16667}},
      "2026-11-23T10:00:02Z");
  EXPECT_EQ(s["status"], "failed");
  EXPECT_EQ(s["error"]["code"], "no_speech");
  EXPECT_EQ(*delivery_kind(events::kTranscriptionFailed), kTranscriptionFailed);
  evolve_snapshot(s, events::kTranscriptionRetried, {{"transcription_id", 5}, {"charge_micros", 20000}},
                  "2026-11-23T10:01:00Z");
  EXPECT_TRUE(s["error"].is_null());
  EXPECT_TRUE(s["completed_at"].is_null());
  evolve_snapshot(s, events::kTranscriptionCompleted,
                  {{"transcription_id", 5},
                   {"duration_seconds", 59.5},
                   {"detected_language", "en"},
                   {"title", "Talk"},
                   {"charge_micros", 19833}},
                  "2026-11-23T10:02:00Z");
  EXPECT_EQ(s["status"], "completed");
  EXPECT_EQ(s["stage"], "completed");
  EXPECT_EQ(s["duration_seconds"], 59.5);
  EXPECT_EQ(s["detected_language"], "en");
  EXPECT_EQ(s["title"], "Talk");
  EXPECT_DOUBLE_EQ(s["charge_usd"].get<double>(), 0.019833);
  EXPECT_EQ(s["completed_at"], "2026-11-23T10:02:00.000Z");
  EXPECT_FALSE(delivery_kind(events::kTranscriptionStageChanged).has_value());
}

}  // namespace
}  // namespace scribe::webhook
