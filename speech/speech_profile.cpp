#include "speech/speech_profile.h"

namespace scribe::speech {

const std::vector<SpeechProfile>& speech_profiles() {
  // Every profile keeps -remove_silence no: word times are only right with
  // silence removal off (the front end would drop frames and every later
  // time would shift).
  static const std::vector<SpeechProfile> list = {
      // The settings chosen for accuracy alone (bench/asr_benchmark.cpp's
      // header): each frame scores the 16 best Gaussians of each codebook
      // instead of 4, and -maxhmmpf -1 keeps the search's own beam (the cap
      // is checked against the utterance's cumulative count, so it prunes by
      // a coarse histogram on every frame).
      {"accuracy",
       "accuracy first: 16 Gaussians per codebook, no HMM cap, per-recording frequency warp",
       {{"-remove_silence", "no"}, {"-topn", "16"}, {"-maxhmmpf", "-1"}},
       true},
      // The default: the accuracy profile's search with the Gaussians
      // computed on every second frame (-ds 2; the frame between reuses
      // them) and no flat-lexicon second pass. On the tuning set that keeps
      // the flite prose at the same 84 errors and costs the 25-word real
      // cards 3 (+0.5 point over 604 words) for 0.75x the accuracy
      // profile's CPU; PocketSphinx's own defaults (-topn 4) cost more
      // errors for no less CPU (bench/README.md, "Speech profiles").
      {"balanced",
       "the default: 16 Gaussians per codebook on every second frame, one lexicon-tree pass, per-recording frequency "
       "warp",
       {{"-remove_silence", "no"}, {"-topn", "16"}, {"-maxhmmpf", "-1"}, {"-ds", "2"}, {"-fwdflat", "no"}},
       true},
      // Speed first, for live audio: also every second frame's Gaussians
      // computed (-ds 2) and no frequency warp (its choice decodes a sample
      // several times before the first word).
      {"live",
       "speed first, for live audio: one lexicon-tree pass, Gaussians on every second frame, no frequency warp",
       {{"-remove_silence", "no"}, {"-fwdflat", "no"}, {"-ds", "2"}},
       false},
  };
  return list;
}

const SpeechProfile* find_speech_profile(const std::string& name) {
  for (const auto& p : speech_profiles())
    if (p.name == name) return &p;
  return nullptr;
}

std::string speech_profile_names() {
  std::string out;
  for (const auto& p : speech_profiles()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace scribe::speech
