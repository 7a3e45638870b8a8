// transcribe() on real media: flite speech decoded by FFmpeg and recognized by
// PocketSphinx (no database).
#include "speech/transcriber.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "speech/pocketsphinx_engine.h"
#include "tests/media_scratch.h"

namespace scribe::speech {
namespace {

class Transcriber : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::make_unique<testing::MediaScratch>("scribe_transcriber_test");
    dir_ = scratch_->dir().string();
    engines_ = new EnginePool(std::make_shared<PocketSphinxFactory>(PocketSphinxOptions{}));
    speech_ = dir_ + "/speech.wav";
    run("flite -voice slt -t 'The library opens at nine in the morning. Please return your books on time.' -o " + dir_ +
        "/raw.wav && sox " + dir_ + "/raw.wav -r 16000 -c 1 -b 16 " + speech_ + " pad 0.5 0.5");
  }
  static void TearDownTestSuite() {
    delete engines_;
    scratch_.reset();
  }
  static void run(const std::string& cmd) { ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd; }
  static std::string code_of(const TranscribeRequest& req) {
    std::atomic<bool> cancelled{false};
    try {
      transcribe(*engines_, req, nullptr, cancelled);
    } catch (const JobFailure& f) {
      return f.code();
    }
    return "";
  }
  static inline std::unique_ptr<testing::MediaScratch> scratch_;
  static inline std::string dir_, speech_;
  static inline EnginePool* engines_ = nullptr;
};

TEST_F(Transcriber, SpeechBecomesSentencesWithTimedWordsInOrder) {
  std::vector<std::string> stages;
  std::atomic<bool> cancelled{false};
  auto r = transcribe(
      *engines_, {speech_, "auto", std::nullopt, dir_},
      [&](const std::string& s) {
        stages.push_back(s);
        return true;
      },
      cancelled);
  EXPECT_EQ(stages, (std::vector<std::string>{"decoding", "transcribing", "diarizing", "enriching"}));
  EXPECT_EQ(r.language, "en");
  EXPECT_EQ(r.speakers, 1);
  ASSERT_FALSE(r.sentences.empty());
  std::string text;
  double last = -1;
  for (const auto& s : r.sentences) {
    EXPECT_EQ(s.speaker, std::optional<int>(0));
    text += s.text + " ";
    for (const auto& w : s.words) {
      EXPECT_GE(w.start, last);
      EXPECT_GT(w.end, w.start);
      EXPECT_LE(w.end, r.duration_seconds + 0.01);
      EXPECT_GE(w.confidence, 0.0);
      EXPECT_LE(w.confidence, 1.0);
      last = w.start;
    }
  }
  for (const char* word : {"library", "morning", "return"}) EXPECT_NE(text.find(word), std::string::npos) << text;
}

TEST_F(Transcriber, WordsDoNotDependOnWhatTheEngineDecodedBefore) {
  // One decoder, reused: the same recording before and after another one (a
  // different voice over noise) must come out the same, word for word.
  auto options = PocketSphinxOptions{};
  options.parallelism = 1;
  EnginePool one(std::make_shared<PocketSphinxFactory>(options));
  const std::string other = dir_ + "/other.wav";
  run("flite -voice rms -t 'Heavy rain fell on the harbour all night and the boats stayed in.' -o " + dir_ +
      "/other_raw.wav && sox " + dir_ + "/other_raw.wav -r 16000 -c 1 -b 16 " + dir_ + "/other_clean.wav pad 0.5 0.5" +
      " && sox -R -n -r 16000 -c 1 -b 16 " + dir_ + "/noise.wav synth 6 pinknoise vol 0.05" + " && sox -R -m " + dir_ +
      "/other_clean.wav " + dir_ + "/noise.wav " + other + " trim 0 $(soxi -D " + dir_ + "/other_clean.wav)");
  std::atomic<bool> cancelled{false};
  auto words_of = [&](const std::string& file) {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& s : transcribe(one, {file, "en", std::nullopt, dir_}, nullptr, cancelled).sentences)
      for (const auto& w : s.words) out.emplace_back(w.text, w.start);
    return out;
  };
  const auto first = words_of(speech_);
  ASSERT_FALSE(first.empty());
  words_of(other);
  EXPECT_EQ(words_of(speech_), first);
}

// Pieces decoded out of order: three threads, and the first of every three
// pieces handed out is held back a while, so later ones finish before it.
class Reordering final : public AsrEngineFactory {
 public:
  explicit Reordering(std::shared_ptr<const AsrEngineFactory> inner) : inner_(std::move(inner)) {}
  std::unique_ptr<AsrEngine> make() const override { return std::make_unique<Engine>(inner_->make(), calls_); }
  int parallelism() const override { return 3; }
  std::vector<std::string> languages() const override { return inner_->languages(); }

