#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "speech/pocketsphinx_engine.h"

struct fe_s;  // sphinxbase's front end (fe_t)

// Vocal tract length normalization for PocketSphinx. Voices differ in the
// length of the vocal tract, which shifts every formant by a factor; the
// en-us model fits some voices much better than others. The front end can
// stretch its mel filterbank by a factor (sphinxbase's "inverse_linear"
// warp), and the factor that makes a recording's speech most likely under the
// model's own Gaussians is the one its pieces are decoded with.
//
// The choice is text-independent: every frame of a speech sample whose energy
// (c0) is above the sample's mean is scored, after cepstral mean
// normalization as the decoder does it, against all Gaussians of the model's
// static cepstral stream with equal weights, and the warp with the highest
// mean log-likelihood per frame wins. Scoring the decoder's best path instead
// picked a different warp for each short clip and gained nothing: its
// acoustic scores are normalized by each frame's best senone, so they do not
// compare across warps.
namespace scribe::speech {

// The candidate factors (sphinxbase's inverse_linear warp parameter); 1
// leaves the front end as it is. On the tuning set the one female voice (the
// Asterisk prompts) got 1.18 or 1.24 on most prompts, the male voices of the
// cards and goforward recordings 0.88-1.0. With 1.24 the top of the range,
// 105 of 269 prompts chose it; adding 1.30 took the prompts from 442 to 433
// errors in 1,600 words (flite prose 92 -> 90, cards the same), and 1.36
// added nothing more.
inline const std::vector<double>& warp_candidates() {
  static const std::vector<double> w = {0.88, 0.94, 1.0, 1.06, 1.12, 1.18, 1.24, 1.30};
  return w;
}

// A front end configured as the decoder's (the model's feat.params, then
// PocketSphinxOptions::decoder_arguments) with the given warp. Freed with
// fe_free.
struct FrontEndDeleter {
  void operator()(fe_s* fe) const;
};
using FrontEnd = std::unique_ptr<fe_s, FrontEndDeleter>;
FrontEnd make_front_end(const PocketSphinxOptions& options, double warp);

// MFCC frames of 16 kHz mono audio, `width` coefficients per frame.
struct Cepstra {
  int width = 0;
  std::vector<float> data;  // frame after frame
  size_t frames() const { return width ? data.size() / size_t(width) : 0; }
  const float* frame(size_t t) const { return data.data() + t * size_t(width); }
};
Cepstra cepstra(fe_s* fe, const int16_t* pcm, size_t count);

class WarpChooser {
 public:
  // Loads the static stream of the model's means and variances. Throws
  // std::runtime_error when they cannot be read.
  explicit WarpChooser(PocketSphinxOptions options);
  // The mean log-likelihood per frame of the louder half of `speech`'s frames
  // at `warp` (NaN when there are none).
  double score(const int16_t* speech, size_t count, double warp) const;
  // The candidate with the best score; 1 for samples under half a second.
  double choose(const std::vector<int16_t>& speech) const;

 private:
  PocketSphinxOptions options_;
  int dims_ = 0;
  std::vector<float> means_, inverse_variances_, log_norms_;  // per Gaussian
};

}  // namespace scribe::speech
