#include "common/unicode_fold.h"

#include <gtest/gtest.h>

namespace scribe::unicode {
namespace {

TEST(UnicodeFold, AsciiIsLowerCasedAndWhitespaceFoldedToOneSpace) {
  EXPECT_EQ(fold("Ignore   PREVIOUS"), "ignore previous");
  EXPECT_EQ(fold("  ignore\tprevious\r\n"), "ignore previous");
  EXPECT_EQ(fold("ignore\n\n\vprevious\f"), "ignore previous");
  EXPECT_EQ(fold(""), "");
  EXPECT_EQ(fold(" \t "), "");
}

TEST(UnicodeFold, UnicodeSpacesAreSpaces) {
  // No-break, en quad to hair space, narrow no-break, medium mathematical,
  // ideographic, ogham, line and paragraph separators, NEL.
  for (const char* space : {"\u00A0", "\u2000", "\u2003", "\u2009", "\u200A", "\u202F", "\u205F", "\u3000", "\u1680",
                            "\u2028", "\u2029", "\u0085"})
    EXPECT_EQ(fold(std::string("ignore") + space + "previous"), "ignore previous") << space;
  EXPECT_EQ(fold("ignore\u00A0\u00A0 \tprevious"), "ignore previous");
}

TEST(UnicodeFold, InvisibleCharactersAreDroppedOrSpaced) {
  for (const char* invisible : {"\u200B", "\u200C", "\u200D", "\u2060", "\uFEFF", "\u00AD", "\u200E", "\u200F",
                                "\u202A", "\u202E", "\u2066", "\u2069", "\uFE0F", "\u180E", "\U000E0041"}) {
    EXPECT_EQ(fold(std::string("ig") + invisible + "nore"), "ignore") << invisible;
    EXPECT_EQ(fold(std::string("ignore") + invisible + "previous", Invisible::kSpace), "ignore previous") << invisible;
    EXPECT_EQ(fold(std::string("ignore ") + invisible + " previous"), "ignore previous") << invisible;
  }
  // Combining marks decorate the letter before them.
  EXPECT_EQ(fold("i\u0307gno\u0308re"), "ignore");
}

TEST(UnicodeFold, CompatibilityFormsBecomeAscii) {
  EXPECT_EQ(fold("\uFF29\uFF27\uFF2E\uFF2F\uFF32\uFF25"), "ignore");  // fullwidth ＩＧＮＯＲＥ
  EXPECT_EQ(fold("\uFF1C\uFF5C\uFF03\uFF03\uFF03\uFF1A"), "<|###:");  // fullwidth punctuation
  EXPECT_EQ(fold("\uFB01le \uFB02ow o\uFB00 \uFB03 \uFB04 \uFB06"), "file flow off ffi ffl st");  // ligatures
  EXPECT_EQ(fold("\U0001D422\U0001D420\U0001D427\U0001D428\U0001D42B\U0001D41E"), "ignore");  // bold 𝐢𝐠𝐧𝐨𝐫𝐞
  EXPECT_EQ(fold("\U0001D4BE\U0001D4C3"), "in");                                              // script small
  EXPECT_EQ(fold("\U0001D670\U0001D68A"), "aa");                                              // monospace A a
  EXPECT_EQ(fold("\U0001D7CE\U0001D7D7\U0001D7FF"), "099");                                   // mathematical digits
  EXPECT_EQ(fold("\u210Eello \u2113ove \u212A"), "hello love k");                             // letterlike
  EXPECT_EQ(fold("\u24BE\u24D6\u24DD"), "ign");                                               // circled
  EXPECT_EQ(fold("\u249C"), "(a)");                                                           // parenthesized
  EXPECT_EQ(fold("\U0001F178\U0001F156\U0001F13D"), "ign");    // negative squared, negative circled, squared
  EXPECT_EQ(fold("\u017Ftop \u0130t"), "stop it");             // long s, dotted capital I
  EXPECT_EQ(fold("\u02B0\u1D49\u02E1\u02E1\u1D52"), "hello");  // modifier letters
  EXPECT_EQ(fold("\u2160\u2164\u2169 \u2173"), "ivx iv");      // Roman numerals
  EXPECT_EQ(fold("\uFE64\uFE5F\uFE65"), "<#>");                // small form variants
}

TEST(UnicodeFold, OtherTextIsKept) {
  EXPECT_EQ(fold("Café über Straße 日本語 😀"), "café über straße 日本語 😀");
  // Cyrillic look-alikes are confusables, not compatibility forms.
  EXPECT_EQ(fold("\u0456gnore"), "\u0456gnore");
  // A malformed byte is kept as it is.
  EXPECT_EQ(fold("a\xFF"
                 "B"),
            "a\xFF"
            "b");
  EXPECT_EQ(fold("\xE2\x80"), "\xE2\x80");
  // A stray continuation byte is not the no-break space or NEL it would be as a code point.
  EXPECT_EQ(fold("a\xA0"
                 "b\x85"
                 "c"),
            "a\xA0"
            "b\x85"
            "c");
}

TEST(UnicodeFold, SpaceAt) {
  const std::string s = "a b\u00A0c\u200Bd\u3000e\u200Df";
  EXPECT_EQ(space_at(s, 0), 0u);
  EXPECT_EQ(space_at(s, 1), 1u);
  EXPECT_EQ(space_at(s, 3), 2u);   // no-break space
  EXPECT_EQ(space_at(s, 6), 3u);   // zero-width space: a word break
  EXPECT_EQ(space_at(s, 10), 3u);  // ideographic space
  EXPECT_EQ(space_at(s, 14), 0u);  // zero-width joiner joins
  EXPECT_EQ(space_at(s, 99), 0u);
  EXPECT_EQ(space_at("\xA0", 0), 0u);  // a stray continuation byte
  EXPECT_EQ(space_at("\xC3\xA0", 1), 0u);
}

}  // namespace
}  // namespace scribe::unicode
