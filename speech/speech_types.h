#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "media/audio_decoder.h"

// Types shared by the stages of the speech pipeline: decoded audio is 16 kHz
// mono signed 16-bit PCM everywhere after the decoder, and times are seconds
// from the start of the recording.
namespace scribe::speech {

using media::kSampleRate;
// Voice activity and diarization work on 10 ms frames (160 samples).
inline constexpr int kFrameSamples = 160;
inline constexpr double kFrameSeconds = 0.01;

// A stretch of speech the recognizer decodes whole, in samples [start, end).
struct SpeechPiece {
  int64_t start_sample = 0;
  int64_t end_sample = 0;
  double start_seconds() const { return double(start_sample) / kSampleRate; }
  double end_seconds() const { return double(end_sample) / kSampleRate; }
};

// One word from a recognizer: lower-case text without punctuation (the
// PocketSphinx convention; other engines may send cased, punctuated text),
// absolute times, and a confidence in [0, 1].
struct RecognizedWord {
  std::string text;
  double start = 0;
  double end = 0;
  double confidence = 0;
};

// A word the recognizer almost heard: a competitor of the 1-best words over
// [start, end), with its posterior probability in the lattice (0..1). Never
// shown as transcript text; ask and the heard search read them.
struct Alternate {
  std::string word;
  double start = 0;
  double end = 0;
  double posterior = 0;
};

// Random access to the decoded recording (the pipeline keeps it in a
// temporary file so memory does not grow with the recording's length).
class PcmSource {
 public:
  virtual ~PcmSource() = default;
  virtual int64_t total_samples() const = 0;
  // Reads samples [start, start + count) clipped to the recording.
  virtual std::vector<int16_t> read(int64_t start, int64_t count) const = 0;
};

// A speaker label per stretch of time; speaker is the recording-local index
// (0 = first voice heard) or nullopt when the stretch could not be attributed.
struct SpeakerSpan {
  double start = 0;
  double end = 0;
  std::optional<int> speaker;
};

}  // namespace scribe::speech
