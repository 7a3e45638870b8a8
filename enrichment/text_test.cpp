#include "enrichment/text.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace scribe::enrichment {
namespace {

// The examples Porter's 1980 paper gives for each step, and some of the
// reference vocabulary's pairs.
TEST(PorterStemmer, PaperExamples) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // Step 1a
      {"caresses", "caress"},
      {"ponies", "poni"},
      {"ties", "ti"},
      {"caress", "caress"},
      {"cats", "cat"},
      // Step 1b
      {"feed", "feed"},
      {"agreed", "agre"},  // then step 5a removes the e of "agree" (m=1, not *o)
      {"plastered", "plaster"},
      {"bled", "bled"},
      {"motoring", "motor"},
      {"sing", "sing"},
      {"conflated", "conflat"},
      {"troubled", "troubl"},
      {"sized", "size"},
      {"hopping", "hop"},
      {"tanned", "tan"},
      {"falling", "fall"},
      {"hissing", "hiss"},
      {"fizzed", "fizz"},
      {"failing", "fail"},
      {"filing", "file"},
      // Step 1c
      {"happy", "happi"},
      {"sky", "sky"},
      // Steps 2 to 5, whole words
      {"relational", "relat"},
      {"conditional", "condit"},
      {"rational", "ration"},
      {"digitizer", "digit"},
      {"operator", "oper"},
      {"feudalism", "feudal"},
      {"decisiveness", "decis"},
      {"hopefulness", "hope"},
      {"callousness", "callous"},
      {"formality", "formal"},
      {"sensitivity", "sensit"},
      {"sensibility", "sensibl"},
      {"triplicate", "triplic"},
      {"formative", "form"},
      {"formalize", "formal"},
      {"electricity", "electr"},
      {"electrical", "electr"},
      {"hopeful", "hope"},
      {"goodness", "good"},
      {"revival", "reviv"},
      {"allowance", "allow"},
      {"inference", "infer"},
      {"airliner", "airlin"},
      {"gyroscopic", "gyroscop"},
      {"adjustable", "adjust"},
      {"defensible", "defens"},
      {"irritant", "irrit"},
      {"replacement", "replac"},
      {"adjustment", "adjust"},
      {"dependent", "depend"},
      {"adoption", "adopt"},
      {"homologous", "homolog"},
      {"communism", "commun"},
      {"activate", "activ"},
      {"angularity", "angular"},
      {"effective", "effect"},
      {"bowdlerize", "bowdler"},
      {"probate", "probat"},
      {"rate", "rate"},
      {"cease", "ceas"},
      {"controlling", "control"},
      {"roll", "roll"},
      {"generalizations", "gener"},
      {"oscillators", "oscil"},
      // The later corrections: "bli" -> "ble" and "logi" -> "log".
      {"possibly", "possibl"},
      {"possible", "possibl"},
      {"archaeology", "archaeolog"},
      // Everyday words.
      {"running", "run"},
      {"connection", "connect"},
      {"connected", "connect"},
      {"connecting", "connect"},
      {"galaxies", "galaxi"},
      {"galaxy", "galaxi"},
      {"interest", "interest"},
      {"rates", "rate"},
  };
  for (const auto& [word, stem] : cases) EXPECT_EQ(porter_stem(word), stem) << word;
}

TEST(PorterStemmer, LeavesShortAndNonAlphabeticWordsAlone) {
  EXPECT_EQ(porter_stem("is"), "is");
  EXPECT_EQ(porter_stem("as"), "as");
  EXPECT_EQ(porter_stem("don't"), "don't");
  EXPECT_EQ(porter_stem("2024"), "2024");
  EXPECT_EQ(porter_stem(""), "");
}

TEST(Tokenizer, LowerCasesAndKeepsOffsets) {
  const std::string text = "Well, NASA's rover (Perseverance) landed in 2021!";
  const auto tokens = tokenize(text);
  ASSERT_EQ(tokens.size(), 7u);
  EXPECT_EQ(tokens[0].text, "well");
  EXPECT_EQ(tokens[1].text, "nasa's");
  EXPECT_EQ(text.substr(tokens[1].begin, tokens[1].end - tokens[1].begin), "NASA's");
  EXPECT_EQ(tokens[3].text, "perseverance");
  EXPECT_EQ(text.substr(tokens[3].begin, tokens[3].end - tokens[3].begin), "Perseverance");
  EXPECT_EQ(tokens[6].text, "2021");
}

TEST(Tokenizer, ApostrophesInsideWordsOnly) {
  EXPECT_EQ(words("I don't know 'cause the players' fans"),
            (std::vector<std::string>{"i", "don't", "know", "cause", "the", "players", "fans"}));
  // The typographic apostrophe reads as the ASCII one; other UTF-8 separates words.
  EXPECT_EQ(words("don\xE2\x80\x99t stop \xE2\x80\x94 caf\xC3\xA9"),
            (std::vector<std::string>{"don't", "stop", "caf"}));
  EXPECT_TRUE(words("").empty());
  EXPECT_TRUE(words(" ... ?! ").empty());
}

TEST(Words, StopAndFillerLists) {
  EXPECT_TRUE(is_stop_word("the"));
  EXPECT_TRUE(is_stop_word("don't"));
  EXPECT_FALSE(is_stop_word("galaxy"));
  EXPECT_TRUE(is_filler_word("yeah"));
  EXPECT_TRUE(is_filler_word("basically"));
  EXPECT_FALSE(is_filler_word("telescope"));
}

TEST(Titles, TitleCaseKeepsSmallWordsAndAcronyms) {
  EXPECT_EQ(title_case({"history", "of", "the", "roman", "empire"}), "History of the Roman Empire");
  EXPECT_EQ(title_case({"the", "nasa", "budget"}), "The Nasa Budget");
  EXPECT_EQ(title_case({"NASA", "and", "iPhone", "sales"}), "NASA and iPhone Sales");
  EXPECT_EQ(title_case({"what", "to", "cook", "with"}), "What to Cook With");
}

TEST(Titles, CutAtWordBoundary) {
  EXPECT_EQ(cut_at_word("short title", 80), "short title");
  EXPECT_EQ(cut_at_word("alpha beta gamma", 12), "alpha beta");
  EXPECT_EQ(cut_at_word("alpha beta, gamma", 12), "alpha beta");
  EXPECT_EQ(cut_at_word("alpha beta gamma", 10), "alpha beta");
  EXPECT_EQ(cut_at_word("supercalifragilistic", 5), "super");
  EXPECT_EQ(cut_at_word("caf\xC3\xA9", 4), "caf");
}

}  // namespace
}  // namespace scribe::enrichment