 private:
  class Engine final : public AsrEngine {
   public:
    Engine(std::unique_ptr<AsrEngine> inner, std::shared_ptr<std::atomic<int>> calls)
        : inner_(std::move(inner)), calls_(std::move(calls)) {}
    Recognition recognize(const int16_t* pcm, size_t count, const std::string& language,
                          const VoiceAdaptation& voice) override {
      const bool late = calls_->fetch_add(1) % 3 == 0;
      auto r = inner_->recognize(pcm, count, language, voice);
      if (late) std::this_thread::sleep_for(std::chrono::milliseconds(400));
      return r;
    }

   private:
    std::unique_ptr<AsrEngine> inner_;
    std::shared_ptr<std::atomic<int>> calls_;
  };
  std::shared_ptr<const AsrEngineFactory> inner_;
  std::shared_ptr<std::atomic<int>> calls_ = std::make_shared<std::atomic<int>>(0);
};

std::vector<std::string> plain_words(const std::string& text) {
  std::vector<std::string> out{""};
  for (char c : text) {
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '\'') out.back() += static_cast<char>(std::tolower(c));
    else if (!out.back().empty()) out.emplace_back();
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

TEST_F(Transcriber, PiecesAreHandedOverInOrderAsTheyAreRecognized) {
  const std::string talk = dir_ + "/talk.wav";
  const char* lines[] = {"Good evening and welcome to the program.", "Tonight we talk about gardens in the city.",
                         "The children water the beans every morning.", "We collect rain in large barrels."};
  std::string parts;
  for (int i = 0; i < 4; ++i) {
    const std::string n = dir_ + "/line" + std::to_string(i);
    run("flite -voice slt -t '" + std::string(lines[i]) + "' -o " + n + "_raw.wav && sox " + n +
        "_raw.wav -r 16000 -c 1 -b 16 " + n + ".wav pad 0 1.2");
    parts += n + ".wav ";
  }
  run("sox " + parts + talk);
  auto options = PocketSphinxOptions{};
  options.parallelism = 1;
  EnginePool pool(std::make_shared<Reordering>(std::make_shared<PocketSphinxFactory>(options)));
  std::vector<draft::Piece> got;
  std::vector<std::string> stages;
  int calls = 0;
  TranscribeRequest req{talk, "en", std::nullopt, dir_};
  req.on_pieces = [&](const std::vector<draft::Piece>& pieces) {
    ++calls;
    EXPECT_EQ(stages.back(), "transcribing");  // before the recording is done
    got.insert(got.end(), pieces.begin(), pieces.end());
  };
  std::atomic<bool> cancelled{false};
  auto r = transcribe(
      pool, req,
      [&](const std::string& s) {
        stages.push_back(s);
        return true;
      },
      cancelled);
  ASSERT_GE(r.pieces, 4u);
  // Every piece once, in recording order.
  ASSERT_EQ(got.size(), r.pieces);
  EXPECT_LE(calls, static_cast<int>(r.pieces));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].index, static_cast<int>(i));
    EXPECT_LT(got[i].start_seconds, got[i].end_seconds);
    if (i > 0) {
      EXPECT_GT(got[i].start_seconds, got[i - 1].start_seconds);
    }
  }
  // Drafts are sentences: cased and punctuated, the same words as the transcript.
  std::string drafted, final_text;
  for (const auto& p : got) drafted += p.text + " ";
  for (const auto& s : r.sentences) final_text += s.text + " ";
  EXPECT_TRUE(std::isupper(static_cast<unsigned char>(got.front().text.front()))) << got.front().text;
  EXPECT_EQ(plain_words(drafted), plain_words(final_text)) << drafted << "\n" << final_text;
  for (const char* word : {"evening", "gardens", "morning", "barrels"})
    EXPECT_NE(drafted.find(word), std::string::npos) << drafted;
}

TEST_F(Transcriber, LongerThanThePlanAllowsFailsWhileDecoding) {
  EXPECT_EQ(code_of({speech_, "auto", 1.0, dir_}), "file_too_long");
}

TEST_F(Transcriber, SilenceIsNoSpeech) {
  const std::string quiet = dir_ + "/quiet.wav";
  run("sox -n -r 16000 -c 1 -b 16 " + quiet + " trim 0 3");
  EXPECT_EQ(code_of({quiet, "auto", std::nullopt, dir_}), "no_speech");
}

TEST_F(Transcriber, NotMediaIsUndecodable) {
  const std::string junk = dir_ + "/junk.mp3";
  run("head -c 20000 /dev/urandom > " + junk);
  EXPECT_EQ(code_of({junk, "auto", std::nullopt, dir_}), "media_undecodable");
}

TEST_F(Transcriber, AStageRefusedAbortsTheJob) {
  std::atomic<bool> cancelled{false};
  EXPECT_THROW(transcribe(
                   *engines_, {speech_, "auto", std::nullopt, dir_},
                   [](const std::string& s) { return s != "diarizing"; }, cancelled),
               JobAborted);
  cancelled = true;
  EXPECT_THROW(transcribe(*engines_, {speech_, "auto", std::nullopt, dir_}, nullptr, cancelled), JobAborted);
}

}  // namespace
}  // namespace scribe::speech
