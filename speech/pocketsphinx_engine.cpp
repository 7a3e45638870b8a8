#include "speech/pocketsphinx_engine.h"

#include <pocketsphinx.h>
#include <spdlog/spdlog.h>
#include <sphinxbase/err.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <map>
#include <stdexcept>
#include <thread>

#include "speech/confusion_network.h"
#include "speech/frequency_warp.h"
#include "speech/speech_profile.h"

namespace scribe::speech {
namespace {

// PocketSphinx works in 10 ms frames.
constexpr double kSphinxFrameSeconds = 0.01;

class PocketSphinxEngine final : public AsrEngine {
 public:
  explicit PocketSphinxEngine(const PocketSphinxOptions& o) : options_(o) {
    auto d = make_sphinx_decoder(o);
    config_ = d.config;
    decoder_ = d.decoder;
  }
  ~PocketSphinxEngine() override {
    front_ends_.clear();
    SphinxDecoder d{config_, decoder_};
    free_sphinx_decoder(d);
  }
  PocketSphinxEngine(const PocketSphinxEngine&) = delete;
  PocketSphinxEngine& operator=(const PocketSphinxEngine&) = delete;

  Recognition recognize(const int16_t* pcm, size_t count, const std::string&, const VoiceAdaptation& voice) override {
    Recognition out;
    out.language = "en";
    if (count == 0) return out;
    // Every piece starts a new stream: the front end's noise estimate (and its
    // frame count) otherwise carry over from whatever this decoder heard last,
    // a piece of another recording included, and the same piece came out with
    // different words depending on that history.
    if (ps_start_stream(decoder_) < 0) throw std::runtime_error("PocketSphinx could not start a stream");
    if (ps_start_utt(decoder_) < 0) throw std::runtime_error("PocketSphinx could not start an utterance");
    // full_utt: the piece is decoded as one utterance (batch CMN over it).
    // A warped voice goes through a front end of its own with the same
    // settings and the warp, and the decoder takes its cepstra.
    int processed = 0;
    if (voice.frequency_warp == 1.0) {
      processed = ps_process_raw(decoder_, pcm, count, FALSE, TRUE);
    } else {
      auto& fe = front_ends_[voice.frequency_warp];
      if (!fe) fe = make_front_end(options_, voice.frequency_warp);
      Cepstra cep = cepstra(fe.get(), pcm, count);
      std::vector<mfcc_t*> rows(cep.frames());
      for (size_t t = 0; t < rows.size(); ++t) rows[t] = cep.data.data() + t * size_t(cep.width);
      processed = rows.empty() ? 0 : ps_process_cep(decoder_, rows.data(), int(rows.size()), FALSE, TRUE);
    }
    if (processed < 0) {
      ps_end_utt(decoder_);
      throw std::runtime_error("PocketSphinx failed to process audio");
    }
    if (ps_end_utt(decoder_) < 0) throw std::runtime_error("PocketSphinx could not end the utterance");
    logmath_t* lmath = ps_get_logmath(decoder_);
    for (ps_seg_t* seg = ps_seg_iter(decoder_); seg; seg = ps_seg_next(seg)) {
      std::string word = display_word(ps_seg_word(seg));
      if (word.empty()) continue;
      int sf = 0, ef = 0;
      ps_seg_frames(seg, &sf, &ef);
      int32 ascr = 0, lscr = 0, lback = 0;
      int32 post = ps_seg_prob(seg, &ascr, &lscr, &lback);
      double conf = std::clamp(logmath_exp(lmath, post), 0.0, 1.0);
      if (!std::isfinite(conf)) conf = 0;
      out.words.push_back({std::move(word), sf * kSphinxFrameSeconds, (ef + 1) * kSphinxFrameSeconds, conf});
    }
    if (options_.alternates) out.alternates = competing_words(lattice_arcs(lmath), out.words);
    return out;
  }

 private:
  // Every arc of the utterance's lattice with its posterior. The lattice and
  // its posteriors were made for the best path and ps_seg_prob above (the
  // profiles keep -bestpath on), so reading them costs a walk over the arcs.
  std::vector<LatticeArc> lattice_arcs(logmath_t* lmath) {
    std::vector<LatticeArc> arcs;
    ps_lattice_t* dag = ps_get_lattice(decoder_);
    if (!dag) return arcs;
    for (ps_latnode_iter_t* it = ps_latnode_iter(dag); it; it = ps_latnode_iter_next(it)) {
      ps_latnode_t* node = ps_latnode_iter_node(it);
      int16 first_end = 0, last_end = 0;
      const int start = ps_latnode_times(node, &first_end, &last_end);
      const char* base = ps_latnode_baseword(dag, node);
      std::string word = base ? display_word(base) : "";
      if (word.empty()) continue;
      for (ps_latlink_iter_t* li = ps_latnode_exits(node); li; li = ps_latlink_iter_next(li)) {
        ps_latlink_t* link = ps_latlink_iter_link(li);
        int16 unused = 0;
        const int end = ps_latlink_times(link, &unused);
        int32 ascr = 0;
        const double p = logmath_exp(lmath, ps_latlink_prob(dag, link, &ascr));
        if (!std::isfinite(p) || p <= 0) continue;
        arcs.push_back({word, start * kSphinxFrameSeconds, (end + 1) * kSphinxFrameSeconds, std::min(1.0, p)});
      }
    }
    return arcs;
  }

