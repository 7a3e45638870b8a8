#include "speech/mfcc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace scribe::speech {
namespace {

std::vector<int16_t> tone(double hz, int samples, double amplitude = 8000) {
  std::vector<int16_t> out(samples);
  for (int i = 0; i < samples; ++i) {
    out[i] = int16_t(amplitude * std::sin(2 * std::numbers::pi * hz * i / kSampleRate));
  }
  return out;
}

std::vector<int16_t> white_noise(int samples, double amplitude = 8000) {
  std::vector<int16_t> out(samples);
  uint32_t seed = 42;
  for (int i = 0; i < samples; ++i) {
    seed = seed * 1664525u + 1013904223u;
    out[i] = int16_t((double(seed >> 8) / double(1u << 24) * 2 - 1) * amplitude);
  }
  return out;
}

// Mean of each coefficient over all frames.
std::vector<double> mean_features(const MfccExtractor& mfcc, const std::vector<int16_t>& samples) {
  const std::vector<float> features = mfcc.compute(samples);
  const int dim = mfcc.dimension();
  const size_t frames = features.size() / dim;
  std::vector<double> mean(dim, 0.0);
  for (size_t f = 0; f < frames; ++f) {
    for (int d = 0; d < dim; ++d) mean[d] += features[f * dim + d] / double(frames);
  }
  return mean;
}

TEST(MfccTest, FrameCountFollowsWindowAndHop) {
  EXPECT_EQ(MfccExtractor::frame_count(0), 0);
  EXPECT_EQ(MfccExtractor::frame_count(399), 0);
  EXPECT_EQ(MfccExtractor::frame_count(400), 1);
  EXPECT_EQ(MfccExtractor::frame_count(559), 1);
  EXPECT_EQ(MfccExtractor::frame_count(560), 2);
  EXPECT_EQ(MfccExtractor::frame_count(16000), 98);

  const MfccExtractor mfcc;
  EXPECT_EQ(mfcc.dimension(), 21);
  EXPECT_EQ(mfcc.compute(tone(440, 16000)).size(), size_t(98 * 21));
  EXPECT_TRUE(mfcc.compute(tone(440, 300)).empty());

  MfccOptions options;
  options.num_cepstra = 13;
  options.append_log_energy = false;
  EXPECT_EQ(MfccExtractor(options).dimension(), 13);
}

TEST(MfccTest, ToneAndNoiseHaveDifferentCepstra) {
  const MfccExtractor mfcc;
  const std::vector<double> a = mean_features(mfcc, tone(1000, 16000));
  const std::vector<double> b = mean_features(mfcc, white_noise(16000));
  // Cepstra c1.. describe the spectral shape: a single peak versus a flat
  // spectrum must be far apart.
  double distance = 0;
  for (int d = 1; d < 20; ++d) distance += (a[d] - b[d]) * (a[d] - b[d]);
  EXPECT_GT(std::sqrt(distance), 5.0);
  // White noise is spectrally flat, so its higher cepstra are small compared
  // with the tone's.
  double noise_shape = 0, tone_shape = 0;
  for (int d = 2; d < 20; ++d) {
    noise_shape += b[d] * b[d];
    tone_shape += a[d] * a[d];
  }
  EXPECT_LT(noise_shape * 4, tone_shape);
}

TEST(MfccTest, SameSignalGivesSameFeaturesAndLoudnessMovesEnergy) {
  const MfccExtractor mfcc;
  // Broadband noise, so 16-bit rounding is negligible in every filter.
  const std::vector<double> quiet = mean_features(mfcc, white_noise(8000, 1000));
  const std::vector<double> loud = mean_features(mfcc, white_noise(8000, 10000));
  // Ten times the amplitude is 100x the energy: log energy grows by ln(100)
  // and so does c0 (scaled by the orthonormal DCT), the shape stays the same.
  EXPECT_NEAR(loud[20] - quiet[20], std::log(100.0), 0.05);
  for (int d = 1; d < 20; ++d) EXPECT_NEAR(loud[d], quiet[d], 0.05) << "cepstrum " << d;
}

TEST(MfccTest, ToneFrequencyChangesCepstra) {
  const MfccExtractor mfcc;
  const std::vector<double> low = mean_features(mfcc, tone(300, 8000));
  const std::vector<double> high = mean_features(mfcc, tone(3000, 8000));
  double distance = 0;
  for (int d = 1; d < 20; ++d) distance += (low[d] - high[d]) * (low[d] - high[d]);
  EXPECT_GT(std::sqrt(distance), 5.0);
}

TEST(MfccTest, DigitalSilenceStaysFinite) {
  const MfccExtractor mfcc;
  const std::vector<float> features = mfcc.compute(std::vector<int16_t>(4000, 0));
  ASSERT_FALSE(features.empty());
  for (float v : features) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace scribe::speech
