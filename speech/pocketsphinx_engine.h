#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "speech/asr_engine.h"

// sphinxbase's and PocketSphinx's handles (cmd_ln_t, ps_decoder_t), declared
// here so this header does not pull in their C headers.
struct cmd_ln_s;
struct ps_decoder_s;

// PocketSphinx, the embedded default recognizer (Debian's pocketsphinx-en-us
// model: US English only). One decoder per decoding thread.
namespace scribe::speech {

class WarpChooser;  // frequency_warp.h

struct PocketSphinxOptions {
  std::string model_dir = "/usr/share/pocketsphinx/model/en-us";  // SCRIBE_POCKETSPHINX_MODEL_DIR
  int parallelism = 0;                                            // SCRIBE_ASR_THREADS; 0 = one per core
  // The language model (SCRIBE_POCKETSPHINX_LM); empty = model_dir/en-us.lm.bin.
  std::string language_model;
  // Extra decoder arguments as "-name value" pairs (SCRIBE_POCKETSPHINX_ARGS,
  // space separated), for operators and the tuning benchmark.
  std::vector<std::string> extra_args;
  // The speed/accuracy profile (speech_profile.h; SCRIBE_SPEECH_PROFILE).
  std::string profile = "balanced";
  // Vocal tract length normalization per recording (frequency_warp.h): the
  // profile's choice unless SCRIBE_POCKETSPHINX_VTLN says (0 off, 1 on).
  bool vtln = true;
  // The words the recognizer almost heard, from the lattice of each piece
  // (speech/confusion_network.h). Off only to measure what they cost
  // (bench/asr_benchmark.cpp).
  bool alternates = true;

  // The options of a named profile (its VTLN choice included); throws
  // std::invalid_argument for an unknown name.
  static PocketSphinxOptions for_profile(const std::string& name);
  // The acoustic model's folder (model_dir/en-us).
  std::string acoustic_model_dir() const;
  // The language model file the decoder loads.
  std::string language_model_path() const;
  // The decoder's arguments besides the model files: the profile's,
  // replaced where extra_args names the same argument, then extra_args. The
  // decoder and the warped front ends (frequency_warp.h) are made from these.
  std::vector<std::string> decoder_arguments() const;
};

class PocketSphinxFactory final : public AsrEngineFactory {
 public:
  explicit PocketSphinxFactory(PocketSphinxOptions options);
  std::unique_ptr<AsrEngine> make() const override;
  int parallelism() const override;
  std::vector<std::string> languages() const override { return {"en"}; }
  const PocketSphinxOptions& options() const { return options_; }
  // The frequency warp that fits `speech` best (1 with vtln off, for samples
  // too short to judge, or when the model's Gaussians cannot be read).
  VoiceAdaptation adapt(const std::vector<int16_t>& speech) const override;

 private:
  PocketSphinxOptions options_;
  mutable std::once_flag chooser_once_;
  mutable std::shared_ptr<const WarpChooser> chooser_;
};

// A decoder and its configuration, made from `options`' model files and
// decoder arguments (the offline engine's and the streaming recognizer's
// one way to load the model). Throws std::runtime_error naming what is
// missing or refused. Freed by free_sphinx_decoder; both take the setup lock.
struct SphinxDecoder {
  ::cmd_ln_s* config = nullptr;
  ::ps_decoder_s* decoder = nullptr;
};
SphinxDecoder make_sphinx_decoder(const PocketSphinxOptions& options);
void free_sphinx_decoder(SphinxDecoder& d);

// sphinxbase keeps global state (its one log stream), and making or freeing
// its objects is not documented as thread-safe: they are made and freed
// under this lock, which also switches sphinxbase's logging off first.
std::unique_lock<std::mutex> sphinx_setup_lock();

// The recognizer's word spellings to display words: "(2)" pronunciation
// variants stripped; fillers and silences (<s>, <sil>, [NOISE], ++UM++) give
// an empty string, meaning "not a word".
std::string display_word(const std::string& recognizer_word);

}  // namespace scribe::speech
