#include "speech/vad.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>

#include "media/audio_decoder.h"

#include "tests/media_scratch.h"

namespace scribe::speech {
namespace {

namespace fs = std::filesystem;

// Fixtures are made with flite and sox in a temporary directory, once per test
// binary run.
class VadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { scratch_ = std::make_unique<testing::MediaScratch>("scribe_vad_test"); }
  static void TearDownTestSuite() { scratch_.reset(); }

  static std::string path(const std::string& name) { return scratch_->path(name); }

  static void sh(const std::string& command) { ASSERT_TRUE(scratch_->sh(command)) << command; }

  static std::vector<int16_t> load(const std::string& name) {
    std::vector<int16_t> pcm;
    media::decode_audio(path(name), [&](const int16_t* s, size_t n) { pcm.insert(pcm.end(), s, s + n); });
    return pcm;
  }

  static std::vector<uint8_t> detect(const std::vector<int16_t>& pcm, size_t chunk = 4000) {
    VoiceActivityDetector vad;
    for (size_t i = 0; i < pcm.size(); i += chunk) vad.feed(pcm.data() + i, std::min(chunk, pcm.size() - i));
    return vad.finish();
  }

  static double speech_share(const std::vector<uint8_t>& flags) {
    return flags.empty() ? 0 : double(std::accumulate(flags.begin(), flags.end(), 0)) / double(flags.size());
  }

