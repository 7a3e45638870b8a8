#include "domain/transcription.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "domain/events.h"

namespace scribe::transcription {
namespace {

State processing(int attempt) {
  State s;
  s.exists = true;
  s.id = 7;
  s.status = kProcessing;
  s.stage = "queued";
  s.attempt = attempt;
  return s;
}

TEST(StageChanged, RecordsTheStageOfTheCurrentAttempt) {
  auto e = stage_changed(processing(2), 2, "transcribing");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, events::kTranscriptionStageChanged);
  EXPECT_EQ(e->data.at("stage"), "transcribing");
  EXPECT_EQ(e->data.at("attempt"), 2);
  EXPECT_EQ(e->data.at("transcription_id"), 7);
  State s = processing(2);
  apply(s, e->type, e->data);
  EXPECT_EQ(s.stage, "transcribing");
  EXPECT_EQ(s.status, kProcessing);
}

TEST(StageChanged, NothingForAnAttemptThatIsNoLongerCurrent) {
  EXPECT_FALSE(stage_changed(processing(2), 1, "decoding"));  // retried since
  State done = processing(1);
  done.status = kCompleted;
  EXPECT_FALSE(stage_changed(done, 1, "decoding"));
  State gone = processing(1);
  gone.deleted = true;
  EXPECT_FALSE(stage_changed(gone, 1, "decoding"));
  EXPECT_FALSE(stage_changed(State{}, 1, "decoding"));
}

TEST(StageChanged, OnlyThePipelineStages) {
  for (const char* st : {"queued", "downloading", "decoding", "transcribing", "diarizing", "enriching"})
    EXPECT_TRUE(is_pipeline_stage(st)) << st;
  for (const char* st : {"completed", "failed", "quoted", "", "Decoding"}) EXPECT_FALSE(is_pipeline_stage(st)) << st;
  EXPECT_THROW(stage_changed(processing(1), 1, "completed"), std::invalid_argument);
}

TEST(CleanTitle, ControlCharactersAndLineBreaksBecomeOneSpace) {
  EXPECT_EQ(clean_title("a\r\n# injected"), "a # injected");
  EXPECT_EQ(clean_title("a \r\n b"), "a b");  // the spaces beside a break go with it
  EXPECT_EQ(clean_title("tab\there\x0b\x0c"
                        "and\x7f"
                        "del"),
            "tab here and del");
  EXPECT_EQ(clean_title("nel\xC2\x85"
                        "c1\xC2\x9F"
                        "end"),
            "nel c1 end");                                             // U+0085, U+009F
  EXPECT_EQ(clean_title("ls\xE2\x80\xA8ps\xE2\x80\xA9x"), "ls ps x");  // U+2028, U+2029
  EXPECT_EQ(clean_title("  \n  Talk.mp3 \r\n"), "Talk.mp3");
  // Printable text, inner spaces and non-control non-ASCII stay as they are.
  EXPECT_EQ(clean_title("caf\xC3\xA9  \xC2\xA0 \xE2\x80\x94 x"), "caf\xC3\xA9  \xC2\xA0 \xE2\x80\x94 x");
  EXPECT_EQ(clean_title(" \r\n\t "), std::nullopt);
  EXPECT_EQ(clean_title(std::nullopt), std::nullopt);
}

TEST(CleanTitle, EventsCarryTheCleanTitle) {
  Request r;
  r.source = "upload";
  r.upload_id = "upl_x";
  r.original_filename = "a\r\n# injected";
  r.title = r.original_filename;
  const auto e = created(1, 2, std::nullopt, r, 60, 0, "h");
  EXPECT_EQ(e.data.at("title"), "a # injected");
  EXPECT_EQ(e.data.at("original_filename"), "a\r\n# injected");  // the request as sent
}

TEST(CheckRequest, ClientReferenceRefusesC1ControlsAndInvalidUtf8) {
  Request r;
  r.source = "external_url";
  r.url = "https://example.com/a.mp3";
  auto field_of = [&](const std::string& ref) -> std::string {
    r.client_reference = ref;
    try {
      check_request(r);
      return "";
    } catch (const Error& e) {
      return e.extras().value("field", "?");
    }
  };
  EXPECT_EQ(field_of("order-42 caf\xC3\xA9"), "");
  EXPECT_EQ(field_of("a\xC2\x80"), "client_reference");  // U+0080
  EXPECT_EQ(field_of("a\xC2\x9F"), "client_reference");  // U+009F
  EXPECT_EQ(field_of("a\x1b"), "client_reference");
  EXPECT_EQ(field_of("a\xFF"), "client_reference");
}

std::string refusal(const std::function<void()>& f, Json* extras = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (extras) *extras = e.extras();
    return e.code();
  }
  return "";
}

