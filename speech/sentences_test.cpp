#include "speech/sentences.h"

#include <gtest/gtest.h>

#include <sstream>

namespace scribe::speech {
namespace {

// Builds input words fluently: each word lasts 0.3 s and follows the previous
// one after a 0.05 s gap unless pause() set a longer one.
class Words {
 public:
  Words& say(const std::string& text, std::optional<int> speaker = 0) {
    std::istringstream in(text);
    std::string w;
    while (in >> w) {
      words_.push_back({{w, t_, t_ + 0.3, 0.9}, speaker});
      t_ += 0.3 + gap_;
      gap_ = kGap;
    }
    return *this;
  }
  // A pause of `seconds` before the next word (instead of the usual gap).
  Words& pause(double seconds) {
    t_ += seconds - gap_;
    gap_ = kGap;
    return *this;
  }
  Words& raw(const std::string& text, double start, double end, std::optional<int> speaker = 0) {
    words_.push_back({{text, start, end, 1.0}, speaker});
    return *this;
  }
  const std::vector<AttributedWord>& get() const { return words_; }

 private:
  static constexpr double kGap = 0.05;
  std::vector<AttributedWord> words_;
  double t_ = 0;
  double gap_ = kGap;
};

std::vector<std::string> texts(const std::vector<Sentence>& sentences) {
  std::vector<std::string> out;
  for (const auto& s : sentences) out.push_back(s.text);
  return out;
}

std::string sentence_of(const std::string& words) { return build_sentences(Words().say(words).get()).at(0).text; }

TEST(Sentences, EmptyInputGivesNoSentences) { EXPECT_TRUE(build_sentences({}).empty()); }

TEST(Sentences, SingleWordIsCapitalizedAndEnded) {
  auto s = build_sentences(Words().raw("hello", 1.0, 1.4).get());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text, "Hello.");
  EXPECT_DOUBLE_EQ(s[0].start, 1.0);
  EXPECT_DOUBLE_EQ(s[0].end, 1.4);
  ASSERT_EQ(s[0].words.size(), 1u);
  EXPECT_EQ(s[0].words[0].text, "Hello");
  EXPECT_EQ(s[0].words[0].punctuation, ".");
  EXPECT_DOUBLE_EQ(s[0].words[0].confidence, 1.0);
}

TEST(Sentences, HardPauseAlwaysEndsASentence) {
  auto s = build_sentences(Words().say("yes").pause(1.5).say("we went home").get());
  EXPECT_EQ(texts(s), (std::vector<std::string>{"Yes.", "We went home."}));
}

TEST(Sentences, SoftPauseEndsASentenceOnlyAfterMinWords) {
  auto ended = build_sentences(Words().say("we went there").pause(0.7).say("they came back").get());
  EXPECT_EQ(texts(ended), (std::vector<std::string>{"We went there.", "They came back."}));
  auto kept = build_sentences(Words().say("we went").pause(0.7).say("there today").get());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].words.size(), 4u);
}

TEST(Sentences, ShortPauseDoesNotEndASentence) {
  auto s = build_sentences(Words().say("we went there").pause(0.4).say("yesterday").get());
  ASSERT_EQ(s.size(), 1u);
}

TEST(Sentences, SpeakerChangeEndsASentenceEvenWithoutPause) {
  auto s = build_sentences(Words().say("how are you", 0).say("fine thanks", 1).say("good", std::nullopt).get());
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].text, "How are you?");
  EXPECT_EQ(s[0].speaker, 0);
  EXPECT_EQ(s[1].text, "Fine thanks.");
  EXPECT_EQ(s[1].speaker, 1);
  EXPECT_EQ(s[2].speaker, std::nullopt);
}

TEST(Sentences, StartAndEndComeFromFirstAndLastWord) {
  auto s = build_sentences(Words().raw("one", 2.0, 2.2).raw("two", 2.3, 2.5).raw("three", 2.6, 3.1).get());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].start, 2.0);
  EXPECT_DOUBLE_EQ(s[0].end, 3.1);
  EXPECT_DOUBLE_EQ(s[0].words[1].start, 2.3);
  EXPECT_DOUBLE_EQ(s[0].words[1].end, 2.5);
}

