#include "speech/diarization.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

// The fixtures are synthesized at test time with flite (several distinct
// voices) and resampled with sox, so the test knows exactly who speaks when
// without shipping audio in the repository.
namespace scribe::speech {
namespace {

namespace fs = std::filesystem;

// Recording held in memory; the diarizer only sees it through PcmSource.
class MemoryPcm : public PcmSource {
 public:
  explicit MemoryPcm(std::vector<int16_t> samples) : samples_(std::move(samples)) {}
  int64_t total_samples() const override { return int64_t(samples_.size()); }
  std::vector<int16_t> read(int64_t start, int64_t count) const override {
    start = std::clamp<int64_t>(start, 0, total_samples());
    const int64_t end = std::clamp<int64_t>(start + count, start, total_samples());
    return {samples_.begin() + start, samples_.begin() + end};
  }

 private:
  std::vector<int16_t> samples_;
};

// Samples of a 16-bit PCM wav file, walking the RIFF chunks to "data".
std::vector<int16_t> read_wav(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 12;
  while (pos + 8 <= bytes.size()) {
    const std::string id(bytes.data() + pos, 4);
    uint32_t size = 0;
    for (int b = 3; b >= 0; --b) size = (size << 8) | uint8_t(bytes[pos + 4 + b]);
    if (id == "data") {
      const size_t available = std::min<size_t>(size, bytes.size() - pos - 8) / 2;
      std::vector<int16_t> samples(available);
      for (size_t i = 0; i < available; ++i) {
        const size_t at = pos + 8 + 2 * i;
        samples[i] = int16_t(uint16_t(uint8_t(bytes[at])) | (uint16_t(uint8_t(bytes[at + 1])) << 8));
      }
      return samples;
    }
    pos += 8 + size + (size & 1);
  }
  return {};
}

struct Turn {
  std::string voice;
  std::string text;
};

const std::vector<std::string> kSentences = {
    "The committee will meet again on Thursday to review the budget for next year.",
    "I think we should start with the items that were left open last week.",
    "The river flooded the lower fields after three days of heavy rain.",
    "Please send me the final numbers before the end of the afternoon.",
    "Our train was delayed for almost an hour because of a signal failure.",
    "She planted tomatoes, beans and a row of sunflowers along the fence.",
    "Nobody expected the small bakery to become the most popular place in town.",
    "The old lighthouse has guided fishing boats home for over a century.",
    "We could move the launch to March if the testing takes longer.",
    "He repaired the bicycle with nothing more than a spanner and some tape.",
    "The museum opens at nine and the guided tours begin half an hour later.",
    "Winter evenings are long here, so people gather in the kitchen to talk.",
    "The report shows that energy use fell by twelve percent last quarter.",
    "A quiet walk through the forest is the best way to clear your head.",
};

class DiarizationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("command -v flite >/dev/null 2>&1 && command -v sox >/dev/null 2>&1") != 0) return;
    dir_ = fs::temp_directory_path() / ("scribe_diarization_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Every voice says every sentence once; the synthesis runs in parallel
    // and each utterance is resampled to the pipeline's 16 kHz mono format.
    std::string script = "cd '" + dir_.string() + "' && ( ";
    for (const std::string voice : {"slt", "rms", "awb"}) {
      for (size_t s = 0; s < kSentences.size(); ++s) {
        const std::string name = voice + "_" + std::to_string(s);
        script += "( flite -voice " + voice + " -t \"" + kSentences[s] + "\" -o " + name + "_raw.wav && sox " + name +
                  "_raw.wav -r 16000 -c 1 -b 16 " + name + ".wav ) & ";
      }
    }
    script += "wait ) >/dev/null 2>&1";
    if (std::system(script.c_str()) == 0) available_ = true;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (!available_) GTEST_SKIP() << "flite and sox are needed to synthesize the fixtures";
  }

