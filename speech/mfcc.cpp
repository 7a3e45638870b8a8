#include "speech/mfcc.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace scribe::speech {
namespace {

// The real 512-point transform is computed as a 256-point complex one over
// the even/odd sample pairs, which halves the work of the hottest loop.
constexpr int kHalfFft = kMfccFftSize / 2;
constexpr int kBins = kMfccFftSize / 2 + 1;
// Keeps log() finite on digital silence; far below any real signal's energy.
constexpr float kEnergyFloor = 1e-10f;

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

}  // namespace

MfccExtractor::MfccExtractor(MfccOptions options) : options_(options) {
  if (options_.num_filters < 2 || options_.num_cepstra < 1 || options_.num_cepstra > options_.num_filters) {
    throw std::invalid_argument("MfccExtractor: need 2+ filters and 1..num_filters cepstra");
  }
  dimension_ = options_.num_cepstra + (options_.append_log_energy ? 1 : 0);
  const double pi = std::numbers::pi;

  window_.resize(kMfccFrameSamples);
  for (int n = 0; n < kMfccFrameSamples; ++n) {
    window_[n] = float(0.54 - 0.46 * std::cos(2 * pi * n / (kMfccFrameSamples - 1)));
  }

  // Twiddles of the full size: the half-size FFT uses every other one and
  // the real-spectrum split step uses all of them.
  twiddle_cos_.resize(kMfccFftSize / 2);
  twiddle_sin_.resize(kMfccFftSize / 2);
  for (int k = 0; k < kMfccFftSize / 2; ++k) {
    twiddle_cos_[k] = float(std::cos(-2 * pi * k / kMfccFftSize));
    twiddle_sin_[k] = float(std::sin(-2 * pi * k / kMfccFftSize));
  }
  // Each stage of the half-size FFT gets its own contiguous run of twiddles
  // (len / 2 of them for a len-point stage) so its inner loop reads them in
  // order.
  for (int len = 2; len <= kHalfFft; len <<= 1) {
    for (int k = 0; k < len / 2; ++k) {
      stage_cos_.push_back(twiddle_cos_[size_t(k) * (kMfccFftSize / len)]);
      stage_sin_.push_back(twiddle_sin_[size_t(k) * (kMfccFftSize / len)]);
    }
  }
  bit_reverse_.resize(kHalfFft);
  int bits = 0;
  while ((1 << bits) < kHalfFft) ++bits;
  for (uint32_t i = 0; i < uint32_t(kHalfFft); ++i) {
    uint32_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1u) << (bits - 1 - b);
    bit_reverse_[i] = r;
  }

  // Triangular filters equally spaced on the mel scale.
  const double high = std::min(options_.high_hz, kSampleRate / 2.0);
  const double mel_low = hz_to_mel(options_.low_hz);
  const double mel_high = hz_to_mel(high);
  std::vector<double> edges(options_.num_filters + 2);
  for (size_t i = 0; i < edges.size(); ++i) {
    const double mel = mel_low + (mel_high - mel_low) * double(i) / double(edges.size() - 1);
    edges[i] = mel_to_hz(mel) * kMfccFftSize / kSampleRate;  // in (fractional) bins
  }
  filter_first_bin_.resize(options_.num_filters);
  filter_weights_.resize(options_.num_filters);
  for (int f = 0; f < options_.num_filters; ++f) {
    const double left = edges[f], center = edges[f + 1], right = edges[f + 2];
    const int first = std::max(0, int(std::ceil(left)));
    const int last = std::min(kBins - 1, int(std::floor(right)));
    filter_first_bin_[f] = first;
    for (int bin = first; bin <= last; ++bin) {
      double w =
          bin <= center ? (bin - left) / std::max(center - left, 1e-9) : (right - bin) / std::max(right - center, 1e-9);
      filter_weights_[f].push_back(float(std::clamp(w, 0.0, 1.0)));
    }
    // Low filters can be narrower than one bin; give them the nearest bin so
    // their log energy is never the floor for every frame.
    if (filter_weights_[f].empty()) {
      filter_first_bin_[f] = std::clamp(int(std::lround(center)), 0, kBins - 1);
      filter_weights_[f].push_back(1.0f);
    }
  }

  // Orthonormal DCT-II, so cepstra have comparable scales across indices.
  dct_.resize(size_t(options_.num_cepstra) * options_.num_filters);
  const int m = options_.num_filters;
  for (int c = 0; c < options_.num_cepstra; ++c) {
    const double scale = c == 0 ? std::sqrt(1.0 / m) : std::sqrt(2.0 / m);
    for (int f = 0; f < m; ++f) {
      dct_[size_t(c) * m + f] = float(scale * std::cos(pi * c * (f + 0.5) / m));
    }
  }
}

int64_t MfccExtractor::frame_count(int64_t samples) {
  if (samples < kMfccFrameSamples) return 0;
  return 1 + (samples - kMfccFrameSamples) / kMfccHopSamples;
}

