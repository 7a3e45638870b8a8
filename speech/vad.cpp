#include "speech/vad.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <numeric>

// How the detector decides. Every 10 ms frame is analysed over a 20 ms window
// (the frame and the one before it): its energy, the energy in the telephone
// band (300-3400 Hz) where speech lives, the spectral flatness of that band
// (noise is flat, music is a few sharp peaks, speech is in between), the
// zero-crossing rate, the spectral change from the previous frame and the
// strength and height of its pitch. Speech differs from noise and music less in
// any one frame than in how these move over a second: syllables make the band
// energy rise and fall 2-8 times a second, speech pitch glides where a played
// note holds still, voiced and unvoiced sounds alternate, and the spectrum keeps
// changing. So each frame is scored on statistics over the second around it
// (half a second of look-ahead: feed() scores a frame once the frames after it
// have arrived), plus its loudness over an adaptive noise floor, by a logistic
// model whose weights were fitted offline on synthetic speech, noise and music
// (see kWeights). The per-frame decisions are then smoothed with VadOptions.
namespace scribe::speech {

namespace {

constexpr int kWindow = 2 * kFrameSamples;  // analysis window: previous + current frame
constexpr int kFftSize = 512;
constexpr double kBinHz = double(kSampleRate) / kFftSize;
constexpr int kBandLo = 10;   // 312 Hz
constexpr int kBandHi = 109;  // 3400 Hz
constexpr int kFlatHi = 128;  // 4000 Hz
constexpr int kFluxBands = 20;
constexpr int kMinLag = 32;   // 500 Hz
constexpr int kMaxLag = 200;  // 80 Hz
constexpr float kVoicedThreshold = 0.6f;
constexpr int kContext = 50;           // frames on each side of the scored frame
constexpr float kSilentDb = 20.0f;     // below about -70 dBFS nothing is speech
constexpr float kFloorRiseDb = 0.05f;  // per frame: the noise floor follows a louder background within seconds

// Raw per-frame features, in this order in VoiceActivityDetector::recent_.
enum Raw { kEnergy, kBandDb, kLogFlat, kZcr, kFlux, kVoicing, kPitch, kRawCount };

// Inputs of the logistic model; the last two depend on the noise floor and are
// added in finish().
enum Input {
  kModStd,
  kFluxMean,
  kFlatMean,
  kVoicedFrac,
  kPitchStable,
  kZcrStd,
  kSyllableMod,
  kLocalPeak,
  kFlatSq,
  kContextInputs,
  kRelEnergy = kContextInputs,
  kRelEnergyLow,
  kInputCount
};

// Fitted offline (logistic regression, equal class weights, on the frames that
// pass the energy gate) on the tuning set described in bench/vad_benchmark.cpp:
// flite voices slt, rms and awb on the tuning sentences, alone and over low
// white, pink and brown noise; white, pink and brown noise; sox tones, chords,
// tremolo, sweeps and note melodies.
// Index kInputCount is the bias.
constexpr std::array<float, kInputCount + 1> kWeights = {0.043f, -12.33f, -6.712f, 5.429f,  -8.335f,
                                                         2.501f, 9.192f,  0.837f,  -12.11f,  // context inputs
                                                         1.018f, -0.523f,                    // energy over the floor
                                                         -3.218f};                           // bias

struct FftTables {
  std::array<float, kWindow> hann{};
  std::array<std::complex<float>, kFftSize / 2> twiddle{};
  std::array<int, kFluxBands + 1> band_edges{};
  FftTables() {
    for (int i = 0; i < kWindow; ++i) hann[i] = float(0.5 - 0.5 * std::cos(2 * M_PI * (i + 0.5) / kWindow));
    for (int i = 0; i < kFftSize / 2; ++i) twiddle[i] = std::polar(1.0f, float(-2 * M_PI * i / kFftSize));
    // Log-spaced bands from 100 Hz to 7500 Hz for the spectral change.
    for (int b = 0; b <= kFluxBands; ++b) {
      const double hz = 100.0 * std::pow(75.0, double(b) / kFluxBands);
      band_edges[b] = std::max(b == 0 ? 3 : band_edges[b - 1] + 1, int(std::lround(hz / kBinHz)));
    }
  }
};

const FftTables& tables() {
  static const FftTables t;
  return t;
}

// In-place iterative radix-2 FFT of kFftSize points.
void fft(std::array<std::complex<float>, kFftSize>& a) {
  const auto& t = tables();
  for (int i = 1, j = 0; i < kFftSize; ++i) {
    int bit = kFftSize >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int len = 2; len <= kFftSize; len <<= 1) {
    const int step = kFftSize / len;
    for (int i = 0; i < kFftSize; i += len)
      for (int k = 0; k < len / 2; ++k) {
        const auto u = a[i + k];
        const auto v = a[i + k + len / 2] * t.twiddle[k * step];
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
  }
}

// Fills out[kRawCount] for the window (previous frame, current frame); bands
// holds the previous frame's band energies on entry and this frame's on return.
void analyse_frame(const int16_t* prev, const int16_t* cur, float* bands, float* out) {
  const auto& t = tables();
  std::array<float, kWindow> x{};
  for (int i = 0; i < kFrameSamples; ++i) {
    x[i] = prev[i];
    x[i + kFrameSamples] = cur[i];
  }
  const float mean = std::accumulate(x.begin(), x.end(), 0.0f) / kWindow;
  for (auto& v : x) v -= mean;

  double energy = 0;
  int crossings = 0;
  for (int i = kFrameSamples; i < kWindow; ++i) {
    energy += double(x[i]) * x[i];
    if ((x[i] >= 0) != (x[i - 1] >= 0)) ++crossings;
  }
  out[kEnergy] = float(10 * std::log10(energy / kFrameSamples + 1.0));
  out[kZcr] = float(crossings) / kFrameSamples;

  std::array<std::complex<float>, kFftSize> spec{};
  for (int i = 0; i < kWindow; ++i) spec[i] = x[i] * t.hann[i];
  fft(spec);
  std::array<float, kFftSize / 2 + 1> power{};
  for (int i = 0; i <= kFftSize / 2; ++i) power[i] = std::norm(spec[i]) + 1e-3f;

  double band = 0, log_sum = 0, lin_sum = 0;
  for (int i = kBandLo; i < kBandHi; ++i) band += power[i];
  for (int i = kBandLo; i < kFlatHi; ++i) {
    log_sum += std::log(power[i]);
    lin_sum += power[i];
  }
  const int flat_bins = kFlatHi - kBandLo;
  out[kBandDb] = float(10 * std::log10(band / kWindow + 1.0));
  out[kLogFlat] = float(log_sum / flat_bins - std::log(lin_sum / flat_bins));

  // Spectral change: mean absolute difference of band levels, with levels
  // floored 50 dB under the loudest band so that near-silent bands (whose level
  // is random) do not count.
  std::array<float, kFluxBands> level{};
  float loudest = -1e9f;
  for (int b = 0; b < kFluxBands; ++b) {
    double s = 0;
    for (int i = t.band_edges[b]; i < t.band_edges[b + 1]; ++i) s += power[i];
    level[b] = float(10 * std::log10(s / (t.band_edges[b + 1] - t.band_edges[b]) + 1.0));
    loudest = std::max(loudest, level[b]);
  }
  float flux = 0;
  for (int b = 0; b < kFluxBands; ++b) {
    const float v = std::max(level[b], loudest - 50);
    flux += std::fabs(v - bands[b]);
    bands[b] = v;
  }
  out[kFlux] = flux / kFluxBands;

  // Pitch: the strongest normalized autocorrelation between 80 and 500 Hz,
  // refined by a parabola through its neighbours.
  float best = 0;
  int best_lag = 0;
  std::array<float, kMaxLag + 2> r{};
  for (int lag = kMinLag - 1; lag <= kMaxLag + 1; ++lag) {
    double xy = 0, xx = 0, yy = 0;
    for (int i = 0; i + lag < kWindow; ++i) {
      xy += double(x[i]) * x[i + lag];
      xx += double(x[i]) * x[i];
      yy += double(x[i + lag]) * x[i + lag];
    }
    r[lag] = xx > 0 && yy > 0 ? float(xy / std::sqrt(xx * yy)) : 0.0f;
  }
  for (int lag = kMinLag; lag <= kMaxLag; ++lag)
    if (r[lag] > best) {
      best = r[lag];
      best_lag = lag;
    }
  out[kVoicing] = best;
  out[kPitch] = 0;
  if (best_lag > 0) {
    const float a = r[best_lag - 1], b = r[best_lag], c = r[best_lag + 1];
    const float denom = a - 2 * b + c;
    const float shift = std::fabs(denom) > 1e-6f ? std::clamp(0.5f * (a - c) / denom, -0.5f, 0.5f) : 0.0f;
    out[kPitch] = float(std::log2(kSampleRate / (best_lag + shift)));
  }
}

// Context inputs of the frame at `center` from the raw features of `count`
// frames (the window is clipped at the ends of the recording).
void context_inputs(const float* raw, int64_t count, int64_t center, float* in) {
  const int64_t lo = std::max<int64_t>(0, center - kContext);
  const int64_t hi = std::min<int64_t>(count, center + kContext + 1);
  const double n = double(hi - lo);
  auto at = [&](int64_t f, int k) { return raw[f * kRawCount + k]; };

  double band_sum = 0, band_sq = 0, flux = 0, flat = 0, zcr = 0, zcr_sq = 0, band_max = -1e9;
  int voiced = 0, stable = 0, pairs = 0;
  for (int64_t f = lo; f < hi; ++f) {
    const double b = at(f, kBandDb);
    band_sum += b;
    band_sq += b * b;
    band_max = std::max(band_max, b);
    flux += at(f, kFlux);
    flat += at(f, kLogFlat);
    zcr += at(f, kZcr);
    zcr_sq += double(at(f, kZcr)) * at(f, kZcr);
    if (at(f, kVoicing) > kVoicedThreshold) {
      ++voiced;
      // A held note keeps its pitch within 1% over 40 ms; speech glides.
      if (f - 4 >= lo && at(f - 4, kVoicing) > kVoicedThreshold) {
        ++pairs;
        if (std::fabs(at(f, kPitch) - at(f - 4, kPitch)) < 0.015f) ++stable;
      }
    }
  }
  const double band_mean = band_sum / n;
  in[kModStd] = float(std::sqrt(std::max(0.0, band_sq / n - band_mean * band_mean)) / 10);
  in[kFluxMean] = float(flux / n / 10);
  in[kFlatMean] = float(flat / n / 5);
  in[kFlatSq] = in[kFlatMean] * in[kFlatMean];
  in[kVoicedFrac] = float(voiced / n);
  in[kPitchStable] = pairs >= 5 ? float(stable) / pairs : 0.0f;
  in[kZcrStd] = float(std::sqrt(std::max(0.0, zcr_sq / n - (zcr / n) * (zcr / n))) * 10);

  // Share of the band-energy modulation that lies at syllable rate (2-8 Hz),
  // from a Hann-weighted DFT of the band level over the window.
  double total = 0, syllable = 0;
  const int64_t len = hi - lo;
  for (int64_t f = lo; f < hi; ++f) {
    const double w = 0.5 - 0.5 * std::cos(2 * M_PI * (f - lo + 0.5) / len);
    const double d = (at(f, kBandDb) - band_mean) * w;
    total += d * d;
  }
  for (int hz = 2; hz <= 8; ++hz) {
    double re = 0, im = 0;
    for (int64_t f = lo; f < hi; ++f) {
      const double w = 0.5 - 0.5 * std::cos(2 * M_PI * (f - lo + 0.5) / len);
      const double d = (at(f, kBandDb) - band_mean) * w;
      const double ph = 2 * M_PI * hz * double(f - lo) * kFrameSeconds;
      re += d * std::cos(ph);
      im += d * std::sin(ph);
    }
    syllable += (re * re + im * im) * 2 / double(len);
  }
  in[kSyllableMod] = total > 1e-6 ? float(std::min(1.0, syllable / total)) : 0.0f;

  double local = 0;
  int local_n = 0;
  for (int64_t f = std::max(lo, center - 2); f < std::min(hi, center + 3); ++f, ++local_n) local += at(f, kBandDb);
  in[kLocalPeak] = float((local / std::max(1, local_n) - band_max) / 10);
}

float context_score(const float* in) {
  float s = kWeights[kInputCount];
  for (int i = 0; i < kContextInputs; ++i) s += kWeights[i] * in[i];
  return s;
}

// Energy over the noise floor, in dB, per frame. The floor follows the quietest
// recent level: it drops at once and rises by kFloorRiseDb a frame, tracked
// forwards and backwards so speech at the very start is measured against the
// pause after it.
std::vector<float> energy_over_floor(const std::vector<float>& energy) {
  const size_t n = energy.size();
  std::vector<float> smooth(n), fwd(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t lo = i >= 3 ? i - 3 : 0, hi = std::min(n, i + 4);
    smooth[i] = std::accumulate(energy.begin() + long(lo), energy.begin() + long(hi), 0.0f) / float(hi - lo);
  }
  float floor = n ? *std::min_element(smooth.begin(), smooth.begin() + long(std::min<size_t>(n, 100))) : 0;
  for (size_t i = 0; i < n; ++i) fwd[i] = floor = std::min(smooth[i], floor + kFloorRiseDb);
  floor = n ? *std::min_element(smooth.end() - long(std::min<size_t>(n, 100)), smooth.end()) : 0;
  for (size_t i = n; i-- > 0;) {
    floor = std::min(smooth[i], floor + kFloorRiseDb);
    out[i] = smooth[i] - std::min(floor, fwd[i]);
  }
  return out;
}

float energy_score(float over_floor) {
  const float rel = std::clamp(over_floor, 0.0f, 40.0f);
  return kWeights[kRelEnergy] * rel / 10 + kWeights[kRelEnergyLow] * std::min(rel, 10.0f) / 10;
}

// The runs of frames equal to `value`, as [first, end) frame ranges in order.
struct FrameRun {
  int64_t first, end;
};
std::vector<FrameRun> runs_of(const std::vector<uint8_t>& flags, uint8_t value) {
  std::vector<FrameRun> out;
  const int64_t n = int64_t(flags.size());
  for (int64_t i = 0; i < n;) {
    if (flags[size_t(i)] != value) {
      ++i;
      continue;
    }
    int64_t j = i;
    while (j < n && flags[size_t(j)] == value) ++j;
    out.push_back({i, j});
    i = j;
  }
  return out;
}

// Runs of `value` shorter than `frames` that have the other value on both
// sides are overwritten with it. Filling a run never changes another run of
// `value`, so the runs can be found first.
void fill_short_runs(std::vector<uint8_t>& flags, uint8_t value, size_t frames, bool edges_too) {
  for (const auto [i, j] : runs_of(flags, value)) {
    const bool inner = i > 0 && j < int64_t(flags.size());
    if (j - i < int64_t(frames) && (inner || edges_too))
      std::fill(flags.begin() + long(i), flags.begin() + long(j), uint8_t(!value));
  }
}

// Neighbouring phrases. The model scores a frame on the second around it,
// and some real voices (steady read speech, whose pitch holds still like a
// played note) score below zero for a whole phrase although it stands far
// above the noise floor: only bursts shorter than min_speech_seconds pass, and
// a short phrase just before or after a clear one was dropped whole. A
// recognizer copes with a little extra sound around speech but never recovers
// a dropped word. So each run of speech that survived the smoothing takes in
// the sound next to it that stays clearly above the noise floor
// (kGrowOverFloorDb) and is not much quieter than the run itself
// (kGrowBelowRunDb), across quiet gaps shorter than `gap` frames, up to
// `reach` frames from the run's edge.
constexpr float kGrowOverFloorDb = 10.0f;
constexpr float kGrowBelowRunDb = 30.0f;  // and at most this far below the run's loudest frame
constexpr double kGrowSeconds = 1.0;

void take_in_neighbours(std::vector<uint8_t>& flags, const std::vector<float>& energy, const std::vector<float>& over,
                        size_t reach, size_t gap) {
  const std::vector<uint8_t> runs = flags;
  const int64_t n = int64_t(flags.size());
  for (const auto [i, j] : runs_of(runs, 1)) {
    const float loudest = *std::max_element(energy.begin() + long(i), energy.begin() + long(j));
    const auto loud = [&](int64_t k) {
      return over[size_t(k)] > kGrowOverFloorDb && energy[size_t(k)] > loudest - kGrowBelowRunDb;
    };
    // Outwards from the run's first frame (i) and last frame (j - 1).
    for (const auto& [edge, dir] : {std::pair{i, int64_t(-1)}, std::pair{j - 1, int64_t(1)}}) {
      int64_t last_loud = edge;
      for (int64_t k = edge + dir; k >= 0 && k < n && std::llabs(k - edge) <= int64_t(reach) && !runs[size_t(k)];
           k += dir) {
        if (loud(k)) last_loud = k;
        else if (std::llabs(k - last_loud) > int64_t(gap)) break;
      }
      for (int64_t k = std::min(edge, last_loud); k <= std::max(edge, last_loud); ++k) flags[size_t(k)] = 1;
    }
  }
}

}  // namespace

struct VoiceActivityDetector::Impl {
  // Analyses one complete frame and scores every frame whose context is now
  // complete (or all remaining ones when `final`).
  static void analyse(VoiceActivityDetector& d, const int16_t* frame) {
    const size_t at = d.recent_.size();
    d.recent_.resize(at + kRawCount);
    analyse_frame(d.previous_.data(), frame, d.prev_bands_.data(), d.recent_.data() + at);
    std::copy(frame, frame + kFrameSamples, d.previous_.begin());
    ++d.frames_seen_;
    score_ready(d, false);
  }