  // Concatenates the turns with short pauses over a faint noise floor (so
  // silence is not digital zero); pieces are the utterances.
  struct Dialogue {
    std::vector<int16_t> samples;
    std::vector<SpeechPiece> pieces;
    std::vector<int> reference;  // speaker of each piece, by first appearance
  };
  static Dialogue build(const std::vector<Turn>& turns) {
    Dialogue dialogue;
    std::map<std::string, int> order;
    uint32_t seed = 12345;
    auto noise = [&seed]() {
      seed = seed * 1664525u + 1013904223u;
      return int((seed >> 16) % 61) - 30;
    };
    auto pause = [&](int samples) {
      for (int i = 0; i < samples; ++i) dialogue.samples.push_back(int16_t(noise()));
    };
    pause(kSampleRate / 2);
    for (size_t t = 0; t < turns.size(); ++t) {
      const std::vector<int16_t> speech = read_wav(dir_ / (turns[t].voice + "_" + turns[t].text + ".wav"));
      const int64_t start = int64_t(dialogue.samples.size());
      for (int16_t s : speech) dialogue.samples.push_back(int16_t(std::clamp(int(s) + noise(), -32768, 32767)));
      dialogue.pieces.push_back({start, int64_t(dialogue.samples.size())});
      dialogue.reference.push_back(order.emplace(turns[t].voice, int(order.size())).first->second);
      pause(kSampleRate * (3 + int(t % 4)) / 10);
    }
    return dialogue;
  }

  // Share of the speech time whose label matches the reference under the
  // best one-to-one mapping of labels to reference speakers.
  static double accuracy(const Dialogue& dialogue, const std::vector<SpeakerSpan>& spans, int speakers) {
    const int labels = std::max(speakers, 1);
    std::vector<std::vector<double>> overlap(labels, std::vector<double>(8, 0.0));
    double total = 0;
    for (size_t p = 0; p < dialogue.pieces.size(); ++p) {
      const double start = dialogue.pieces[p].start_seconds(), end = dialogue.pieces[p].end_seconds();
      total += end - start;
      for (const SpeakerSpan& span : spans) {
        const double o = std::min(end, span.end) - std::max(start, span.start);
        if (o > 0 && span.speaker && *span.speaker < labels) overlap[*span.speaker][dialogue.reference[p]] += o;
      }
    }
    std::vector<int> mapping(8);
    for (int i = 0; i < 8; ++i) mapping[i] = i;
    double best = 0;
    do {
      double correct = 0;
      for (int l = 0; l < labels; ++l) correct += overlap[l][mapping[l]];
      best = std::max(best, correct);
    } while (std::next_permutation(mapping.begin(), mapping.end()));
    return total > 0 ? best / total : 0;
  }

  static int speaker_count(const std::vector<SpeakerSpan>& spans) {
    int count = 0;
    for (const SpeakerSpan& span : spans) {
      if (span.speaker) count = std::max(count, *span.speaker + 1);
    }
    return count;
  }

  static std::vector<Turn> turns(const std::vector<std::string>& voices) {
    std::vector<Turn> result;
    for (size_t i = 0; i < voices.size(); ++i) result.push_back({voices[i], std::to_string(i % kSentences.size())});
    return result;
  }

  static void expect_well_formed(const Dialogue& dialogue, const std::vector<SpeakerSpan>& spans) {
    ASSERT_FALSE(spans.empty());
    for (size_t i = 0; i < spans.size(); ++i) {
      EXPECT_LT(spans[i].start, spans[i].end);
      if (i > 0) {
        EXPECT_LE(spans[i - 1].end, spans[i].start + 1e-9);
      }
    }
    EXPECT_NEAR(spans.front().start, dialogue.pieces.front().start_seconds(), 1e-6);
    EXPECT_NEAR(spans.back().end, dialogue.pieces.back().end_seconds(), 1e-6);
  }

  static inline fs::path dir_;
  static inline bool available_ = false;
};