TEST(RequireCompleted, EachStatusHasItsReason) {
  Json extras;
  EXPECT_EQ(refusal([] { require_completed(kCompleted); }), "");
  EXPECT_EQ(refusal([] { require_completed(kProcessing); }, &extras), "not_ready");
  EXPECT_EQ(extras["reason"], "transcription_processing");
  EXPECT_EQ(extras["retry_after"], 15);
  EXPECT_EQ(extras["status"], kProcessing);
  refusal([] { require_completed(kFailed); }, &extras);
  EXPECT_EQ(extras["reason"], "transcription_failed");
  EXPECT_FALSE(extras.contains("retry_after"));
  refusal([] { require_completed(kCancelled); }, &extras);
  EXPECT_EQ(extras["reason"], "transcription_cancelled");
  refusal([] { require_completed(kQuoted); }, &extras);
  EXPECT_EQ(extras["reason"], "not_started");
}

TEST(PostingRegenerated, CountsUpToTheLimitAndResetsOnCompletion) {
  State s = processing(1);
  apply(s, events::kTranscriptionCompleted, {{"transcription_id", 7}});
  const Json refs = {{"posting", {{"key", "k"}, {"sha256", "d"}}}};
  for (int i = 1; i <= 10; ++i) {
    auto e = posting_regenerated(s, "focus", refs);
    EXPECT_EQ(e.type, events::kPostingChaptersRegenerated);
    EXPECT_EQ(e.data["regen_count"], i);
    EXPECT_EQ(e.data["refine_prompt"], "focus");
    EXPECT_FALSE(e.data.contains("enrichment"));
    apply(s, e.type, e.data);
  }
  Json extras;
  EXPECT_EQ(refusal([&] { posting_regenerated(s, std::nullopt, refs); }, &extras), "regen_limit_exceeded");
  EXPECT_EQ(extras["regen_count"], 10);
  EXPECT_EQ(extras["regen_limit"], 10);
  // A retry that completes starts the count again.
  apply(s, events::kTranscriptionRetried,
        {{"attempt", 2}, {"charge_micros", 0}, {"billed_seconds", 60}, {"hold_id", nullptr}});
  EXPECT_EQ(refusal([&] { posting_regenerated(s, std::nullopt, refs); }), "not_ready");
  apply(s, events::kTranscriptionCompleted, {{"transcription_id", 7}});
  EXPECT_EQ(posting_regenerated(s, std::nullopt, refs).data["regen_count"], 1);
}

TEST(PostingRegenerated, CarriesTheRecomputedEnrichmentAndRefusesTheDeleted) {
  State s = processing(1);
  apply(s, events::kTranscriptionCompleted, {{"transcription_id", 7}});
  auto e = posting_regenerated(s, std::nullopt, {{"posting", "p"}, {"enrichment", "e"}});
  EXPECT_EQ(e.data["enrichment"], "e");
  EXPECT_TRUE(e.data["refine_prompt"].is_null());
  apply(s, events::kTranscriptionDeleted, {});
  EXPECT_EQ(refusal([&] { posting_regenerated(s, std::nullopt, {{"posting", "p"}}); }), "not_found");
}

}  // namespace
}  // namespace scribe::transcription