  static void score_ready(VoiceActivityDetector& d, bool final) {
    const int64_t count = int64_t(d.recent_.size()) / kRawCount;
    for (;;) {
      const int64_t next = int64_t(d.features_.size()) / d.features_per_frame_;  // absolute index
      if (next >= d.frames_seen_ || (!final && next + kContext >= d.frames_seen_)) break;
      std::array<float, kContextInputs> in{};
      context_inputs(d.recent_.data(), count, next - d.recent_first_, in.data());
      d.features_.push_back(d.recent_[size_t(next - d.recent_first_) * kRawCount + kEnergy]);
      d.features_.push_back(context_score(in.data()));
    }
    // Frames that no longer fall in any future context are dropped.
    const int64_t scored = int64_t(d.features_.size()) / d.features_per_frame_;
    const int64_t keep_from = scored - kContext;
    if (keep_from - d.recent_first_ > 4 * kContext) {
      d.recent_.erase(d.recent_.begin(), d.recent_.begin() + long((keep_from - d.recent_first_) * kRawCount));
      d.recent_first_ = keep_from;
    }
  }
};

VoiceActivityDetector::VoiceActivityDetector(VadOptions options)
    : options_(options), previous_(kFrameSamples, 0), prev_bands_(kFluxBands, 0.0f), features_per_frame_(2) {}

void VoiceActivityDetector::feed(const int16_t* samples, size_t count) {
  if (!carry_.empty()) {
    const size_t take = std::min(count, size_t(kFrameSamples) - carry_.size());
    carry_.insert(carry_.end(), samples, samples + take);
    samples += take;
    count -= take;
    if (carry_.size() < size_t(kFrameSamples)) return;
    Impl::analyse(*this, carry_.data());
    carry_.clear();
  }
  for (; count >= size_t(kFrameSamples); samples += kFrameSamples, count -= kFrameSamples)
    Impl::analyse(*this, samples);
  carry_.assign(samples, samples + count);
}

std::vector<uint8_t> VoiceActivityDetector::finish() {
  // A trailing partial frame counts as a frame, padded with silence.
  if (!carry_.empty()) {
    carry_.resize(kFrameSamples, 0);
    Impl::analyse(*this, carry_.data());
    carry_.clear();
  }
  Impl::score_ready(*this, true);

  const std::vector<float> energy = frame_energy();
  const std::vector<float> over = energy_over_floor(energy);
  const size_t n = energy.size();
  std::vector<float> score(n);
  for (size_t i = 0; i < n; ++i) score[i] = features_[i * 2 + 1] + energy_score(over[i]);
  std::vector<uint8_t> flags(n, 0);
  for (size_t i = 0; i < n; ++i) {
    // A short moving average keeps single frames from flickering.
    const size_t lo = i >= 2 ? i - 2 : 0, hi = std::min(n, i + 3);
    const float s = std::accumulate(score.begin() + long(lo), score.begin() + long(hi), 0.0f) / float(hi - lo);
    flags[i] = s > 0 && energy[i] > kSilentDb && over[i] > 3.0f;
  }

  const auto frames = [](double seconds) { return size_t(std::max(0.0, std::round(seconds / kFrameSeconds))); };
  fill_short_runs(flags, 0, frames(options_.min_silence_seconds), false);
  fill_short_runs(flags, 1, frames(options_.min_speech_seconds), true);
  take_in_neighbours(flags, energy, over, frames(kGrowSeconds), frames(options_.min_silence_seconds));
  // Hangover: speech goes on a while after the last voiced frame, which keeps
  // soft word endings.
  const size_t hang = frames(options_.hangover_seconds);
  for (size_t i = 0, last = SIZE_MAX; i < n; ++i) {
    if (flags[i]) {
      last = i;
    } else if (last != SIZE_MAX && i - last <= hang) {
      flags[i] = 2;
    }
  }
  for (auto& f : flags) f = f ? 1 : 0;
  return flags;
}

std::vector<float> VoiceActivityDetector::frame_energy() const {
  std::vector<float> out(features_.size() / size_t(features_per_frame_));
  for (size_t i = 0; i < out.size(); ++i) out[i] = features_[i * size_t(features_per_frame_)];
  return out;
}

namespace {

// Where to cut the speech frames [lo, hi) (the range the cut may fall in):
// the frame with the least energy averaged over 200 ms, nearest the middle on
// ties; without energy, the middle.
int64_t quietest_frame(int64_t lo, int64_t hi, const std::vector<float>& energy) {
  const int64_t mid = (lo + hi) / 2;
  if (energy.empty()) return mid;
  const int64_t n = int64_t(energy.size());
  int64_t best = mid;
  double best_energy = 1e300;
  for (int64_t f = lo; f < hi; ++f) {
    double sum = 0;
    int64_t count = 0;
    for (int64_t k = std::max<int64_t>(0, f - 10); k < std::min(n, f + 11); ++k, ++count) sum += energy[size_t(k)];
    const double e = count ? sum / double(count) : 0;
    if (e < best_energy - 1e-9 ||
        (std::fabs(e - best_energy) <= 1e-9 && std::llabs(f - mid) < std::llabs(best - mid))) {
      best_energy = e;
      best = f;
    }
  }
  return best;
}

// Soft onsets: the detector needs some evidence before it calls a frame
// speech, so a quiet first syllable (a breathy "h", a soft vowel) is often
// left out of the run and the recognizer never hears the first word. Each
// run's start is moved back over the frames just before it that are still
// clearly above the noise floor (kOnsetOverFloorDb), by at most `seconds`.
// Ends need no such help: the detector's hangover already keeps soft endings.
constexpr float kOnsetOverFloorDb = 6.0f;

std::vector<uint8_t> extend_onsets(const std::vector<uint8_t>& flags, const std::vector<float>& energy,
                                   double seconds) {
  std::vector<uint8_t> out = flags;
  const auto limit = int64_t(std::llround(std::max(0.0, seconds) / kFrameSeconds));
  if (energy.empty() || limit == 0) return out;
  const std::vector<float> over = energy_over_floor(energy);
  for (int64_t i = 1; i < int64_t(flags.size()); ++i) {
    if (!flags[size_t(i)] || flags[size_t(i - 1)]) continue;
    for (int64_t k = i - 1; k >= 0 && i - k <= limit && !flags[size_t(k)] && over[size_t(k)] > kOnsetOverFloorDb; --k)
      out[size_t(k)] = 1;
  }
  return out;
}

}  // namespace

std::vector<SpeechPiece> cut_pieces(const std::vector<uint8_t>& speech_frames, int64_t total_samples,
                                    const std::vector<float>& frame_energy, PieceOptions options) {
  const auto to_samples = [](double seconds) { return int64_t(std::llround(std::max(0.0, seconds) * kSampleRate)); };
  const int64_t max_len = std::max<int64_t>(kFrameSamples, to_samples(options.max_piece_seconds));
  const int64_t min_len = to_samples(options.min_piece_seconds);
  int64_t pad = to_samples(options.pad_seconds);
  // Padding must leave room for speech within the maximum.
  if (2 * pad >= max_len) pad = 0;
  const int64_t limit_frames = std::max<int64_t>(1, (max_len - 2 * pad) / kFrameSamples);
  const std::vector<float>& energy = frame_energy.size() == speech_frames.size() ? frame_energy : std::vector<float>{};
  const std::vector<uint8_t> flags = extend_onsets(speech_frames, energy, options.onset_seconds);

  // Unpadded pieces in frames. A run longer than the limit is cut greedily,
  // each cut at the quietest frame between half the limit and the limit from
  // the piece's start (and leaving at least half the limit behind it), so every
  // piece of a long run lies between half the limit and the limit.
  struct Span {
    int64_t start, end;       // frames
    bool run_start, run_end;  // whether the side is a run's edge (padded) or a cut
  };
  std::vector<Span> spans;
  for (const auto [i, j] : runs_of(flags, 1)) {
    int64_t a = i;
    while (j - a > limit_frames) {
      const int64_t lo = a + limit_frames / 2;
      const int64_t hi = std::min(a + limit_frames, j - limit_frames / 2);
      const int64_t cut = std::clamp(quietest_frame(lo, std::max(lo + 1, hi), energy), a + 1, j - 1);
      spans.push_back({a, cut, a == i, false});
      a = cut;
    }
    spans.push_back({a, j, a == i, true});
  }

  // Padding, clipping, and merging neighbours that touch after padding.
  std::vector<SpeechPiece> pieces;
  int64_t prev_speech_end = 0;  // unpadded end of the previous piece, in samples
  for (const Span& s : spans) {
    const int64_t speech_start = std::min(total_samples, s.start * kFrameSamples);
    const int64_t speech_end = std::min(total_samples, s.end * kFrameSamples);
    if (speech_end <= speech_start) continue;
    SpeechPiece p{s.run_start ? std::max<int64_t>(0, speech_start - pad) : speech_start,
                  s.run_end ? std::min(total_samples, speech_end + pad) : speech_end};
    if (!pieces.empty() && p.start_sample < pieces.back().end_sample) {
      SpeechPiece& last = pieces.back();
      if (p.end_sample - last.start_sample <= max_len) {
        last.end_sample = p.end_sample;
        prev_speech_end = speech_end;
        continue;
      }
      const int64_t middle = (prev_speech_end + speech_start) / 2;
      last.end_sample = std::max(last.start_sample, std::min(last.end_sample, middle));
      p.start_sample = std::min(p.end_sample, std::max(p.start_sample, middle));
    }
    pieces.push_back(p);
    prev_speech_end = speech_end;
  }
  std::erase_if(pieces,
                [&](const SpeechPiece& p) { return p.end_sample - p.start_sample < std::max<int64_t>(1, min_len); });
  return pieces;
}

}  // namespace scribe::speech
