#include "api/byte_range.h"

#include <gtest/gtest.h>

namespace scribe::api {
namespace {

TEST(ByteRange, TheThreeFormsOfOneRange) {
  ByteRange r;
  ASSERT_EQ(parse_byte_range("bytes=0-99", 1000, r), RangeAnswer::Partial);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 99u);
  ASSERT_EQ(parse_byte_range("bytes=900-", 1000, r), RangeAnswer::Partial);
  EXPECT_EQ(r.first, 900u);
  EXPECT_EQ(r.last, 999u);
  ASSERT_EQ(parse_byte_range("bytes=-100", 1000, r), RangeAnswer::Partial);
  EXPECT_EQ(r.first, 900u);
  EXPECT_EQ(r.last, 999u);
}

TEST(ByteRange, PastTheEndIsCutOrUnsatisfiable) {
  ByteRange r;
  ASSERT_EQ(parse_byte_range("bytes=500-5000", 1000, r), RangeAnswer::Partial);
  EXPECT_EQ(r.last, 999u);
  ASSERT_EQ(parse_byte_range("bytes=-5000", 1000, r), RangeAnswer::Partial);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(parse_byte_range("bytes=1000-", 1000, r), RangeAnswer::Unsatisfiable);
  EXPECT_EQ(parse_byte_range("bytes=-0", 1000, r), RangeAnswer::Unsatisfiable);
}

TEST(ByteRange, OtherFormsGetTheWholeBody) {
  ByteRange r;
  for (const char* h : {"", "items=0-1", "bytes=0-1,5-6", "bytes=5-1", "bytes=a-b", "bytes=-", "bytes=1",
                        "bytes=99999999999999999999-"})
    EXPECT_EQ(parse_byte_range(h, 1000, r), RangeAnswer::Whole) << h;
}

}  // namespace
}  // namespace scribe::api
