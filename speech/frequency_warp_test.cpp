// Vocal tract length normalization: the warp chooser follows a voice's
// spectrum, and a decoder fed through the warped front end decodes as the
// decoder's own front end does.
#include "speech/frequency_warp.h"

#include <gtest/gtest.h>

#include "media/audio_decoder.h"
#include "tests/media_scratch.h"

namespace scribe::speech {
namespace {

class FrequencyWarpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::make_unique<testing::MediaScratch>("scribe_warp_test");
    // A male flite voice, and the same recording with every frequency raised
    // by 18% (played faster: pitch and formants move together, as from a
    // shorter vocal tract).
    ASSERT_TRUE(
        scratch_->sh("flite -voice rms -t 'The salt breeze came across from the sea, and the boats "
                     "rocked slowly in the harbour.' -o raw.wav"));
    ASSERT_TRUE(scratch_->sh("sox raw.wav -r 16000 -c 1 -b 16 male.wav"));
    ASSERT_TRUE(scratch_->sh("sox raw.wav -r 16000 -c 1 -b 16 raised.wav speed 1.18"));
    ASSERT_TRUE(scratch_->sh("sox -n -r 16000 -c 1 -b 16 noise.wav synth 3 brownnoise vol 0.5"));
  }
  static void TearDownTestSuite() { scratch_.reset(); }

  static std::vector<int16_t> load(const std::string& name) {
    std::vector<int16_t> pcm;
    media::decode_audio(scratch_->path(name), [&](const int16_t* s, size_t n) { pcm.insert(pcm.end(), s, s + n); });
    return pcm;
  }

  static inline std::unique_ptr<testing::MediaScratch> scratch_;
};

TEST_F(FrequencyWarpTest, RaisedVoiceGetsAHigherWarp) {
  WarpChooser chooser{PocketSphinxOptions{}};
  const double male = chooser.choose(load("male.wav"));
  const double raised = chooser.choose(load("raised.wav"));
  EXPECT_GE(raised, male + 0.1) << "male " << male << ", raised " << raised;
  // Each score is a mean log-likelihood per frame, finite for speech.
  const auto pcm = load("male.wav");
  EXPECT_TRUE(std::isfinite(chooser.score(pcm.data(), pcm.size(), 1.0)));
}

TEST_F(FrequencyWarpTest, ShortOrSilentSamplesKeepNoWarp) {
  WarpChooser chooser{PocketSphinxOptions{}};
  auto pcm = load("male.wav");
  pcm.resize(kSampleRate / 4);
  EXPECT_EQ(chooser.choose(pcm), 1.0);
  EXPECT_EQ(chooser.choose({}), 1.0);
}

TEST_F(FrequencyWarpTest, FactoryChoosesOnlyWhenEnabled) {
  PocketSphinxOptions off;
  off.vtln = false;
  EXPECT_EQ(PocketSphinxFactory(off).adapt(load("raised.wav")).frequency_warp, 1.0);
  EXPECT_NE(PocketSphinxFactory(PocketSphinxOptions{}).adapt(load("raised.wav")).frequency_warp, 1.0);
}

// The engine decodes a warped voice from cepstra made by a front end of its
// own. That front end must be the decoder's: at a warp of 1 (written as
// 1.0000 either way) both paths hear the same words at the same times.
TEST_F(FrequencyWarpTest, OwnFrontEndMatchesTheDecoders) {
  PocketSphinxFactory factory{PocketSphinxOptions{}};
  auto engine = factory.make();
  const auto pcm = load("male.wav");
  const Recognition raw = engine->recognize(pcm.data(), pcm.size(), "en", {1.0});
  const Recognition own = engine->recognize(pcm.data(), pcm.size(), "en", {1.0 + 1e-9});
  ASSERT_GE(raw.words.size(), 5u);
  ASSERT_EQ(own.words.size(), raw.words.size());
  for (size_t i = 0; i < raw.words.size(); ++i) {
    EXPECT_EQ(own.words[i].text, raw.words[i].text) << i;
    EXPECT_DOUBLE_EQ(own.words[i].start, raw.words[i].start) << i;
  }
  // A real warp still decodes (and keeps the recording's length).
  const Recognition warped = engine->recognize(pcm.data(), pcm.size(), "en", {1.12});
  ASSERT_FALSE(warped.words.empty());
  EXPECT_LE(warped.words.back().end, double(pcm.size()) / kSampleRate + 0.05);
}

// A decoder goes from piece to piece, of one recording and then of the next,
// and engines are made as threads need them. Two things made a warped piece's
// words depend on that history: the warped front end kept its noise estimate
// from the audio before (fe_start_utt does not reset it), and sphinxbase keeps
// the warp in process-wide statics that a newly made decoder marks neutral, so
// a second engine's front end at the same warp came out unwarped. Here the
// second engine is made after the first has decoded, and hears loud noise
// before the speech.
TEST_F(FrequencyWarpTest, WarpedPieceDecodesTheSameWhateverCameBefore) {
  PocketSphinxFactory factory{PocketSphinxOptions{}};
  const auto pcm = load("male.wav"), noise = load("noise.wav");
  auto fresh = factory.make();
  const Recognition first = fresh->recognize(pcm.data(), pcm.size(), "en", {1.12});
  auto used = factory.make();
  used->recognize(noise.data(), noise.size(), "en", {1.12});
  const Recognition after = used->recognize(pcm.data(), pcm.size(), "en", {1.12});
  ASSERT_GE(first.words.size(), 5u);
  ASSERT_EQ(after.words.size(), first.words.size());
  for (size_t i = 0; i < first.words.size(); ++i) {
    EXPECT_EQ(after.words[i].text, first.words[i].text) << i;
    EXPECT_DOUBLE_EQ(after.words[i].start, first.words[i].start) << i;
    EXPECT_DOUBLE_EQ(after.words[i].confidence, first.words[i].confidence) << i;
  }
}

// The statics above, directly: the same warp asked for again after a decoder
// was made still warps.
TEST_F(FrequencyWarpTest, SameWarpAgainAfterADecoderStillWarps) {
  const auto pcm = load("male.wav");
  PocketSphinxFactory factory{PocketSphinxOptions{}};
  const Cepstra plain = cepstra(make_front_end(PocketSphinxOptions{}, 1.0).get(), pcm.data(), pcm.size());
  const Cepstra once = cepstra(make_front_end(PocketSphinxOptions{}, 1.12).get(), pcm.data(), pcm.size());
  factory.make();
  const Cepstra again = cepstra(make_front_end(PocketSphinxOptions{}, 1.12).get(), pcm.data(), pcm.size());
  EXPECT_NE(once.data, plain.data);
  EXPECT_EQ(again.data, once.data);
}

}  // namespace
}  // namespace scribe::speech
