#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "speech/speech_types.h"

// The recognizer seam. A factory describes an engine and makes one instance
// per decoding thread (PocketSphinx decoders are not thread-safe); pieces are
// decoded in parallel on `parallelism()` threads.
namespace scribe::speech {

struct Recognition {
  std::vector<RecognizedWord> words;    // times relative to the piece's first sample
  std::optional<std::string> language;  // what the engine detected, if it says
  // Competing words from the engine's lattice (times relative to the piece's
  // first sample, like words'); engines without a lattice give none.
  std::vector<Alternate> alternates;
};

// What an engine learned about a recording's voice from a sample of its
// speech (AsrEngineFactory::adapt), handed back with each of its pieces.
struct VoiceAdaptation {
  double frequency_warp = 1.0;  // vocal tract length normalization; 1 = none
};

class AsrEngine {
 public:
  virtual ~AsrEngine() = default;
  // Recognizes one piece of 16 kHz mono audio, decoded whole. `language` is
  // the requested code or "auto". Throws std::runtime_error on engine failure.
  virtual Recognition recognize(const int16_t* pcm, size_t count, const std::string& language,
                                const VoiceAdaptation& voice) = 0;
};

class AsrEngineFactory {
 public:
  virtual ~AsrEngineFactory() = default;
  virtual std::unique_ptr<AsrEngine> make() const = 0;
  // How many pieces may be decoded at once.
  virtual int parallelism() const = 0;
  // Language codes the engine recognizes ("en" for PocketSphinx's en-us model).
  virtual std::vector<std::string> languages() const = 0;
  // Studies a sample of one recording's speech before its pieces are
  // decoded; engines that do not adapt return the identity. Thread-safe.
  virtual VoiceAdaptation adapt(const std::vector<int16_t>& /*speech*/) const { return {}; }
};

}  // namespace scribe::speech
