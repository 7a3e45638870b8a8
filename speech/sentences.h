#pragma once
#include <optional>
#include <string>
#include <vector>

#include "speech/speech_types.h"

// From recognized words to sentences that read as sentences: boundaries from
// pauses, length and speaker changes; casing and punctuation restored (the
// recognizer emits lower-case words without punctuation). Pure functions.
namespace scribe::speech {

struct AttributedWord {
  RecognizedWord word;
  std::optional<int> speaker;
};

struct SentenceWord {
  std::string text;  // cased, without trailing punctuation
  double start = 0;
  double end = 0;
  double confidence = 0;
  std::optional<std::string> punctuation;  // ".", ",", "?" after the word, or nullopt
};

struct Sentence {
  double start = 0;
  double end = 0;
  std::optional<int> speaker;
  std::vector<SentenceWord> words;
  std::string text;  // words joined with their punctuation, e.g. "Well, I think so."
};

struct SentenceOptions {
  double sentence_pause_seconds = 0.55;  // a pause this long may end a sentence
  double hard_pause_seconds = 1.2;       // a pause this long always ends one
  double comma_pause_seconds = 0.25;     // a shorter pause inside a sentence may take a comma
  int min_words = 3;                     // no sentence break at a soft pause before this many
  int max_words = 30;                    // longer runs are split at their longest pause
  double max_seconds = 15.0;
};

// Words must be in time order. A speaker change always ends a sentence.
std::vector<Sentence> build_sentences(const std::vector<AttributedWord>& words, const SentenceOptions& options = {});

}  // namespace scribe::speech
