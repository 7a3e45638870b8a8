#include "speech/frequency_warp.h"

#include <pocketsphinx.h>
#include <sphinxbase/ckd_alloc.h>
#include <sphinxbase/cmd_ln.h>
#include <sphinxbase/fe.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace scribe::speech {
namespace {

// One parameter file of a Sphinx model (means, variances): a text header
// ending in "endhdr", a byte-order word, the Gaussian counts and the floats.
// Returns the first stream's vectors only, `dims` floats per Gaussian.
std::vector<float> read_first_stream(const std::string& path, int& dims) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  for (std::string line; std::getline(in, line);)
    if (line.find("endhdr") != std::string::npos) break;
  auto read_int = [&] {
    int32_t v = 0;
    in.read(reinterpret_cast<char*>(&v), sizeof v);
    return v;
  };
  if (read_int() != 0x11223344) throw std::runtime_error(path + ": unexpected byte order");
  const int32_t codebooks = read_int(), streams = read_int(), density = read_int();
  if (codebooks <= 0 || streams <= 0 || density <= 0 || codebooks * density > 1'000'000)
    throw std::runtime_error(path + ": unexpected counts");
  std::vector<int32_t> lengths(static_cast<size_t>(streams));
  int32_t per_gaussian_total = 0;
  for (auto& l : lengths) per_gaussian_total += (l = read_int());
  const int32_t total = read_int();
  if (total != codebooks * density * per_gaussian_total) throw std::runtime_error(path + ": unexpected size");
  std::vector<float> all(static_cast<size_t>(total));
  in.read(reinterpret_cast<char*>(all.data()), std::streamsize(all.size() * sizeof(float)));
  if (!in) throw std::runtime_error(path + ": truncated");
  // Layout: codebook, then stream, then Gaussian, then the vector.
  dims = lengths[0];
  std::vector<float> out;
  out.reserve(size_t(codebooks) * size_t(density) * size_t(dims));
  for (int32_t c = 0; c < codebooks; ++c) {
    const size_t base = size_t(c) * size_t(density) * size_t(per_gaussian_total);
    out.insert(out.end(), all.begin() + long(base), all.begin() + long(base + size_t(density) * size_t(dims)));
  }
  return out;
}

// A small prior for no warp: a factor must beat 1 by this much per unit of
// |ln warp| in mean log-likelihood per frame. On the tuning set's short real
// clips (cards and goforward, a few seconds each) the unpenalized choice sent
// three of six to the lowest factor on differences of 0.01-0.06, and one of
// them lost "four of clubs", which every factor from 0.94 up got right; 0.2
// moves that clip to 0.94 and costs the Asterisk prompts 3 words in 1,600
// (tuning in bench/asr_benchmark.cpp).
constexpr double kWarpPenalty = 0.2;

}  // namespace

void FrontEndDeleter::operator()(fe_s* fe) const {
  auto lock = sphinx_setup_lock();
  fe_free(fe);
}

FrontEnd make_front_end(const PocketSphinxOptions& options, double warp) {
  // The decoder reads feat.params from the model and then its arguments; the
  // same order here gives the same front end.
  const std::string params = (std::filesystem::path(options.acoustic_model_dir()) / "feat.params").string();
  char warp_text[32];
  std::snprintf(warp_text, sizeof warp_text, "%.4f", warp);
  std::string warp_param = warp_text;
  auto lock = sphinx_setup_lock();
  // sphinxbase keeps the inverse-linear warp in process-wide statics. A front
  // end made without a warp (every decoder's own) marks them neutral, and a
  // later warp given as the same text as the one before is taken as already
  // set: that front end came out unwarped. A trailing space (the parser
  // splits on blanks) makes the text differ from the last one while it says
  // the same; the statics are only touched under this lock.
  static std::string last_warp_param;
  if (warp_param == last_warp_param) warp_param += ' ';
  last_warp_param = warp_param;
  std::vector<std::string> args = options.decoder_arguments();
  args.insert(args.end(), {"-warp_type", "inverse_linear", "-warp_params", warp_param});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cmd_ln_t* config = cmd_ln_parse_file_r(nullptr, ps_args(), params.c_str(), FALSE);
  if (!config) throw std::runtime_error("cannot read " + params);
  cmd_ln_t* merged = cmd_ln_parse_r(config, ps_args(), int32(argv.size()), argv.data(), FALSE);
  if (!merged) {
    cmd_ln_free_r(config);
    throw std::runtime_error("PocketSphinx rejected its front-end arguments");
  }
  fe_t* fe = fe_init_auto_r(merged);
  cmd_ln_free_r(merged);  // the front end keeps its own reference
  if (!fe) throw std::runtime_error("PocketSphinx could not make a front end");
  return FrontEnd(fe);
}

