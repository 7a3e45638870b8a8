#include "enrichment/corpus.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "enrichment/synthetic_transcripts.h"

namespace scribe::enrichment {
namespace {

std::vector<std::string> sentences_of(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [b, e] : split_sentences(text)) out.push_back(text.substr(b, e - b));
  return out;
}

TEST(SplitSentences, SplitsAfterTerminalPunctuation) {
  EXPECT_EQ(sentences_of("Hello there. How are you? Fine!"),
            (std::vector<std::string>{"Hello there.", "How are you?", "Fine!"}));
  EXPECT_EQ(sentences_of("  One sentence without a stop  "), (std::vector<std::string>{"One sentence without a stop"}));
  EXPECT_TRUE(sentences_of("").empty());
  EXPECT_TRUE(sentences_of("   ").empty());
}

TEST(SplitSentences, KeepsAbbreviationsNumbersAndQuotesTogether) {
  EXPECT_EQ(sentences_of("Dr. Smith paid 3.5 dollars in the U.S. today. Then he left."),
            (std::vector<std::string>{"Dr. Smith paid 3.5 dollars in the U.S. today.", "Then he left."}));
  EXPECT_EQ(sentences_of("He said \"stop.\" She didn't... and then? Yes."),
            (std::vector<std::string>{"He said \"stop.\"", "She didn't... and then?", "Yes."}));
  EXPECT_EQ(sentences_of("J. R. R. Tolkien wrote it. Really."),
            (std::vector<std::string>{"J. R. R. Tolkien wrote it.", "Really."}));
  EXPECT_EQ(sentences_of("Wait\xE2\x80\xA6 Go on."), (std::vector<std::string>{"Wait\xE2\x80\xA6", "Go on."}));
}

TEST(Corpus, ReadsWordsAndSentencesOfEverySegment) {
  const auto t = testing::transcript_of(
      {"The NASA budget grew. NASA's new telescope launched.", "Yeah, um, the telescope works well-known ways."});
  const Corpus c(t);
  ASSERT_EQ(c.segment_count(), 2);
  ASSERT_EQ(c.sentences().size(), 3u);
  EXPECT_EQ(c.sentence_text(c.sentences()[0]), "The NASA budget grew.");
  EXPECT_EQ(c.sentence_text(c.sentences()[1]), "NASA's new telescope launched.");
  EXPECT_EQ(c.sentence_text(c.sentences()[2]), "Yeah, um, the telescope works well-known ways.");
  EXPECT_EQ(c.segment_sentence_begin(1), 2);
  EXPECT_EQ(c.segment_word_begin(1), 8);
  const auto& w = c.words();
  ASSERT_EQ(w.size(), 16u);
  EXPECT_TRUE(w[0].stop);                   // "the"
  EXPECT_GE(w[1].term, 0);                  // "nasa"
  EXPECT_EQ(w[1].term, w[4].term);          // "NASA's" is the same term as "NASA"
  EXPECT_EQ(c.display(w[1].form), "NASA");  // capitalized mid-sentence every time
  EXPECT_TRUE(c.proper(w[1].form));
  EXPECT_FALSE(c.proper(w[2].form));  // "budget"
  EXPECT_TRUE(w[8].filler);           // "yeah"
  EXPECT_EQ(w[8].term, -1);
  EXPECT_TRUE(w[9].phrase_start);    // "um" after a comma
  EXPECT_TRUE(w[14].hyphen_before);  // "well-known"
  EXPECT_EQ(w[6].term, w[11].term);  // "telescope" in both segments
  EXPECT_EQ(c.term_frequency(w[6].term), 2);
  EXPECT_EQ(c.find_stem("telescop"), w[6].term);
  EXPECT_EQ(c.find_stem("nothing"), -1);
  EXPECT_EQ(c.recording_end(), t.duration_seconds);
}

TEST(Corpus, RareTermsWeighMore) {
  const auto t =
      testing::transcript_of({"Pasta and sauce tonight.", "More pasta with garlic.", "Pasta again, please."});
  const Corpus c(t);
  const int pasta = c.find_stem("pasta");
  const int garlic = c.find_stem("garlic");
  ASSERT_GE(pasta, 0);
  ASSERT_GE(garlic, 0);
  EXPECT_GT(c.idf(garlic), c.idf(pasta));
}

TEST(Corpus, NounsFollowDeterminersAndVerbsFollowPronouns) {
  const auto t = testing::transcript_of({"The magma rises. The magma cools.", "They stay here. We stay there."});
  const Corpus c(t);
  EXPECT_GT(c.noun_factor(c.words()[1].form), 1.0);  // "magma"
  EXPECT_LT(c.noun_factor(c.words()[7].form), 1.0);  // "stay"
}

TEST(Corpus, EmptyTranscriptsAndEmptySegments) {
  const transcript::TranscriptArtifact nothing;
  const Corpus empty(nothing);
  EXPECT_EQ(empty.segment_count(), 0);
  EXPECT_TRUE(empty.words().empty());
  const auto blanks = testing::transcript_of({"", "  ", "?!"});
  const Corpus blank(blanks);
  EXPECT_EQ(blank.segment_count(), 3);
  EXPECT_TRUE(blank.words().empty());
  EXPECT_EQ(blank.segment_word_begin(3), 0);
}

}  // namespace
}  // namespace scribe::enrichment
