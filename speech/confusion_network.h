#pragma once
#include <string>
#include <vector>

#include "speech/speech_types.h"

// What the recognizer almost heard, from its word lattice: every arc of the
// lattice is a word hypothesis over a stretch of time with a posterior
// probability (the forward-backward mass of the paths through it). Arcs of
// the same word over the same stretch are one hypothesis with a path for
// each of its neighbours, so they are merged (their posteriors summed), the
// way a confusion network (Mangu et al. 2000) pools a lattice into slots. The
// 1-best words are taken out, and what is left, above a floor, are the
// alternates: keyed by time, never by segment, so that a later edit of the
// transcript's text does not orphan them. Pure; speech/pocketsphinx_engine.cpp
// reads the lattice.
namespace scribe::speech {

struct LatticeArc {
  std::string word;  // display form (speech/pocketsphinx_engine.h display_word); empty for fillers
  double start = 0;
  double end = 0;
  double posterior = 0;
};

struct AlternateOptions {
  // Hypotheses less probable than this are noise: a lattice holds hundreds
  // per second of speech, most with posteriors under 1%.
  double min_posterior = 0.05;
  // Per stretch of one 1-best word, the most probable competitors kept.
  int max_per_slot = 4;
  // Two arcs of a word are the same hypothesis when they overlap by at least
  // this share of the shorter one.
  double same_overlap = 0.5;
};

// Arcs -> alternates, in time order. `best` are the 1-best words of the same
// audio: an arc of a 1-best word's text overlapping it is that word, not a
// competitor.
std::vector<Alternate> competing_words(const std::vector<LatticeArc>& arcs, const std::vector<RecognizedWord>& best,
                                       const AlternateOptions& options = {});

}  // namespace scribe::speech
