#include "common/time.h"

#include <gtest/gtest.h>

namespace scribe {
namespace {

// 2023-11-14T22:13:20Z
constexpr int64_t kT = 1'700'000'000'000'000;

int64_t parsed(const std::string& s) {
  auto t = parse_iso8601(s);
  if (!t) {
    ADD_FAILURE() << "rejected " << s;
    return 0;
  }
  return to_unix_micros(*t);
}

TEST(Time, UnixMicrosRoundTrip) {
  EXPECT_EQ(to_unix_micros(from_unix_micros(kT + 123'456)), kT + 123'456);
  EXPECT_EQ(to_unix_micros(from_unix_micros(-1)), -1);
  const int64_t before = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
  const int64_t n = to_unix_micros(now());
  EXPECT_GE(n, before);
  EXPECT_LT(n - before, 60'000'000);
}

TEST(Time, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(to_iso8601(from_unix_micros(0)), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(to_iso8601(from_unix_micros(kT)), "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(to_iso8601(from_unix_micros(kT + 123'456)), "2023-11-14T22:13:20.123Z");  // truncated, not rounded
  EXPECT_EQ(to_iso8601(from_unix_micros(kT + 999'999)), "2023-11-14T22:13:20.999Z");
  EXPECT_EQ(to_iso8601(from_unix_micros(951'782'400'000'000)), "2000-02-29T00:00:00.000Z");
  EXPECT_EQ(to_iso8601(from_unix_micros(-1)), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(to_iso8601(from_unix_micros(-1'000'000)), "1969-12-31T23:59:59.000Z");
  EXPECT_EQ(to_iso8601(from_unix_micros(4'102'444'799'000'000)), "2099-12-31T23:59:59.000Z");
}

TEST(Time, ParsesUtcAndOffsets) {
  EXPECT_EQ(parsed("2023-11-14T22:13:20Z"), kT);
  EXPECT_EQ(parsed("2023-11-14T22:13:20z"), kT);
  EXPECT_EQ(parsed("2023-11-14T22:13:20"), kT);  // no zone: UTC
  EXPECT_EQ(parsed("2023-11-14T22:13:20.123Z"), kT + 123'000);
  EXPECT_EQ(parsed("2023-11-15T00:13:20.123+02:00"), kT + 123'000);
  EXPECT_EQ(parsed("2023-11-14T20:13:20.123-02:00"), kT + 123'000);
  EXPECT_EQ(parsed("2023-11-15T03:43:20+05:30"), kT);
  EXPECT_EQ(parsed("2023-11-14T16:43:20-05:30"), kT);
  EXPECT_EQ(parsed("2023-11-14T21:43:20-00:30"), kT);
  EXPECT_EQ(parsed("2023-11-14T22:13:20+00:00"), kT);
  // As PostgreSQL renders timestamptz: space separator, microseconds, "+HH" offset.
  EXPECT_EQ(parsed("2023-11-14 22:13:20.123456+00"), kT + 123'456);
  EXPECT_EQ(parsed("2023-11-15 00:13:20.5+02"), kT + 500'000);
  EXPECT_EQ(parsed("2023-11-14 22:13:20.000001Z"), kT + 1);
  // Across a day, month and year boundary, and a leap day.
  EXPECT_EQ(parsed("2024-01-01T01:30:00+02:00"), to_unix_micros(*parse_iso8601("2023-12-31T23:30:00Z")));
  EXPECT_EQ(parsed("2000-02-29T00:00:00Z"), 951'782'400'000'000);
  EXPECT_EQ(parsed("1970-01-01T00:00:00Z"), 0);
}

TEST(Time, RoundTripsAtMillisecondPrecision) {
  for (int64_t micros : {int64_t{0}, kT, kT + 1, kT + 999, kT + 1'000, kT + 123'456, kT + 999'999,
                         int64_t{951'782'400'000'000}, int64_t{4'102'444'799'999'999}, int64_t{-1}}) {
    TimePoint t = from_unix_micros(micros);
    std::string text = to_iso8601(t);
    auto back = parse_iso8601(text);
    ASSERT_TRUE(back.has_value()) << text;
    int64_t millis_floor = micros >= 0 ? micros / 1000 * 1000 : (micros - 999) / 1000 * 1000;
    EXPECT_EQ(to_unix_micros(*back), millis_floor) << text;
    EXPECT_EQ(to_iso8601(*back), text);
  }
  TimePoint t = now();
  auto back = parse_iso8601(to_iso8601(t));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_unix_micros(*back), to_unix_micros(t) / 1000 * 1000);
}

TEST(Time, RejectsInvalidStrings) {
  for (const char* s : {
           "",
           "not a date",
           "2023-11-14",                 // no time
           "2023-11-14T22:13",           // no seconds
           "22:13:20",                   // no date
           "2023/11/14T22:13:20Z",       // wrong date separators
           "2023-11-14X22:13:20Z",       // wrong date/time separator
           "2023-13-01T00:00:00Z",       // month 13
           "2023-00-10T00:00:00Z",       // month 0
           "2023-11-00T00:00:00Z",       // day 0
           "2023-11-32T00:00:00Z",       // day 32
           "2023-11-14T24:00:00Z",       // hour 24
           "2023-11-14T22:60:00Z",       // minute 60
           "2023-11-14T22:13:61Z",       // second 61
           "2023-11-14T22:13:-1Z",       // negative second
           "2023-11-14T22:13:20Q",       // unknown zone designator
           "2023-11-14T22:13:20 UTC",    // zone name
           "2023-11-14T22:13:20Zjunk",   // trailing text after Z
           "2023-11-14T22:13:20+",       // sign without offset
           "2023-11-14T22:13:20+xx:00",  // offset not a number
       }) {
    EXPECT_FALSE(parse_iso8601(s).has_value()) << "accepted \"" << s << "\"";
  }
}

// Inputs that parse_iso8601 accepts today but must not: each is malformed, and
// each yields a wrong instant instead of being refused (or, for NaN seconds,
// undefined behaviour). The admin CLI passes user input (--expires-at) here.
TEST(Time, RejectsMalformedFieldsInsteadOfGuessing) {
  for (const char* s : {
           "2023-11-14T-1:13:20Z",           // negative hour
           "2023-11-14T22:-5:20Z",           // negative minute
           "2023-11-14T22:13:nanZ",          // NaN seconds (cast of NaN to int64 is UB)
           "2023-11-14T22:13:20+02:00junk",  // trailing text after the offset
           "2023-02-30T00:00:00Z",           // no such day: would silently become March 2
           "2023-04-31T00:00:00Z",           // no such day
           "2023-11-14T22:13:20+25:00",      // offset hour out of range
       }) {
    EXPECT_FALSE(parse_iso8601(s).has_value()) << "accepted \"" << s << "\"";
  }
  // ISO 8601 basic-format offset: either refused or read as 5 h 30 min, never as 5 h.
  auto basic = parse_iso8601("2023-11-15T03:43:20+0530");
  if (basic) {
    EXPECT_EQ(to_unix_micros(*basic), kT) << "+0530 read as " << to_iso8601(*basic);
  }
  // Leap day exists in leap years only.
  EXPECT_TRUE(parse_iso8601("2024-02-29T00:00:00Z").has_value());
  EXPECT_FALSE(parse_iso8601("2023-02-29T00:00:00Z").has_value());
}

}  // namespace
}  // namespace scribe
