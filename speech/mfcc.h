#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "speech/speech_types.h"

// Mel-frequency cepstral coefficients of 16 kHz mono PCM, computed here
// without an external DSP library: 25 ms frames every 10 ms, pre-emphasis, a
// Hamming window, a 512-point radix-2 FFT, a triangular mel filterbank and a
// DCT-II of the log filter energies. Diarization runs this over hours of
// audio, so everything that does not depend on the samples (window, twiddle
// factors, filterbank, DCT matrix) is computed once per extractor.
namespace scribe::speech {

struct MfccOptions {
  int num_filters = 40;
  int num_cepstra = 20;           // c0 .. c(num_cepstra - 1)
  bool append_log_energy = true;  // one extra value per frame: log of the frame's energy
  double low_hz = 60.0;
  double high_hz = 7600.0;
  double pre_emphasis = 0.97;
};

inline constexpr int kMfccFrameSamples = 400;          // 25 ms at 16 kHz
inline constexpr int kMfccHopSamples = kFrameSamples;  // 10 ms
inline constexpr int kMfccFftSize = 512;

class MfccExtractor {
 public:
  explicit MfccExtractor(MfccOptions options = {});

  // Values per frame: num_cepstra, plus one when append_log_energy is set.
  int dimension() const { return dimension_; }
  const MfccOptions& options() const { return options_; }

  // Frames produced for `samples` samples: every full 25 ms frame whose start
  // is a multiple of the 10 ms hop (none when fewer than 400 samples).
  static int64_t frame_count(int64_t samples);

  // Features of every frame, row-major (frame_count(count) x dimension()).
  std::vector<float> compute(const int16_t* samples, size_t count) const;
  std::vector<float> compute(const std::vector<int16_t>& samples) const {
    return compute(samples.data(), samples.size());
  }

 private:
  void fft(float* re, float* im) const;
  void frame_features(const int16_t* frame, int16_t previous, float* out, std::vector<float>& mel) const;

  MfccOptions options_;
  int dimension_ = 0;
  std::vector<float> window_;                     // Hamming, kMfccFrameSamples values
  std::vector<float> twiddle_cos_, twiddle_sin_;  // exp(-2 pi i k / N), k < N / 2
  std::vector<float> stage_cos_, stage_sin_;      // the same, laid out per FFT stage
  std::vector<uint32_t> bit_reverse_;             // permutation for the iterative FFT
  // Filterbank as (first bin, weights) per filter, since each triangle only
  // touches a few bins and a dense matrix would waste most of its products.
  std::vector<int> filter_first_bin_;
  std::vector<std::vector<float>> filter_weights_;
  std::vector<float> dct_;  // num_cepstra x num_filters
};

}  // namespace scribe::speech