// In-place iterative radix-2 FFT of kHalfFft points on split real and
// imaginary arrays: plain float arithmetic with contiguous per-stage
// twiddles, which the compiler vectorizes (std::complex products check for
// infinities and NaNs and are several times slower).
void MfccExtractor::fft(float* re, float* im) const {
  for (uint32_t i = 0; i < uint32_t(kHalfFft); ++i) {
    const uint32_t j = bit_reverse_[i];
    if (i < j) {
      std::swap(re[i], re[j]);
      std::swap(im[i], im[j]);
    }
  }
  const float* wr_stage = stage_cos_.data();
  const float* wi_stage = stage_sin_.data();
  for (int len = 2; len <= kHalfFft; len <<= 1) {
    const int half = len / 2;
    for (int start = 0; start < kHalfFft; start += len) {
      float* ar = re + start;
      float* ai = im + start;
      float* br = re + start + half;
      float* bi = im + start + half;
      for (int k = 0; k < half; ++k) {
        const float tr = br[k] * wr_stage[k] - bi[k] * wi_stage[k];
        const float ti = br[k] * wi_stage[k] + bi[k] * wr_stage[k];
        br[k] = ar[k] - tr;
        bi[k] = ai[k] - ti;
        ar[k] += tr;
        ai[k] += ti;
      }
    }
    wr_stage += half;
    wi_stage += half;
  }
}

void MfccExtractor::frame_features(const int16_t* frame, int16_t previous, float* out, std::vector<float>& mel) const {
  // Pre-emphasis (using the sample before the frame so frames do not depend
  // on where a read started), DC removal, windowing, zero padding to 512.
  float buffer[kMfccFftSize] = {};
  double mean = 0;
  const float alpha = float(options_.pre_emphasis);
  float prior = float(previous);
  for (int n = 0; n < kMfccFrameSamples; ++n) {
    const float x = float(frame[n]);
    buffer[n] = x - alpha * prior;
    prior = x;
    mean += buffer[n];
  }
  mean /= kMfccFrameSamples;
  double energy = 0;
  for (int n = 0; n < kMfccFrameSamples; ++n) {
    buffer[n] = (buffer[n] - float(mean)) * window_[n];
    energy += double(buffer[n]) * buffer[n];
  }

  float re[kHalfFft], im[kHalfFft];
  for (int n = 0; n < kHalfFft; ++n) {
    re[n] = buffer[2 * n];
    im[n] = buffer[2 * n + 1];
  }
  fft(re, im);

  // Split the packed half-size spectrum into the real signal's spectrum and
  // keep only the power per bin.
  float power[kBins];
  for (int k = 0; k <= kHalfFft; ++k) {
    // X[k] = E[k] + W^k O[k], with E and O the spectra of the even and odd
    // samples recovered from Z[k] and conj(Z[N/2 - k]).
    const int a = k % kHalfFft, b = (kHalfFft - k) % kHalfFft;
    const float zr = re[a], zi = im[a], cr = re[b], ci = -im[b];  // Z[k] and conj(Z[N/2 - k])
    const float er = 0.5f * (zr + cr), ei = 0.5f * (zi + ci);
    const float orr = 0.5f * (zi - ci), oi = -0.5f * (zr - cr);  // (Z - conj) / 2i
    const float wr = k < kHalfFft ? twiddle_cos_[k] : -1.0f;
    const float wi = k < kHalfFft ? twiddle_sin_[k] : 0.0f;
    const float xr = er + wr * orr - wi * oi;
    const float xi = ei + wr * oi + wi * orr;
    power[k] = xr * xr + xi * xi;
  }

  for (int f = 0; f < options_.num_filters; ++f) {
    const auto& weights = filter_weights_[f];
    const float* p = power + filter_first_bin_[f];
    float sum = 0;
    for (size_t i = 0; i < weights.size(); ++i) sum += weights[i] * p[i];
    mel[f] = std::log(std::max(sum, kEnergyFloor));
  }
  const int m = options_.num_filters;
  for (int c = 0; c < options_.num_cepstra; ++c) {
    const float* row = dct_.data() + size_t(c) * m;
    float sum = 0;
    for (int f = 0; f < m; ++f) sum += row[f] * mel[f];
    out[c] = sum;
  }
  if (options_.append_log_energy) {
    out[options_.num_cepstra] = float(std::log(std::max(energy, double(kEnergyFloor))));
  }
}

std::vector<float> MfccExtractor::compute(const int16_t* samples, size_t count) const {
  const int64_t frames = frame_count(int64_t(count));
  std::vector<float> features(size_t(frames) * dimension_);
  std::vector<float> mel(options_.num_filters);
  for (int64_t i = 0; i < frames; ++i) {
    const size_t offset = size_t(i) * kMfccHopSamples;
    const int16_t previous = offset > 0 ? samples[offset - 1] : samples[offset];
    frame_features(samples + offset, previous, features.data() + size_t(i) * dimension_, mel);
  }
  return features;
}

}  // namespace scribe::speech
