#include "enrichment/labels.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/text.h"
#include "enrichment/structure.h"
#include "enrichment/synthetic_transcripts.h"
#include "lexicon/wordnet.h"

namespace scribe::enrichment {
namespace {

using testing::title_problem;

// The episode's sections at its true topic boundaries.
struct Episode {
  std::vector<int> truth;  // before t, which fills it
  transcript::TranscriptArtifact t = testing::episode_transcript(&truth);
  Corpus corpus{t};
  std::vector<Span> spans = spans_from_boundaries(corpus.segment_count(), truth);
};

std::vector<std::string> titles_of(const Corpus& corpus, const std::vector<Span>& spans, const Steering& steering) {
  std::vector<std::vector<Keyphrase>> phrases;
  std::vector<int> hints;
  for (const Span& s : spans) {
    phrases.push_back(keyphrases(corpus, s, span_terms(corpus, s, steering), steering));
    hints.push_back(static_cast<int>(hints.size()) + 1);
  }
  return make_titles(corpus, phrases, hints);
}

TEST(Keyphrases, NameWhatEachSectionIsAbout) {
  Episode e;
  const auto titles = titles_of(e.corpus, e.spans, Steering{});
  ASSERT_EQ(titles.size(), 6u);
  // One subject word of each topic makes it into its title.
  const std::vector<std::vector<std::string>> expected = {{"Pasta", "Dough", "Sauce"},
                                                          {"Galaxy", "Telescope", "Universe"},
                                                          {"Football", "Match", "Striker", "Season", "Goal"},
                                                          {"Interest", "Savings", "Fund", "Mortgage"},
                                                          {"Tomato", "Garden", "Plants"},
                                                          {"Sleep"}};
  for (std::size_t i = 0; i < titles.size(); ++i) {
    bool found = false;
    for (const auto& word : expected[i]) found = found || titles[i].find(word) != std::string::npos;
    EXPECT_TRUE(found) << "section " << i << " is titled \"" << titles[i] << "\"";
    EXPECT_EQ(title_problem(titles[i]), "") << titles[i];
  }
  EXPECT_EQ(titles[0], "Fresh Pasta");
  EXPECT_EQ(titles[3], "Interest Rates");
}

TEST(Keyphrases, PhrasesAreRankedAndDoNotOverlap) {
  Episode e;
  const Span pasta = e.spans[0];
  const auto phrases = keyphrases(e.corpus, pasta, span_terms(e.corpus, pasta, Steering{}), Steering{});
  ASSERT_FALSE(phrases.empty());
  EXPECT_EQ(phrase_text(e.corpus, phrases[0]), "fresh pasta");
  EXPECT_EQ(phrases[0].count, 3);
  std::set<int> terms;
  for (std::size_t i = 0; i < phrases.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(phrases[i - 1].score, phrases[i].score);
    }
    for (int t : phrases[i].terms) EXPECT_TRUE(terms.insert(t).second) << "term shared by two phrases";
  }
}

TEST(Keyphrases, SectionsOnOneSubjectGetDifferentTitles) {
  // Cooking, astronomy, cooking again, astronomy again, cooking a third time.
  testing::Lcg rng(5);
  std::vector<std::string> sentences;
  std::vector<int> starts;
  for (int k : {0, 1, 0, 1, 0}) {
    if (!sentences.empty()) starts.push_back(static_cast<int>(sentences.size()));
    for (int i = 0; i < 15; ++i) sentences.push_back(testing::topic_sentence(testing::topic_vocabularies()[k], rng));
  }
  const auto t = testing::transcript_of(sentences);
  const Corpus corpus(t);
  const auto titles = titles_of(corpus, spans_from_boundaries(corpus.segment_count(), starts), Steering{});
  std::set<std::string> seen;
  for (const auto& title : titles) {
    EXPECT_TRUE(seen.insert(to_lower(title)).second) << "duplicate title " << title;
    EXPECT_EQ(title_problem(title), "") << title;
  }
}

TEST(Keyphrases, TitlesOfSpansWithNothingToSayAreNumbered) {
  const auto t = testing::transcript_of({"Yeah.", "Okay, um, yes.", "Right."});
  const Corpus corpus(t);
  const auto titles = titles_of(corpus, {{0, 1}, {1, 2}, {2, 3}}, Steering{});
  EXPECT_EQ(titles, (std::vector<std::string>{"Part 2", "Part 3", "Part 4"}));
}

TEST(Keyphrases, LongTitlesAreCutAtAWord) {
  const auto t =
      testing::transcript_of({"Supercalifragilisticexpialidocious antidisestablishmentarianism "
                              "pneumonoultramicroscopicsilicovolcanoconiosis "
                              "floccinaucinihilipilification thyroparathyroidectomized.",
                              "Supercalifragilisticexpialidocious antidisestablishmentarianism "
                              "pneumonoultramicroscopicsilicovolcanoconiosis "
                              "floccinaucinihilipilification thyroparathyroidectomized."});
  const Corpus corpus(t);
  const auto titles = titles_of(corpus, {{0, 2}}, Steering{});
  ASSERT_EQ(titles.size(), 1u);
  EXPECT_LE(titles[0].size(), kMaxTitleBytes);
  EXPECT_EQ(title_problem(titles[0]), "") << titles[0];
}

TEST(Keyphrases, SteeringPrefersThePromptsWords) {
  Episode e;
  const std::string prompt = "focus on the emergency fund and retirement";
  const Steering steering = steering_from_prompt(e.corpus, &prompt);
  EXPECT_EQ(steering.terms.size(), 3u);  // emergency, fund, retirement
  const Span money = e.spans[3];
  const auto plain = keyphrases(e.corpus, money, span_terms(e.corpus, money, Steering{}), Steering{});
  const auto steered = keyphrases(e.corpus, money, span_terms(e.corpus, money, steering), steering);
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(steered.empty());
  EXPECT_EQ(phrase_text(e.corpus, plain[0]), "interest rates");
  const std::string top = phrase_text(e.corpus, steered[0]);
  EXPECT_TRUE(top.find("fund") != std::string::npos || top.find("retirement") != std::string::npos) << top;
  EXPECT_TRUE(steering_from_prompt(e.corpus, nullptr).empty());
}

TEST(Headlines, TakeTheWeightiestRunOfTheSentence) {
  Episode e;
  const SpanTerms pasta = span_terms(e.corpus, e.spans[0], Steering{});
  int sentence = -1;
  for (std::size_t i = 0; i < e.corpus.sentences().size(); ++i)
    if (e.corpus.sentence_text(e.corpus.sentences()[i]).starts_with("Fresh pasta cooks"))
      sentence = static_cast<int>(i);
  ASSERT_GE(sentence, 0);
  std::vector<std::string> taken;
  EXPECT_EQ(sentence_headline(e.corpus, sentence, pasta, taken), "Fresh Pasta Cooks Much Faster");
  // Taken headlines are not given twice.
  const std::string again = sentence_headline(e.corpus, sentence, pasta, taken);
  EXPECT_NE(again, "Fresh Pasta Cooks Much Faster");
  if (!again.empty()) {
    EXPECT_EQ(title_problem(again), "") << again;
  }
  EXPECT_EQ(taken.size(), again.empty() ? 1u : 2u);
}

std::string first_phrase(const transcript::TranscriptArtifact& t, const LabelOptions& o) {
  const Corpus corpus(t, o);
  const Span all{0, corpus.segment_count()};
  const auto phrases = keyphrases(corpus, all, span_terms(corpus, all, Steering{}), Steering{});
  return phrases.empty() ? "" : phrase_text(corpus, phrases.front());
}

TEST(Keyphrases, ANounPhraseHeadedByTheBestWordGoesFirst) {
  const auto t = testing::transcript_of(
      {"The baker keeps a starter in a jar.", "A sourdough starter is flour and water.", "Feed the starter every day.",
       "The starter bubbles when it is warm.", "An old sourdough starter smells sour.", "The baker bakes at dawn."});
  LabelOptions off;
  off.phrase_share = 2;
  EXPECT_EQ(first_phrase(t, off), "starter");
  EXPECT_EQ(first_phrase(t, {}), "sourdough starter");
  // A comparative before the head makes no title ("Easier Week"): without
  // WordNet to tell, it would go first.
  const auto graded = testing::transcript_of({"Every week the runner adds a little distance.",
                                              "An easier week comes every month.", "The week ends with a long run.",
                                              "The legs feel fresh that week.", "The week starts again."});
  LabelOptions blind;
  blind.parts_of_speech = false;
  EXPECT_EQ(first_phrase(graded, blind), "easier week");
  if (lexicon::wordnet_available()) {
    EXPECT_EQ(first_phrase(graded, {}), "week");
  }
  // Nor does a plural noun ("Walls Climber").
  const auto plural = testing::transcript_of({"Every climber needs a partner.",
                                              "Walls climber training starts indoors.", "The climber ties in.",
                                              "A tired climber rests on the ledge.", "The climber comes down."});
  EXPECT_EQ(first_phrase(plural, blind), "walls climber");
  if (lexicon::wordnet_available()) {
    const std::string with = first_phrase(plural, {});
    EXPECT_NE(with, "walls climber");
    EXPECT_TRUE(with.ends_with("climber")) << with;
  }
}

}  // namespace
}  // namespace scribe::enrichment
