#include "enrichment/labels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "enrichment/structure.h"
#include "enrichment/synthetic_transcripts.h"

namespace scribe::enrichment {
namespace {

// True when `text` is whole sentences of the transcript joined by spaces,
// each a verbatim slice of one segment's text.
bool is_verbatim_sentences(const transcript::TranscriptArtifact& t, std::string text) {
  while (!text.empty()) {
    bool matched = false;
    for (const auto& s : t.segments) {
      for (std::size_t len = text.size(); len > 0 && !matched; --len) {
        if (len < text.size() && text[len] != ' ') continue;
        if (s.text.find(text.substr(0, len)) != std::string::npos) {
          text = len < text.size() ? text.substr(len + 1) : std::string();
          matched = true;
        }
      }
      if (matched) break;
    }
    if (!matched) return false;
  }
  return true;
}

TEST(Summary, QuotesTheMostCentralSentences) {
  std::vector<int> truth;
  const auto t = testing::episode_transcript(&truth);
  const Corpus corpus(t);
  const auto spans = spans_from_boundaries(corpus.segment_count(), truth);
  for (const Span& span : spans) {
    const SpanTerms terms = span_terms(corpus, span, Steering{});
    const std::string summary = summarize(corpus, span, terms, Steering{}, 2, kSummaryBytes);
    EXPECT_FALSE(summary.empty());
    EXPECT_LE(summary.size(), kSummaryBytes);
    EXPECT_TRUE(is_verbatim_sentences(t, summary)) << summary;
  }
  // The money section is summed up by its interest-rate sentences, not its greeting.
  const Span money = spans[3];
  const std::string summary = summarize(corpus, money, span_terms(corpus, money, Steering{}), Steering{}, 2, 300);
  EXPECT_NE(summary.find("interest rates"), std::string::npos) << summary;
}

TEST(Summary, ScoresFavourLongCentralStatementsOverQuestionsAndFillers) {
  const auto t = testing::transcript_of({
      "Yeah.",
      "What about the telescope?",
      "The telescope mirror collects faint infrared light from distant galaxies every night.",
      "The telescope orbits far from earth.",
  });
  const Corpus corpus(t);
  const Span all{0, 4};
  const auto scores = sentence_scores(corpus, all, span_terms(corpus, all, Steering{}), Steering{});
  ASSERT_EQ(scores.size(), 4u);
  EXPECT_EQ(scores[0], 0);  // nothing but a filler
  EXPECT_GT(scores[2], scores[1]);
  EXPECT_GT(scores[2], scores[3]);
  const auto picked = pick_sentences(corpus, 0, scores, 2);
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0], 2);
}

TEST(Summary, AnOverlongSentenceIsCutAtAWordWithAnEllipsis) {
  std::string sentence = "The orchestra";
  for (int i = 0; i < 60; ++i) sentence += " played melody number " + std::to_string(i);
  sentence += ".";
  const auto t = testing::transcript_of({sentence});
  const Corpus corpus(t);
  const std::string summary = join_sentences(corpus, {0}, 120);
  EXPECT_LE(summary.size(), 120u);
  ASSERT_TRUE(summary.ends_with("\xE2\x80\xA6"));
  const std::string kept = summary.substr(0, summary.size() - 3);
  EXPECT_TRUE(sentence.starts_with(kept));
  EXPECT_EQ(sentence[kept.size()], ' ');  // cut between words
}

TEST(Summary, SecondSentenceOnlyWhenItFits) {
  // Built with append: GCC 12 at -O2 misreads `std::string(n, c) + "..."` here (-Warray-bounds).
  std::string long_sentence(200, 'a');
  long_sentence.append(" tail.");
  const auto t = testing::transcript_of({"Short first sentence here.", long_sentence});
  const Corpus corpus(t);
  EXPECT_EQ(join_sentences(corpus, {0, 1}, 100), "Short first sentence here.");
  EXPECT_EQ(join_sentences(corpus, {1, 0}, 1000), t.segments[0].text + " " + t.segments[1].text);  // time order
  EXPECT_EQ(join_sentences(corpus, {}, 100), "");
}

}  // namespace
}  // namespace scribe::enrichment