TEST(Sentences, IdenticalTimestampsStayOneSentence) {
  auto s = build_sentences(Words().raw("a", 1, 1).raw("b", 1, 1).raw("c", 1, 1).get());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text, "A b c.");
  EXPECT_DOUBLE_EQ(s[0].start, 1);
  EXPECT_DOUBLE_EQ(s[0].end, 1);
}

TEST(Sentences, LongRunWithoutPausesIsSplitUnderMaxWords) {
  Words w;
  for (int i = 0; i < 100; ++i) w.raw("word" + std::to_string(i), i * 0.1, i * 0.1 + 0.1);  // no gaps at all
  SentenceOptions o;
  o.max_seconds = 1000;
  auto s = build_sentences(w.get(), o);
  ASSERT_GE(s.size(), 4u);
  int next = 0;
  for (const auto& sentence : s) {
    EXPECT_LE(sentence.words.size(), 30u);
    EXPECT_GE(sentence.words.size(), 3u);  // halved, not chipped
    for (const auto& word : sentence.words) {
      std::string expected = "word" + std::to_string(next++);
      if (&word == &sentence.words.front()) expected = "W" + expected.substr(1);
      EXPECT_EQ(word.text, expected);
    }
  }
  EXPECT_EQ(next, 100);
}

TEST(Sentences, LongRunIsSplitAtItsLongestPause) {
  Words w;
  for (int i = 0; i < 25; ++i) w.say("x");
  w.pause(0.4);  // below sentence_pause_seconds, but the longest in the run
  for (int i = 0; i < 15; ++i) w.say("y");
  auto s = build_sentences(w.get());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].words.size(), 25u);
  EXPECT_EQ(s[1].words.size(), 15u);
}

TEST(Sentences, TiedPausesPreferASplitBeforeAConjunction) {
  Words w;
  for (int i = 0; i < 10; ++i) w.say("x");
  w.say("but");
  for (int i = 0; i < 29; ++i) w.say("y");
  auto s = build_sentences(w.get());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].words.size(), 10u);
  EXPECT_EQ(s[1].words[0].text, "But");
}

TEST(Sentences, NeverSplitsAfterAnArticleWhenAnotherPointExists) {
  Words w;
  for (int i = 0; i < 20; ++i) w.say("x");
  w.say("the").pause(0.5).say("house");  // the longest pause, right after "the"
  for (int i = 0; i < 18; ++i) w.say("y");
  auto s = build_sentences(w.get());
  ASSERT_GE(s.size(), 2u);
  for (const auto& sentence : s) EXPECT_NE(sentence.words.back().text, "the") << sentence.text;
}

TEST(Sentences, RunLongerThanMaxSecondsIsSplit) {
  Words w;
  for (int i = 0; i < 12; ++i) w.raw("slow", i * 1.5, i * 1.5 + 1.4);  // 18 s, 0.1 s gaps
  auto s = build_sentences(w.get());
  ASSERT_GE(s.size(), 2u);
  for (const auto& sentence : s) EXPECT_LE(sentence.end - sentence.start, 15.0);
}

TEST(Sentences, PronounIAndContractionsAreCapitalized) {
  EXPECT_EQ(sentence_of("yesterday i think i'm right and i'll go but i've i'd"),
            "Yesterday I think I'm right and I'll go but I've I'd.");
  EXPECT_EQ(sentence_of("it is in india"), "It is in india.");
}

TEST(Sentences, EngineCasingIsKept) {
  EXPECT_EQ(sentence_of("we saw NASA in Paris"), "We saw NASA in Paris.");
  EXPECT_EQ(sentence_of("élan is a word"), "Élan is a word.");
}

TEST(Sentences, QuestionsEndWithQuestionMark) {
  EXPECT_EQ(sentence_of("what do you think"), "What do you think?");
  EXPECT_EQ(sentence_of("is it raining"), "Is it raining?");
  EXPECT_EQ(sentence_of("do you know him"), "Do you know him?");
  EXPECT_EQ(sentence_of("didn't they say that"), "Didn't they say that?");
  EXPECT_EQ(sentence_of("so where are we going"), "So where are we going?");
}

