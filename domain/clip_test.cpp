#include "domain/clip.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "domain/events.h"
#include "domain/wallet.h"
#include "tests/error_of.h"

namespace scribe::clip {
namespace {

using testing::error_of;

const TimePoint kT0 = *parse_iso8601("2026-11-26T10:00:00.000Z");

Request valid() {
  Request r;
  r.transcription_id = 12;
  r.start_seconds = 10;
  r.end_seconds = 40;
  return r;
}

std::string reason_of(const Error& e) { return e.extras().value("reason", ""); }
std::string field_of(const Error& e) { return e.extras().value("field", ""); }

account::State funded(money::Micros balance) {
  account::State s;
  for (auto& e : account::open(1, "c@example.com", plans::Tier::Pro)) account::apply(s, e.type, e.data);
  for (auto& e : account::deposit(s, balance, "test")) account::apply(s, e.type, e.data);
  return s;
}

void apply_all(account::State& s, const std::vector<eventstore::NewEvent>& events) {
  for (const auto& e : events) account::apply(s, e.type, e.data);
}

TEST(ClipRequest, DefaultsAndSpecValuesPass) {
  EXPECT_NO_THROW(check_request(valid()));
  for (const char* a : {"9:16", "1:1", "16:9"}) {
    auto r = valid();
    r.aspect = a;
    EXPECT_NO_THROW(check_request(r)) << a;
  }
  for (const char* s : {"captions", "karaoke", "minimal"}) {
    auto r = valid();
    r.style = s;
    EXPECT_NO_THROW(check_request(r)) << s;
  }
  for (const char* o : {"audiogram", "video", "audio"}) {
    auto r = valid();
    r.output = o;
    EXPECT_NO_THROW(check_request(r)) << o;
  }
}

TEST(ClipRequest, LengthIsOneToSixtySecondsAndLongerIsAFeatureNotEnabled) {
  auto r = valid();
  r.end_seconds = r.start_seconds + 1;
  EXPECT_NO_THROW(check_request(r));
  r.end_seconds = r.start_seconds + 60;
  EXPECT_NO_THROW(check_request(r));
  r.end_seconds = r.start_seconds + 0.99;
  auto e = error_of([&] { check_request(r); });
  EXPECT_EQ(e.code(), "invalid_request");
  EXPECT_EQ(reason_of(e), "");
  r.end_seconds = r.start_seconds + 61;
  e = error_of([&] { check_request(r); });
  EXPECT_EQ(e.code(), "invalid_request");
  EXPECT_EQ(reason_of(e), "feature_unavailable");
  r.end_seconds = r.start_seconds + 181;
  e = error_of([&] { check_request(r); });
  EXPECT_EQ(reason_of(e), "");
  r.end_seconds = r.start_seconds - 5;
  EXPECT_EQ(field_of(error_of([&] { check_request(r); })), "end_seconds");
  r = valid();
  r.start_seconds = -1;
  EXPECT_EQ(field_of(error_of([&] { check_request(r); })), "start_seconds");
}

TEST(ClipRequest, OptionalStylesAreRefusedAsUnavailableAndUnknownOnesAsInvalid) {
  for (const char* s : {"highlight", "boxed", "none"}) {
    auto r = valid();
    r.style = s;
    auto e = error_of([&] { check_request(r); });
    EXPECT_EQ(reason_of(e), "feature_unavailable") << s;
    EXPECT_EQ(field_of(e), "style");
  }
  auto r = valid();
  r.style = "neon";
  auto e = error_of([&] { check_request(r); });
  EXPECT_EQ(reason_of(e), "");
  EXPECT_EQ(field_of(e), "style");
}

TEST(ClipRequest, EveryOptionIsChecked) {
  auto field = [](auto mutate) {
    auto r = valid();
    mutate(r);
    return field_of(error_of([&] { check_request(r); }));
  };
  EXPECT_EQ(field([](Request& r) { r.aspect = "4:3"; }), "aspect");
  EXPECT_EQ(field([](Request& r) { r.output = "gif"; }), "output");
  EXPECT_EQ(field([](Request& r) { r.caption_position = "top"; }), "caption_position");
  EXPECT_EQ(field([](Request& r) { r.words_per_line = 0; }), "words_per_line");
  EXPECT_EQ(field([](Request& r) { r.words_per_line = 7; }), "words_per_line");
  EXPECT_EQ(field([](Request& r) { r.highlight_color = "#FFF"; }), "highlight_color");
  EXPECT_EQ(field([](Request& r) { r.highlight_color = "#GG0000"; }), "highlight_color");
  EXPECT_EQ(field([](Request& r) { r.framing = "zoom"; }), "framing");
  EXPECT_EQ(field([](Request& r) { r.title = std::string(121, 'a'); }), "title");
  for (const char* bad : {"bell\x07", "two\nlines", "tab\there", "cr\r", "del\x7f", "c1\xC2\x85", "bad\xC3"})
    EXPECT_EQ(field([&](Request& r) { r.title = bad; }), "title") << bad;
  EXPECT_EQ(field([](Request& r) { r.client_nonce = "not-a-uuid"; }), "client_nonce");
  auto r = valid();
  r.title = std::string(40, 'a') + "\xC3\xA9\xC3\xA9";  // 42 code points, 44 bytes
  r.client_nonce = "0f8fad5b-d9cb-469f-a165-70867728950E";
  EXPECT_NO_THROW(check_request(r));
}

TEST(ClipNonce, UuidsAreComparedInCanonicalLowerCaseForm) {
  const std::string lower = "0f8fad5b-d9cb-469f-a165-70867728950e";
  EXPECT_EQ(canonical_uuid(lower), lower);
  EXPECT_EQ(canonical_uuid("0F8FAD5B-D9CB-469F-A165-70867728950E"), lower);
  EXPECT_EQ(canonical_uuid("0f8FAD5b-d9Cb-469f-A165-70867728950e"), lower);
  // Not UUIDs in the 8-4-4-4-12 form: no canonical form (400 client_nonce).
  for (const char* s : {"", "not-a-uuid", "0f8fad5bd9cb469fa16570867728950e", "{0f8fad5b-d9cb-469f-a165-70867728950e}",
                        "urn:uuid:0f8fad5b-d9cb-469f-a165-70867728950e", " 0f8fad5b-d9cb-469f-a165-70867728950e",
                        "0f8fad5b-d9cb-469f-a165-70867728950g", "0f8fad5b-d9cb-469f-a165_70867728950e"}) {
    EXPECT_FALSE(canonical_uuid(s).has_value()) << s;
    auto r = valid();
    r.client_nonce = s;
    EXPECT_EQ(field_of(error_of([&] { check_request(r); })), "client_nonce") << s;
  }
  // The requested clip keeps the canonical form, the one later requests are compared with.
  auto r = valid();
  r.client_nonce = "0F8FAD5B-D9CB-469F-A165-70867728950E";
  EXPECT_EQ(requested(1, 2, std::nullopt, r, 50'000, false, kT0).data.at("client_nonce"), lower);
  r.client_nonce.reset();
  EXPECT_TRUE(requested(1, 2, std::nullopt, r, 50'000, false, kT0).data.at("client_nonce").is_null());
}

TEST(ClipRequest, RangeMustLieWithinTheRecording) {
  auto r = valid();
  EXPECT_NO_THROW(check_range(r, 40.02));
  auto e = error_of([&] { check_range(r, 39.9); });
  EXPECT_EQ(e.code(), "invalid_request");
  EXPECT_EQ(field_of(e), "end_seconds");
}

TEST(ClipCharge, FiveCentsPerStartedMinute) {
  EXPECT_EQ(charge(1), 50'000);
  EXPECT_EQ(charge(30), 50'000);
  EXPECT_EQ(charge(60), 50'000);
  EXPECT_EQ(charge(60.5), 100'000);
  EXPECT_EQ(charge(180), 150'000);
}

TEST(ClipAdmission, TenInProgressThenRateLimited) {
  auto acc = funded(10'000'000);
  for (int i = 1; i <= 10; ++i) {
    EXPECT_NO_THROW(check_admission(acc, false, kT0)) << i;
    apply_all(acc, wallet::place_hold(acc, {hold_id(i), 50'000, std::nullopt, std::nullopt, "clip", {}}, kT0));
  }
  // Transcription holds do not count toward the clip limit.
  apply_all(acc, wallet::place_hold(acc, {"transcription-1-1", 50'000, std::nullopt, std::nullopt, "transcription", {}},
                                    kT0));
  EXPECT_EQ(in_progress(acc), 10);
  auto e = error_of([&] { check_admission(acc, false, kT0); });
  EXPECT_EQ(e.code(), "rate_limited");
  EXPECT_EQ(reason_of(e), "clips_in_progress");
  // A settled one frees a slot.
  apply_all(acc, wallet::settle_hold(acc, hold_id(3), 50'000, kT0));
  EXPECT_NO_THROW(check_admission(acc, false, kT0));
}

TEST(ClipAdmission, FiveNewVideoDownloadsPerDay) {
  auto acc = funded(10'000'000);
  for (int i = 0; i < 5; ++i) {
    EXPECT_NO_THROW(check_admission(acc, true, kT0 + std::chrono::hours(i)));
    auto ev = accepted(1, i + 1, 7, true, kT0 + std::chrono::hours(i));
    account::apply(acc, ev.type, ev.data);
  }
  // Clips that download nothing are not limited by it.
  EXPECT_NO_THROW(check_admission(acc, false, kT0 + std::chrono::hours(5)));
  auto e = error_of([&] { check_admission(acc, true, kT0 + std::chrono::hours(5)); });
  EXPECT_EQ(reason_of(e), "source_video_daily_cap");
  // The oldest leaves the window 24 h after it started: 19 h later.
  EXPECT_EQ(e.extras().at("retry_after").get<int64_t>(), 19 * 3600 + 1);
  EXPECT_NO_THROW(check_admission(acc, true, kT0 + std::chrono::hours(24) + std::chrono::seconds(1)));
}

TEST(ClipLifecycle, CompletesOrFailsOnceAndCarriesWhatWebhooksNeed) {
  auto r = valid();
  r.callback_url = "https://hooks.example.com/x";
  r.title = "Moment";
  auto req = requested(5, 1, 9, r, 50'000, false, kT0);
  State s;
  apply(s, req.type, req.data);
  s.version = 1;
  EXPECT_EQ(s.status, kQueued);
  EXPECT_EQ(s.hold, "clip-5");
  EXPECT_EQ(s.charge, 50'000);

  Rendered out{30.0, "k/clip.mp4", "clip.mp4", "video/mp4", 1234, "k/clip.srt"};
  auto done = completed(s, out, 50'000, kT0 + std::chrono::seconds(20));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->data.at("key_id"), 9);
  EXPECT_EQ(done->data.at("callback_url"), "https://hooks.example.com/x");
  EXPECT_EQ(done->data.at("clip").at("status"), kCompleted);
  EXPECT_EQ(done->data.at("clip").at("title"), "Moment");
  apply(s, done->type, done->data);
  EXPECT_EQ(s.status, kCompleted);
  // Finished: neither outcome can be decided again.
  EXPECT_FALSE(completed(s, out, 50'000, kT0).has_value());
  EXPECT_FALSE(failed(s, "render_failed", "x", kT0).has_value());

  State f;
  apply(f, req.type, req.data);
  auto no = failed(f, "render_failed", "ffmpeg exited 1", kT0);
  ASSERT_TRUE(no.has_value());
  EXPECT_EQ(no->data.at("clip").at("error").at("code"), "render_failed");
  EXPECT_EQ(no->data.at("clip").at("charge_micros"), 0);
}

TEST(ClipView, LinksAreSignedForAnHourOnlyOnceCompleted) {
  auto r = valid();
  auto req = requested(5, 1, std::nullopt, r, 50'000, false, kT0);
  Json queued = requested_view(req.data);
  Json j = to_json(queued, 5, "https://scribe.example", "secret", kT0);
  EXPECT_EQ(j.at("status"), "queued");
  EXPECT_TRUE(j.at("file_url").is_null());
  EXPECT_TRUE(j.at("duration_seconds").is_null());
  EXPECT_DOUBLE_EQ(j.at("charge_usd").get<double>(), 0.05);

  State s;
  apply(s, req.type, req.data);
  auto done = completed(s, {30.0, "k", "clip.mp4", "video/mp4", 1, "s"}, 50'000, kT0);
  j = to_json(done->data.at("clip"), 5, "https://scribe.example", "secret", kT0);
  const std::string url = j.at("file_url");
  EXPECT_EQ(j.at("mp4_url"), url);
  EXPECT_EQ(url.rfind("https://scribe.example/clips/files/5/clip.mp4?expires=", 0), 0u) << url;
  const int64_t expires = to_unix_micros(kT0) / 1'000'000 + 3600;
  EXPECT_NE(url.find("expires=" + std::to_string(expires)), std::string::npos);
  EXPECT_EQ(j.at("mp4_url_expires_at"), to_iso8601(kT0 + std::chrono::hours(1)));
  const std::string sig = link_signature("secret", 5, "clip.mp4", expires);
  EXPECT_NE(url.find(sig), std::string::npos);
  EXPECT_TRUE(verify_link("secret", 5, "clip.mp4", expires, sig, expires));
  EXPECT_FALSE(verify_link("secret", 5, "clip.mp4", expires, sig, expires + 1));  // expired
  EXPECT_FALSE(verify_link("secret", 6, "clip.mp4", expires, sig, expires));      // another clip
  EXPECT_FALSE(verify_link("other", 5, "clip.mp4", expires, sig, expires));
  EXPECT_FALSE(verify_link("secret", 5, "clip.srt", expires, sig, expires));

  // Audio: a file link, no MP4 link.
  State a;
  apply(a, req.type, req.data);
  auto m4a = completed(a, {30.0, "k", "clip.m4a", "audio/mp4", 1, "s"}, 50'000, kT0);
  j = to_json(m4a->data.at("clip"), 5, "https://scribe.example", "secret", kT0);
  EXPECT_FALSE(j.at("file_url").is_null());
  EXPECT_TRUE(j.at("mp4_url").is_null());
  EXPECT_TRUE(j.at("mp4_url_expires_at").is_null());
}

}  // namespace
}  // namespace scribe::clip
