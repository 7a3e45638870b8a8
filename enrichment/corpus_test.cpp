#include "enrichment/corpus.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "enrichment/synthetic_transcripts.h"
#include "enrichment/text.h"
#include "lexicon/wordnet.h"

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

// The recognizer's words of each segment, one per token, with confidences.
void set_confidences(transcript::TranscriptArtifact& t, const std::vector<std::vector<double>>& confidences) {
  for (std::size_t i = 0; i < t.segments.size() && i < confidences.size(); ++i) {
    auto& s = t.segments[i];
    s.words.clear();
    for (const auto& tok : tokenize(s.text)) s.words.push_back({tok.text, s.start, s.end, 0, std::nullopt});
    for (std::size_t k = 0; k < s.words.size() && k < confidences[i].size(); ++k)
      s.words[k].confidence = confidences[i][k];
  }
}

int form_of(const Corpus& c, const std::string& word) {
  for (const auto& w : c.words())
    if (c.form(w.form) == word) return w.form;
  return -1;
}

TEST(CorpusEvidence, WordNetLowersWordsThatAreNoNouns) {
  if (!lexicon::wordnet_available()) GTEST_SKIP() << "WordNet (wordnet-base) is not installed";
  // "stretched" and "gently" sit where nouns sit ("the"), but WordNet knows
  // them only as a verb and an adverb; "starter" is a noun.
  const auto t = testing::transcript_of({"The starter rests. The stretched dough rests. The gently folded dough."});
  const Corpus with(t);
  LabelOptions off;
  off.parts_of_speech = false;
  const Corpus without(t, off);
  for (const char* word : {"stretched", "gently"}) {
    const int f = form_of(with, word);
    ASSERT_GE(f, 0) << word;
    EXPECT_LT(with.noun_factor(f), 0.5 * without.noun_factor(f)) << word;
  }
  const int starter = form_of(with, "starter");
  EXPECT_DOUBLE_EQ(with.noun_factor(starter), without.noun_factor(starter));
  // A name WordNet lacks keeps what its context says.
  const auto named = testing::transcript_of({"The Zorblax team won. Zorblax played well."});
  LabelOptions named_off;
  named_off.parts_of_speech = false;
  const Corpus a(named), b(named, named_off);
  EXPECT_DOUBLE_EQ(a.noun_factor(form_of(a, "zorblax")), b.noun_factor(form_of(b, "zorblax")));
}

TEST(CorpusEvidence, UnsureWordsWeighLessAndNoConfidencesWeighAllAlike) {
  auto t = testing::transcript_of({"The carl reef grows slowly.", "The reef shelters carl fish."});
  // "carl" (a misheard "coral") heard at 0.2 and 0.3; the rest at 0.9.
  set_confidences(t, {{0.9, 0.2, 0.9, 0.9, 0.9}, {0.9, 0.9, 0.9, 0.3, 0.9}});
  const Corpus c(t);
  EXPECT_DOUBLE_EQ(c.heard_factor(form_of(c, "reef")), 1.0);
  // Mean 0.25 over the sure confidence (0.4 by default), above the floor 0.3.
  EXPECT_NEAR(c.heard_factor(form_of(c, "carl")), 0.25 / LabelOptions{}.sure_confidence, 1e-9);
  LabelOptions strict;
  strict.sure_confidence = 0.9;
  const Corpus s(t, strict);
  EXPECT_DOUBLE_EQ(s.heard_factor(form_of(s, "carl")), strict.heard_floor);
  LabelOptions off;
  off.confidence = false;
  const Corpus without(t, off);
  EXPECT_DOUBLE_EQ(without.heard_factor(form_of(without, "carl")), 1.0);
  // No confidences at all (an engine that gives none): every word alike.
  const auto plain = testing::transcript_of({"The carl reef grows slowly."});
  const Corpus p(plain);
  EXPECT_DOUBLE_EQ(p.heard_factor(form_of(p, "carl")), 1.0);
  // Words that do not line up with the tokens (an edited text) say nothing.
  auto edited = testing::transcript_of({"The reef grows.", "The carl reef grows slowly."});
  set_confidences(edited, {{0.9, 0.3, 0.9}, {0.9, 0.2, 0.9, 0.9, 0.9}});
  edited.segments[1].words.pop_back();
  const Corpus e(edited);
  EXPECT_DOUBLE_EQ(e.heard_factor(form_of(e, "carl")), 1.0);
  EXPECT_NEAR(e.heard_factor(form_of(e, "reef")), 0.3 / LabelOptions{}.sure_confidence, 1e-9);
}

}  // namespace
}  // namespace scribe::enrichment