  static inline std::unique_ptr<testing::MediaScratch> scratch_;
};

TEST_F(VadTest, FindsSpeechBetweenSilences) {
  sh("flite -voice slt -t 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.' -o "
     "raw.wav");
  // flite's own leading and trailing silence is trimmed so the layout is known.
  sh("sox raw.wav -r 16000 -c 1 -b 16 speech.wav silence 1 0.01 0.5% reverse silence 1 0.01 0.5% reverse");
  sh("sox speech.wav padded.wav pad 2 2");
  const size_t speech_frames = load("speech.wav").size() / kFrameSamples;
  const auto flags = detect(load("padded.wav"));
  ASSERT_GE(flags.size(), 400 + speech_frames);
  size_t correct = 0;
  for (size_t i = 0; i < flags.size(); ++i) {
    const bool truth = i >= 200 && i < 200 + speech_frames;
    correct += flags[i] == truth;
  }
  const double accuracy = double(correct) / double(flags.size());
  EXPECT_GT(accuracy, 0.90);
  // The silent lead-in is not speech.
  EXPECT_LT(speech_share({flags.begin(), flags.begin() + 150}), 0.02);
}

TEST_F(VadTest, IgnoresWhiteNoise) {
  sh("sox -R -n -r 16000 -c 1 -b 16 white.wav synth 5 whitenoise vol 0.3");
  EXPECT_LT(speech_share(detect(load("white.wav"))), 0.05);
}

TEST_F(VadTest, IgnoresPinkAndBrownNoise) {
  sh("sox -R -n -r 16000 -c 1 -b 16 pink.wav synth 4 pinknoise vol 0.3");
  sh("sox -R -n -r 16000 -c 1 -b 16 brown.wav synth 4 brownnoise vol 0.6");
  EXPECT_LT(speech_share(detect(load("pink.wav"))), 0.05);
  EXPECT_LT(speech_share(detect(load("brown.wav"))), 0.05);
}

TEST_F(VadTest, IgnoresSynthesizedMusic) {
  sh("sox -R -n -r 16000 -c 1 -b 16 chord.wav synth 5 pluck C4 pluck E4 pluck G4");
  sh("sox -R -n -r 16000 -c 1 -b 16 sines.wav synth 5 sine A3 sine C4 sine E4 vol 0.3");
  // A melody: notes concatenated, each with a short fade so the notes are distinct.
  std::string notes;
  const char* melody[] = {"C4", "E4", "G4", "C5", "A4", "F4", "D4", "B3",
                          "G3", "E4", "C4", "D4", "F4", "A4", "G4", "E4"};
  for (int i = 0; i < 16; ++i) {
    sh("sox -R -n -r 16000 -c 1 -b 16 n" + std::to_string(i) + ".wav synth 0.3 pluck " + melody[i] +
       " fade 0.01 0.3 0.05");
    notes += " n" + std::to_string(i) + ".wav";
  }
  sh("sox" + notes + " melody.wav");
  EXPECT_LT(speech_share(detect(load("chord.wav"))), 0.10);
  EXPECT_LT(speech_share(detect(load("sines.wav"))), 0.10);
  EXPECT_LT(speech_share(detect(load("melody.wav"))), 0.10);
}

TEST_F(VadTest, ChunkSizeDoesNotMatter) {
  sh("flite -voice rms -t 'Rice is often served in round bowls.' -o r.wav");
  sh("sox r.wav -r 16000 -c 1 -b 16 rp.wav pad 1 1");
  const auto pcm = load("rp.wav");
  const auto whole = detect(pcm, pcm.size());
  EXPECT_EQ(detect(pcm, 1), whole);
  EXPECT_EQ(detect(pcm, 333), whole);
  EXPECT_EQ(whole.size(), (pcm.size() + kFrameSamples - 1) / kFrameSamples);
  EXPECT_GT(speech_share(whole), 0.3);
}

// A steady buzz scores like a held note, as steady read speech sometimes does.
// Right before a sentence, across a pause shorter than min_silence_seconds, it
// is taken into the sentence's run (a phrase is not dropped for sounding
// steady); a second away, across a longer pause, it stays out.
TEST_F(VadTest, LoudSoundJustBeforeSpeechJoinsItsRun) {
  sh("flite -voice awb -t 'Rice is often served in round bowls.' -o n.wav");
  sh("sox n.wav -r 16000 -c 1 -b 16 ns.wav silence 1 0.01 0.5% reverse silence 1 0.01 0.5% reverse");
  sh("sox -R -n -r 16000 -c 1 -b 16 buzz.wav synth 0.6 sawtooth 140 lowpass 2500 vol 0.25");
  sh("sox -R -n -r 16000 -c 1 -b 16 lead.wav trim 0 0.3");
  sh("sox -R -n -r 16000 -c 1 -b 16 short.wav trim 0 0.15");
  sh("sox -R -n -r 16000 -c 1 -b 16 long.wav trim 0 1.0");
  sh("sox lead.wav buzz.wav short.wav ns.wav lead.wav near.wav");
  sh("sox lead.wav buzz.wav long.wav ns.wav lead.wav far.wav");
  const auto buzz_share = [&](const std::string& file) {
    const auto flags = detect(load(file));
    // The buzz is frames 30-90; its first and last 10 frames are left out.
    return speech_share({flags.begin() + 40, flags.begin() + 80});
  };
  EXPECT_GT(buzz_share("near.wav"), 0.95);
  EXPECT_LT(buzz_share("far.wav"), 0.05);
  // Alone, the buzz is not speech.
  sh("sox lead.wav buzz.wav lead.wav alone.wav");
  EXPECT_LT(speech_share(detect(load("alone.wav"))), 0.05);
}

TEST(Vad, EmptyAndSilentInput) {
  VoiceActivityDetector empty;
  EXPECT_TRUE(empty.finish().empty());
  VoiceActivityDetector silent;
  std::vector<int16_t> zeros(16000 * 3, 0);
  silent.feed(zeros.data(), zeros.size());
  const auto flags = silent.finish();
  EXPECT_EQ(flags.size(), 300u);
  EXPECT_EQ(std::accumulate(flags.begin(), flags.end(), 0), 0);
  EXPECT_EQ(silent.frame_energy().size(), 300u);
}

// ---- cut_pieces ------------------------------------------------------------

std::vector<uint8_t> frames_with_speech(size_t total, std::initializer_list<std::pair<size_t, size_t>> runs) {
  std::vector<uint8_t> f(total, 0);
  for (auto [a, b] : runs) std::fill(f.begin() + long(a), f.begin() + long(b), 1);
  return f;
}

TEST(CutPieces, PadsAndClipsToTheRecording) {
  const auto flags = frames_with_speech(500, {{0, 100}, {300, 500}});
  const auto pieces = cut_pieces(flags, 500 * kFrameSamples);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].start_sample, 0);
  EXPECT_EQ(pieces[0].end_sample, 100 * kFrameSamples + 2400);
  EXPECT_EQ(pieces[1].start_sample, 300 * kFrameSamples - 2400);
  EXPECT_EQ(pieces[1].end_sample, 500 * kFrameSamples);
}

TEST(CutPieces, DropsShortPiecesAndMergesCloseOnes) {
  // Without padding a 50 ms blip is shorter than the 0.3 s minimum and is dropped.
  PieceOptions opt;
  opt.pad_seconds = 0;
  auto pieces = cut_pieces(frames_with_speech(1000, {{100, 105}, {400, 600}}), 1000 * kFrameSamples, {}, opt);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].start_sample, 400 * kFrameSamples);
  // Two runs 0.2 s apart touch after 0.15 s padding and become one piece.
  pieces = cut_pieces(frames_with_speech(1000, {{100, 300}, {320, 500}}), 1000 * kFrameSamples);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].start_sample, 100 * kFrameSamples - 2400);
  EXPECT_EQ(pieces[0].end_sample, 500 * kFrameSamples + 2400);
}