  PocketSphinxOptions options_;
  cmd_ln_t* config_ = nullptr;
  ps_decoder_t* decoder_ = nullptr;
  std::map<double, FrontEnd> front_ends_;  // by warp, made when first needed
};

}  // namespace

PocketSphinxOptions PocketSphinxOptions::for_profile(const std::string& name) {
  const SpeechProfile* p = find_speech_profile(name);
  if (!p)
    throw std::invalid_argument("SCRIBE_SPEECH_PROFILE '" + name + "' is not a speech profile; use one of " +
                                speech_profile_names());
  PocketSphinxOptions o;
  o.profile = p->name;
  o.vtln = p->vtln;
  return o;
}

std::string PocketSphinxOptions::acoustic_model_dir() const {
  return (std::filesystem::path(model_dir) / "en-us").string();
}

std::string PocketSphinxOptions::language_model_path() const {
  if (!language_model.empty()) return language_model;
  return (std::filesystem::path(model_dir) / "en-us.lm.bin").string();
}

std::vector<std::string> PocketSphinxOptions::decoder_arguments() const {
  // The profile's settings (speech_profile.cpp says why each), then the
  // operator's arguments (SCRIBE_POCKETSPHINX_ARGS), which replace a
  // profile setting of the same name.
  const SpeechProfile* p = find_speech_profile(profile);
  if (!p) throw std::invalid_argument("unknown speech profile " + profile);
  std::vector<std::string> args;
  for (const auto& [name, value] : p->decoder_args)
    if (std::find(extra_args.begin(), extra_args.end(), name) == extra_args.end())
      args.insert(args.end(), {name, value});
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  return args;
}

SphinxDecoder make_sphinx_decoder(const PocketSphinxOptions& o) {
  namespace fs = std::filesystem;
  const fs::path dir = o.model_dir;
  const std::string hmm = o.acoustic_model_dir();
  const std::string lm = o.language_model_path();
  const std::string dict = (dir / "cmudict-en-us.dict").string();
  if (!fs::exists(hmm) || !fs::exists(dict))
    throw std::runtime_error("PocketSphinx model not found under " + o.model_dir +
                             " (Debian package pocketsphinx-en-us)");
  if (!fs::exists(lm)) throw std::runtime_error("PocketSphinx language model not found: " + lm);
  std::vector<std::string> args = {"-hmm", hmm, "-lm", lm, "-dict", dict};
  const auto decoder = o.decoder_arguments();
  args.insert(args.end(), decoder.begin(), decoder.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  // sphinxbase keeps its log stream in one global. "-logfn /dev/null" made
  // every ps_init open a new stream and fclose the one before it, which
  // other threads' decoders were still writing to: the first job's two
  // decoding threads, each making its decoder, corrupted the heap now and
  // then (a segfault at thread exit in tcache_thread_shutdown). Logging is
  // switched off once instead (sphinx_setup_lock).
  auto lock = sphinx_setup_lock();
  SphinxDecoder d;
  d.config = cmd_ln_parse_r(nullptr, ps_args(), static_cast<int32>(argv.size()), argv.data(), TRUE);
  if (!d.config) throw std::runtime_error("PocketSphinx rejected its arguments");
  d.decoder = ps_init(d.config);
  if (!d.decoder) {
    cmd_ln_free_r(d.config);
    throw std::runtime_error("PocketSphinx failed to load its model from " + o.model_dir);
  }
  return d;
}

void free_sphinx_decoder(SphinxDecoder& d) {
  auto lock = sphinx_setup_lock();
  if (d.decoder) ps_free(d.decoder);
  if (d.config) cmd_ln_free_r(d.config);
  d = SphinxDecoder{};
}

std::unique_lock<std::mutex> sphinx_setup_lock() {
  static std::once_flag quiet;
  std::call_once(quiet, [] { err_set_logfp(nullptr); });
  static std::mutex mu;
  return std::unique_lock(mu);
}

VoiceAdaptation PocketSphinxFactory::adapt(const std::vector<int16_t>& speech) const {
  if (!options_.vtln) return {};
  std::call_once(chooser_once_, [&] {
    try {
      chooser_ = std::make_shared<const WarpChooser>(options_);
    } catch (const std::exception& e) {
      spdlog::warn("vocal tract length normalization is off: {}", e.what());
    }
  });
  if (!chooser_) return {};
  return {chooser_->choose(speech)};
}

PocketSphinxFactory::PocketSphinxFactory(PocketSphinxOptions options) : options_(std::move(options)) {}

std::unique_ptr<AsrEngine> PocketSphinxFactory::make() const { return std::make_unique<PocketSphinxEngine>(options_); }

int PocketSphinxFactory::parallelism() const {
  if (options_.parallelism > 0) return options_.parallelism;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string display_word(const std::string& w) {
  if (w.empty() || w[0] == '<' || w[0] == '[' || w[0] == '+') return "";
  std::string out = w;
  if (auto paren = out.find('('); paren != std::string::npos && out.back() == ')') out.erase(paren);
  return out;
}

}  // namespace scribe::speech
