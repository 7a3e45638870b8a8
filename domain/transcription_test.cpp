#include "domain/transcription.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace scribe::transcription