TEST(Sentences, StatementsEndWithPeriod) {
  EXPECT_EQ(sentence_of("when i was young we played"), "When I was young we played.");
  EXPECT_EQ(sentence_of("do it again"), "Do it again.");
  EXPECT_EQ(sentence_of("have a look at this"), "Have a look at this.");
  EXPECT_EQ(sentence_of("the weather is nice"), "The weather is nice.");
}

TEST(Sentences, CommaAfterOpeningInterjection) {
  EXPECT_EQ(sentence_of("well i think so"), "Well, I think so.");
  EXPECT_EQ(sentence_of("yes it is"), "Yes, it is.");
  EXPECT_EQ(sentence_of("no one came"), "No one came.");  // "no" needs a pause
  EXPECT_EQ(sentence_of("well done"), "Well done.");
  auto s = build_sentences(Words().say("no").pause(0.3).say("it was fine").get());
  EXPECT_EQ(s.at(0).text, "No, it was fine.");
}

TEST(Sentences, CommaBeforeConjunctionAfterPause) {
  auto with = build_sentences(Words().say("i like it").pause(0.3).say("but not today").get());
  EXPECT_EQ(with.at(0).text, "I like it, but not today.");
  EXPECT_EQ(with.at(0).words[2].punctuation, ",");
  EXPECT_EQ(with.at(0).words[2].text, "it");
  EXPECT_EQ(sentence_of("i like it but not today"), "I like it but not today.");
}

TEST(Sentences, NoCommaAfterArticleEvenAfterLongPause) {
  auto s = build_sentences(Words().say("we bought the").pause(0.5).say("car").get());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text, "We bought the car.");
}

TEST(Sentences, PrePunctuatedWordsAreSplitAndRespected) {
  Words w;
  w.raw(" Hello,", 0.0, 0.4).raw(" world.", 0.45, 0.8).raw(" How", 0.85, 1.0).raw(" are", 1.05, 1.2);
  w.raw(" you?", 1.25, 1.5);
  auto s = build_sentences(w.get());
  EXPECT_EQ(texts(s), (std::vector<std::string>{"Hello, world.", "How are you?"}));
  EXPECT_EQ(s[0].words[0].text, "Hello");
  EXPECT_EQ(s[0].words[0].punctuation, ",");
  EXPECT_EQ(s[1].words[2].text, "you");
  EXPECT_EQ(s[1].words[2].punctuation, "?");
}

TEST(Sentences, PunctuatedInputGetsNoHeuristicCommas) {
  Words w;
  w.raw("Well", 0.0, 0.3).raw("I", 0.35, 0.5).raw("agree.", 0.55, 0.9);
  EXPECT_EQ(build_sentences(w.get()).at(0).text, "Well I agree.");
}

TEST(Sentences, PunctuationOnlyTokensAttachToThePreviousWord) {
  Words w;
  w.raw("yes", 0.0, 0.3).raw(",", 0.3, 0.3).raw("right", 0.35, 0.6).raw("!", 0.6, 0.6).raw("next", 0.65, 0.9);
  auto s = build_sentences(w.get());
  EXPECT_EQ(texts(s), (std::vector<std::string>{"Yes, right.", "Next."}));
}

TEST(Sentences, AbbreviationDotsDoNotEndSentences) {
  Words w;
  w.raw("Mr.", 0.0, 0.3).raw("Smith", 0.35, 0.6).raw("went", 0.65, 0.9).raw("to", 0.95, 1.0);
  w.raw("the", 1.05, 1.1).raw("U.S.", 1.15, 1.5).raw("today.", 1.55, 1.9);
  auto s = build_sentences(w.get());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text, "Mr. Smith went to the U.S. today.");
  EXPECT_EQ(s[0].words[0].punctuation, std::nullopt);
}

TEST(Sentences, EngineCommaAtForcedSplitBecomesTerminal) {
  SentenceOptions o;
  o.max_words = 3;
  Words w;
  w.raw("one", 0.0, 0.2).raw("two", 0.25, 0.4).raw("three,", 0.45, 0.6).raw("four", 0.65, 0.8);
  w.raw("five", 0.85, 1.0).raw("six.", 1.05, 1.2);
  auto s = build_sentences(w.get(), o);
  EXPECT_EQ(texts(s), (std::vector<std::string>{"One two three.", "Four five six."}));
}

}  // namespace
}  // namespace scribe::speech