TEST_F(DiarizationTest, ThreeVoiceDialogueFindsThreeSpeakers) {
  const Dialogue dialogue =
      build(turns({"slt", "rms", "awb", "rms", "slt", "awb", "slt", "rms", "awb", "slt", "awb", "rms"}));
  const std::vector<SpeakerSpan> spans = diarize(MemoryPcm(dialogue.samples), dialogue.pieces);
  expect_well_formed(dialogue, spans);
  EXPECT_EQ(speaker_count(spans), 3);
  EXPECT_GE(accuracy(dialogue, spans, speaker_count(spans)), 0.9);
  // The first voice heard is speaker 0, in the middle of the first turn.
  const SpeechPiece& first = dialogue.pieces.front();
  EXPECT_EQ(speaker_at(spans, first.start_seconds() + 0.5, first.start_seconds() + 1.5), 0);
}

TEST_F(DiarizationTest, SingleVoiceIsOneSpeaker) {
  const Dialogue dialogue = build(turns({"rms", "rms", "rms", "rms", "rms", "rms"}));
  const std::vector<SpeakerSpan> spans = diarize(MemoryPcm(dialogue.samples), dialogue.pieces);
  expect_well_formed(dialogue, spans);
  EXPECT_EQ(speaker_count(spans), 1);
  EXPECT_GE(accuracy(dialogue, spans, 1), 0.9);
}

TEST_F(DiarizationTest, TwoVoiceDialogueFindsTwoSpeakers) {
  const Dialogue dialogue = build(turns({"awb", "slt", "awb", "slt", "slt", "awb", "slt", "awb"}));
  const std::vector<SpeakerSpan> spans = diarize(MemoryPcm(dialogue.samples), dialogue.pieces);
  expect_well_formed(dialogue, spans);
  EXPECT_EQ(speaker_count(spans), 2);
  EXPECT_GE(accuracy(dialogue, spans, 2), 0.9);
}

TEST_F(DiarizationTest, MaxSpeakersCapsTheCount) {
  const Dialogue dialogue = build(turns({"slt", "rms", "awb", "rms", "slt", "awb", "slt", "rms"}));
  DiarizationOptions options;
  options.max_speakers = 2;
  const std::vector<SpeakerSpan> spans = diarize(MemoryPcm(dialogue.samples), dialogue.pieces, options);
  EXPECT_LE(speaker_count(spans), 2);
}

TEST(DiarizationEdgeTest, NoPiecesGiveNoSpans) {
  EXPECT_TRUE(diarize(MemoryPcm(std::vector<int16_t>(16000, 0)), {}).empty());
}

TEST(DiarizationEdgeTest, SilentPiecesAreUnattributed) {
  const std::vector<SpeakerSpan> spans =
      diarize(MemoryPcm(std::vector<int16_t>(48000, 0)), {{0, 16000}, {24000, 48000}});
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_FALSE(spans[0].speaker.has_value());
  EXPECT_DOUBLE_EQ(spans[1].start, 1.5);
  EXPECT_DOUBLE_EQ(spans[1].end, 3.0);
}

TEST(SpeakerAtTest, MajorityOfCoveredTimeWins) {
  const std::vector<SpeakerSpan> spans = {{0.0, 1.0, 0}, {1.0, 2.0, 1}, {2.0, 3.0, std::nullopt}, {4.0, 5.0, 0}};
  EXPECT_EQ(speaker_at(spans, 0.1, 0.9), 0);
  EXPECT_EQ(speaker_at(spans, 0.5, 1.7), 1);
  EXPECT_EQ(speaker_at(spans, 0.5, 1.5), std::nullopt);  // a tie is no majority
  EXPECT_EQ(speaker_at(spans, 1.5, 2.9), std::nullopt);  // mostly unattributed
  EXPECT_EQ(speaker_at(spans, 3.2, 3.8), std::nullopt);  // between spans
  EXPECT_EQ(speaker_at(spans, 3.5, 4.5), 0);             // only the covered part counts
  EXPECT_EQ(speaker_at(spans, 4.2, 4.2), 0);             // an instant
  EXPECT_EQ(speaker_at({}, 0, 1), std::nullopt);
}

}  // namespace
}  // namespace scribe::speech
