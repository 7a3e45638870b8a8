#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

// The transcript a finished attempt produces: stored whole as one object
// (`transcripts/<id>/attempt-<n>-<digest>.json`), referenced with its SHA-256 by the
// TranscriptionCompleted event, and loaded by the segments projection into
// the segments and words tables.
namespace scribe::transcript {

struct ArtifactWord {
  std::string text;
  double start = 0;
  double end = 0;
  double confidence = 0;
  std::optional<std::string> punctuation;
};

struct ArtifactSegment {
  int64_t id = 0;  // drawn from the segment_ids sequence by the worker
  double start = 0;
  double end = 0;
  std::optional<std::string> speaker;  // "SPEAKER_00", or null when unattributed
  std::string text;
  std::vector<ArtifactWord> words;
};

// A word the recognizer almost heard over [start, end) seconds, with its
// posterior (speech/confusion_network.h). Keyed by time, not by segment, so
// that revisions of the text do not orphan it; never shown as text.
struct ArtifactAlternate {
  std::string word;
  double start = 0;
  double end = 0;
  double posterior = 0;
};

struct TranscriptArtifact {
  double duration_seconds = 0;
  std::string language;
  std::string engine;
  int speakers = 0;
  std::vector<ArtifactSegment> segments;
  std::vector<ArtifactAlternate> alternates;  // in time order; absent in artifacts made before them
};

Json to_json(const TranscriptArtifact& a);
TranscriptArtifact artifact_from_json(const Json& j);

// Content-addressed (the digest's first 16 hex digits are in the name): a
// worker that lost its lease and finishes late writes a second object rather
// than replacing the one the completion event vouches for.
std::string artifact_key(int64_t transcription_id, int attempt, const std::string& sha256_hex);
// The folder of every stored object of a transcription (deleted with it).
std::string transcription_prefix(int64_t transcription_id);
std::string speaker_label(int index);  // 0 -> "SPEAKER_00"

}  // namespace scribe::transcript