Cepstra cepstra(fe_s* fe, const int16_t* pcm, size_t count) {
  Cepstra out;
  out.width = fe_get_output_size(fe);
  int32 capacity = 0;
  size_t left = count;
  fe_process_frames(fe, nullptr, &left, nullptr, &capacity, nullptr);
  capacity += 2;  // the frames fe_end_utt flushes
  mfcc_t** buf = static_cast<mfcc_t**>(ckd_calloc_2d(size_t(capacity), size_t(out.width), sizeof(mfcc_t)));
  // A new stream: fe_start_utt alone keeps the noise estimate of whatever
  // this front end processed last, and the same audio would come out
  // differently after other audio.
  fe_start_stream(fe);
  fe_start_utt(fe);
  const int16* in = pcm;
  left = count;
  int32 frames = capacity;
  fe_process_frames(fe, &in, &left, buf, &frames, nullptr);
  int32 tail = 0;
  if (frames < capacity) fe_end_utt(fe, buf[frames], &tail);
  out.data.resize(size_t(frames + tail) * size_t(out.width));
  for (size_t t = 0; t < size_t(frames + tail); ++t)
    for (int k = 0; k < out.width; ++k) out.data[t * size_t(out.width) + size_t(k)] = MFCC2FLOAT(buf[t][k]);
  ckd_free_2d(buf);
  return out;
}

WarpChooser::WarpChooser(PocketSphinxOptions options) : options_(std::move(options)) {
  const std::filesystem::path dir = options_.acoustic_model_dir();
  int var_dims = 0;
  means_ = read_first_stream((dir / "means").string(), dims_);
  std::vector<float> variances = read_first_stream((dir / "variances").string(), var_dims);
  if (var_dims != dims_ || variances.size() != means_.size() || dims_ <= 0)
    throw std::runtime_error("PocketSphinx model: means and variances disagree");
  const size_t gaussians = means_.size() / size_t(dims_);
  inverse_variances_.resize(means_.size());
  log_norms_.resize(gaussians);
  for (size_t g = 0; g < gaussians; ++g) {
    double log_det = 0;
    for (int k = 0; k < dims_; ++k) {
      // The decoder floors variances at 1e-4 (its -varfloor) too.
      const float v = std::max(variances[g * size_t(dims_) + size_t(k)], 1e-4f);
      inverse_variances_[g * size_t(dims_) + size_t(k)] = 1.0f / v;
      log_det += std::log(2 * M_PI * v);
    }
    log_norms_[g] = float(-0.5 * log_det);
  }
}

double WarpChooser::score(const int16_t* speech, size_t count, double warp) const {
  FrontEnd fe = make_front_end(options_, warp);
  const Cepstra frames = cepstra(fe.get(), speech, count);
  if (frames.frames() == 0 || frames.width < dims_) return std::numeric_limits<double>::quiet_NaN();
  // Cepstral mean normalization over the sample, as the decoder's batch CMN.
  std::vector<double> mean(size_t(dims_), 0.0);
  for (size_t t = 0; t < frames.frames(); ++t)
    for (int k = 0; k < dims_; ++k) mean[size_t(k)] += frames.frame(t)[k];
  for (auto& m : mean) m /= double(frames.frames());
  const size_t gaussians = log_norms_.size();
  std::vector<float> x(static_cast<size_t>(dims_)), ll(gaussians);
  double total = 0;
  size_t used = 0;
  for (size_t t = 0; t < frames.frames(); ++t) {
    const float* f = frames.frame(t);
    if (f[0] < mean[0]) continue;  // the quieter half: pauses and noise
    for (int k = 0; k < dims_; ++k) x[size_t(k)] = float(f[k] - mean[size_t(k)]);
    float best = -std::numeric_limits<float>::infinity();
    for (size_t g = 0; g < gaussians; ++g) {
      const float* mu = &means_[g * size_t(dims_)];
      const float* iv = &inverse_variances_[g * size_t(dims_)];
      float d = 0;
      for (int k = 0; k < dims_; ++k) {
        const float e = x[size_t(k)] - mu[k];
        d += e * e * iv[k];
      }
      ll[g] = log_norms_[g] - 0.5f * d;
      best = std::max(best, ll[g]);
    }
    double sum = 0;
    for (float v : ll) sum += std::exp(double(v - best));
    total += double(best) + std::log(sum);
    ++used;
  }
  return used ? total / double(used) : std::numeric_limits<double>::quiet_NaN();
}

double WarpChooser::choose(const std::vector<int16_t>& speech) const {
  if (speech.size() < size_t(kSampleRate / 2)) return 1.0;
  double best_warp = 1.0, best = -std::numeric_limits<double>::infinity();
  for (double w : warp_candidates()) {
    const double s = score(speech.data(), speech.size(), w) - kWarpPenalty * std::fabs(std::log(w));
    if (std::isfinite(s) && s > best) {
      best = s;
      best_warp = w;
    }
  }
  return best_warp;
}

}  // namespace scribe::speech
