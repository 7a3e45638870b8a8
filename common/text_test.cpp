#include "common/text.h"

#include <gtest/gtest.h>

#include <optional>

namespace scribe {
namespace {

TEST(Text, HtmlEscape) {
  EXPECT_EQ(html_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(html_escape("plain"), "plain");
}

TEST(Text, Utf8ValidityAndLength) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x8E\xB5"));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));          // cut short
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

TEST(Text, LowerCasesAsciiOnly) {
  EXPECT_EQ(to_lower("Content-Type: AUDIO/MPEG"), "content-type: audio/mpeg");
  EXPECT_EQ(to_lower("caf\xC3\x89 \xC3\x89"), "caf\xC3\x89 \xC3\x89");  // UTF-8 bytes are left alone
  EXPECT_EQ(to_lower("@[`{"), "@[`{");                                  // the neighbours of A-Z and a-z
  EXPECT_EQ(to_lower(""), "");
}

TEST(Text, TrimsSpaceTabCrLfOrTheGivenCharacters) {
  EXPECT_EQ(trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(trim("ab"), "ab");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("\fa\v"), "\fa\v");  // form feed and vertical tab are not blanks here
  EXPECT_EQ(trim("\t a \n", " "), "\t a \n");
  EXPECT_EQ(trim("  a\t ", " \t"), "a");
}

TEST(Text, PercentDecodingStrictOrKeepingMalformedEscapes) {
  const auto decoded = [](std::string_view s, PercentDecoding how = {}) -> std::optional<std::string> {
    std::string out = "left over";
    if (!percent_decode(s, out, how)) return std::nullopt;
    return out;
  };
  EXPECT_EQ(decoded("my%20talk%2Emp3"), "my talk.mp3");
  EXPECT_EQ(decoded("%e2%82%ac"), "\xE2\x82\xAC");  // either case of hex digit
  EXPECT_EQ(decoded("%00"), std::string(1, '\0'));
  EXPECT_EQ(decoded(""), "");
  EXPECT_EQ(decoded("a+b"), "a+b");
  EXPECT_EQ(decoded("a+b%2B", {.plus_is_space = true}), "a b+");
  for (const char* bad : {"%", "%4", "a%zz", "%4g", "100%"}) {
    EXPECT_EQ(decoded(bad), std::nullopt) << bad;
    EXPECT_EQ(decoded(bad, {.keep_malformed = true}), bad) << bad;
  }
  EXPECT_EQ(decoded("50%+%41", {.keep_malformed = true}), "50%+A");
  // Refused, `out` holds what came before the bad escape.
  std::string out;
  EXPECT_FALSE(percent_decode("/api/v%31/me%zz/x", out));
  EXPECT_EQ(out, "/api/v1/me");
}

TEST(Text, CommaListsKeepingOrDroppingEmptyItems) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_list(" a ,b,\tc ", EmptyItems::kKeep), (V{"a", "b", "c"}));
  EXPECT_EQ(split_list("a,,b", EmptyItems::kKeep), (V{"a", "", "b"}));
  EXPECT_EQ(split_list("a,", EmptyItems::kKeep), (V{"a", ""}));
  EXPECT_EQ(split_list("", EmptyItems::kKeep), (V{""}));
  EXPECT_EQ(split_list(" a , , b ,", EmptyItems::kDrop), (V{"a", "b"}));
  EXPECT_EQ(split_list("", EmptyItems::kDrop), V{});
  EXPECT_EQ(split_list(" , ", EmptyItems::kDrop), V{});
  EXPECT_EQ(split_list("a b", EmptyItems::kDrop), (V{"a b"}));  // only commas separate
}

}  // namespace
}  // namespace scribe
