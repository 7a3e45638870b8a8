#pragma once
#include <string>
#include <utility>
#include <vector>

// Named settings of the embedded recognizer, traded between speed and
// accuracy on the tuning sets (bench/README.md, "Speech profiles"). An
// operator picks one with SCRIBE_SPEECH_PROFILE; SCRIBE_POCKETSPHINX_ARGS
// and SCRIBE_POCKETSPHINX_VTLN still override single settings on top.
namespace scribe::speech {

struct SpeechProfile {
  std::string name;
  std::string description;  // one line, shown in GET /api/v1/pipelines
  // Decoder arguments as (name, value) pairs, besides the model files.
  std::vector<std::pair<std::string, std::string>> decoder_args;
  bool vtln = true;  // choose a frequency warp per recording
};

inline constexpr const char* kDefaultSpeechProfile = "balanced";

const std::vector<SpeechProfile>& speech_profiles();
// nullptr for an unknown name.
const SpeechProfile* find_speech_profile(const std::string& name);
// "accuracy, balanced, live": for messages naming what is allowed.
std::string speech_profile_names();

}  // namespace scribe::speech