TEST(CutPieces, SoftOnsetsJoinTheirRun) {
  // Background at 20 dB; a soft first syllable at 35 dB (frames 270-300) that
  // the detector left out, then the run it flagged (300-500).
  const size_t n = 1000;
  std::vector<float> energy(n, 20.0f);
  for (size_t i = 270; i < 300; ++i) energy[i] = 35.0f;
  for (size_t i = 300; i < 500; ++i) energy[i] = 60.0f;
  PieceOptions opt;
  opt.pad_seconds = 0;
  auto pieces = cut_pieces(frames_with_speech(n, {{300, 500}}), int64_t(n) * kFrameSamples, energy, opt);
  ASSERT_EQ(pieces.size(), 1u);
  // The energy is smoothed over 70 ms, so the start lands within a few frames of 270.
  EXPECT_NEAR(double(pieces[0].start_sample) / kFrameSamples, 270.0, 4.0);
  EXPECT_EQ(pieces[0].end_sample, 500 * kFrameSamples);
  // Background noise before a run is not pulled in, and the extension is bounded.
  std::fill(energy.begin(), energy.end(), 20.0f);
  for (size_t i = 300; i < 500; ++i) energy[i] = 60.0f;
  pieces = cut_pieces(frames_with_speech(n, {{300, 500}}), int64_t(n) * kFrameSamples, energy, opt);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_NEAR(double(pieces[0].start_sample) / kFrameSamples, 300.0, 4.0);
  for (size_t i = 0; i < 300; ++i) energy[i] = 40.0f;
  energy[0] = 10.0f;  // a quiet start sets the floor
  pieces = cut_pieces(frames_with_speech(n, {{300, 500}}), int64_t(n) * kFrameSamples, energy, opt);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_GE(pieces[0].start_sample, int64_t((300 - opt.onset_seconds * 100) * kFrameSamples));
}

TEST(CutPieces, LongSpeechIsCutAtTheQuietestPoint) {
  // 60 s of speech with a quiet dip at 14 s and another at 31 s.
  const size_t n = 6000;
  const auto flags = frames_with_speech(n, {{0, n}});
  std::vector<float> energy(n, 60.0f);
  for (size_t i = 1390; i < 1410; ++i) energy[i] = 20.0f;
  for (size_t i = 3090; i < 3110; ++i) energy[i] = 20.0f;
  PieceOptions opt;
  const auto pieces = cut_pieces(flags, int64_t(n) * kFrameSamples, energy, opt);
  ASSERT_GE(pieces.size(), 3u);
  const int64_t max_len = int64_t(opt.max_piece_seconds * kSampleRate);
  for (const auto& p : pieces) {
    EXPECT_LE(p.end_sample - p.start_sample, max_len);
    EXPECT_GE(p.end_sample - p.start_sample, int64_t(opt.min_piece_seconds * kSampleRate));
    EXPECT_GE(p.start_sample, 0);
    EXPECT_LE(p.end_sample, int64_t(n) * kFrameSamples);
  }
  EXPECT_NEAR(pieces[0].end_seconds(), 14.0, 0.15);
  EXPECT_NEAR(pieces[1].end_seconds(), 31.0, 0.15);
  // Pieces cover the speech without overlapping.
  for (size_t i = 1; i < pieces.size(); ++i) EXPECT_LE(pieces[i - 1].end_sample, pieces[i].start_sample);
  EXPECT_EQ(pieces.back().end_sample, int64_t(n) * kFrameSamples);
}

TEST(CutPieces, RandomFlagsKeepTheLimits) {
  std::mt19937 rng(42);
  PieceOptions opt;
  opt.max_piece_seconds = 3;
  for (int round = 0; round < 50; ++round) {
    std::vector<uint8_t> flags(3000);
    uint8_t v = 0;
    for (auto& f : flags) {
      if (rng() % 40 == 0) v = !v;
      f = v;
    }
    std::vector<float> energy(flags.size());
    for (auto& e : energy) e = float(rng() % 60);
    const int64_t total = int64_t(flags.size()) * kFrameSamples - 77;
    const auto pieces = cut_pieces(flags, total, round % 2 ? energy : std::vector<float>{}, opt);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const auto& p = pieces[i];
      EXPECT_LE(p.end_sample - p.start_sample, 3 * kSampleRate);
      EXPECT_GE(p.end_sample - p.start_sample, int64_t(0.3 * kSampleRate));
      EXPECT_GE(p.start_sample, 0);
      EXPECT_LE(p.end_sample, total);
      if (i > 0) {
        EXPECT_LE(pieces[i - 1].end_sample, p.start_sample);
      }
    }
  }
}

}  // namespace
}  // namespace scribe::speech
