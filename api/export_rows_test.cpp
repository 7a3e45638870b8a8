// The packed-words decoder on its own (the round trip through PostgreSQL is
// in export_rows_pgtest.cpp): separators inside texts, null and empty
// punctuation, negative and large times, and malformed input.
#include "api/export_rows.h"

#include <gtest/gtest.h>

namespace scribe::api {
namespace {

TEST(UnpackWords, ReadsTextsByLength) {
  std::vector<transcript::Word> out;
  const std::optional<std::string> speaker = "SPEAKER_02";
  unpack_words("100,350,5,0:12,5:-7,1000000000000,10,2:0,0,1,-1:a?!", 42, speaker, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "12,5:");
  EXPECT_EQ(out[0].punctuation, std::optional<std::string>(""));
  EXPECT_EQ(out[0].start_ms, 100);
  EXPECT_EQ(out[0].end_ms, 350);
  EXPECT_EQ(out[0].speaker, speaker);
  EXPECT_EQ(out[0].segment_id, 42);
  EXPECT_EQ(out[1].text, "0,0,1,-1:a");
  EXPECT_EQ(out[1].punctuation, std::optional<std::string>("?!"));
  EXPECT_EQ(out[1].start_ms, -7);
  EXPECT_EQ(out[1].end_ms, 1000000000000);

  out.clear();
  unpack_words("5,6,3,-1:日", 1, std::nullopt, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "日");
  EXPECT_EQ(out[0].punctuation, std::nullopt);
  EXPECT_EQ(out[0].speaker, std::nullopt);

  out.clear();
  unpack_words("", 1, std::nullopt, out);
  EXPECT_TRUE(out.empty());
}

TEST(UnpackWords, RefusesMalformedInput) {
  std::vector<transcript::Word> out;
  for (const char* bad : {"1,2,3,-1:ab", "1,2,3:abc", "1,2,-1,-1:", "1,2,1,-2:a", "x,2,1,-1:a", "1,2,1,-1",
                          "1,2,1,3:ab", "1;2,1,-1:a", "1,2,9223372036854775807,9223372036854775807:a"})
    EXPECT_THROW(unpack_words(bad, 1, std::nullopt, out), std::runtime_error) << bad;
}

}  // namespace
}  // namespace scribe::api
