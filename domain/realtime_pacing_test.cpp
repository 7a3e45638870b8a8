#include "domain/realtime_pacing.h"

#include <gtest/gtest.h>

namespace scribe::realtime {
namespace {

TEST(RealtimePacing, RealTimeAndABurstAreFineThenWarnedThenRefused) {
  EXPECT_EQ(pace(10, 10), Pace::Ok);
  EXPECT_EQ(pace(5, 0.5), Pace::Ok);  // a resumed client resending 4.5 s
  EXPECT_EQ(pace(6, 0.5), Pace::SlowDown);
  EXPECT_EQ(pace(10.4, 0.5), Pace::SlowDown);
  EXPECT_EQ(pace(10.6, 0.5), Pace::TooFast);
  EXPECT_EQ(pace(2, 30), Pace::Ok);  // a client behind the clock is never refused
  EXPECT_EQ(pace(3, 0, PaceLimits{1, 2}), Pace::TooFast);
}

TEST(RealtimePacing, PartialsWaitOnlyWhileTheReaderKeepsUp) {
  EXPECT_EQ(partial_fate(0), PartialFate::Send);
  EXPECT_EQ(partial_fate(kSlowReaderBytes - 1), PartialFate::Send);
  EXPECT_EQ(partial_fate(kSlowReaderBytes), PartialFate::Skip);
  EXPECT_EQ(partial_fate(10, 10), PartialFate::Skip);
}

TEST(RealtimePacing, CapWarningOnceInTheLastMinute) {
  EXPECT_DOUBLE_EQ(remaining_cap_seconds(5, 100), 200);
  EXPECT_DOUBLE_EQ(remaining_cap_seconds(1, 75), 0);
  EXPECT_FALSE(cap_warning_due(5, 239, false));
  EXPECT_TRUE(cap_warning_due(5, 240, false));
  EXPECT_FALSE(cap_warning_due(5, 250, true));
  EXPECT_TRUE(cap_warning_due(1, 0, false));  // a one-minute cap is all last minute
}

TEST(RealtimePacing, IdleAtTheLimit) {
  EXPECT_FALSE(idle(29.9, 30));
  EXPECT_TRUE(idle(30, 30));
}

}  // namespace
}  // namespace scribe::realtime
