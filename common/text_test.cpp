#include "common/text.h"

#include <gtest/gtest.h>

namespace scribe {
namespace {

TEST(Text, Utf8ValidityAndLength) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x8E\xB5"));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));      // cut short
  EXPECT_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));  // above U+10FFFF
  EXPECT_EQ(utf8_length("caf\xC3\xA9"), 4u);
  EXPECT_EQ(utf8_length(""), 0u);
}

TEST(Text, ControlCharactersAreC0DelAndC1) {
  EXPECT_FALSE(has_control_chars("ref-1 caf\xC3\xA9 \xC2\xA0 \xC2\xBF"));  // NBSP and U+00BF are not controls
  EXPECT_TRUE(has_control_chars("a\tb"));
  EXPECT_TRUE(has_control_chars(std::string("a\0b", 3)));
  EXPECT_TRUE(has_control_chars("a\x7f"));
  EXPECT_TRUE(has_control_chars("a\xC2\x80"));  // U+0080, the first C1
  EXPECT_TRUE(has_control_chars("\xC2\x85z"));  // U+0085 NEL
  EXPECT_TRUE(has_control_chars("\xC2\x9F"));   // U+009F, the last C1
  EXPECT_FALSE(has_control_chars("\xC2"));      // malformed, judged by is_valid_utf8
}

TEST(Text, NumbersAsPeopleWriteThem) {
  EXPECT_EQ(format_number(0.001), "0.001");
  EXPECT_EQ(format_number(1e7), "10000000");
  EXPECT_EQ(format_number(1e9), "1000000000");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(-0.0), "0");
  EXPECT_EQ(format_number(-2.5), "-2.5");
  EXPECT_EQ(format_number(0.016667), "0.016667");
  EXPECT_EQ(format_number(25), "25");
  EXPECT_EQ(format_number(1.0 / 3), "0.333333");  // six decimals at most
  EXPECT_EQ(format_number(0.0000004), "0");
  EXPECT_EQ(format_number(1e20), "100000000000000000000");  // never an exponent
}

}  // namespace
}  // namespace scribe
