#pragma once
#include <cstdint>
#include <vector>

#include "speech/speech_types.h"

// Voice activity detection: which 10 ms frames hold speech (as opposed to
// silence, noise or music), and how to cut speech into pieces the recognizer
// decodes whole. Streaming: feed() takes decoded audio in any chunk sizes and
// keeps only per-frame features, so memory is a few bytes per frame.
namespace scribe::speech {

struct VadOptions {
  double min_speech_seconds = 0.25;   // shorter bursts are not speech
  double hangover_seconds = 0.30;     // speech keeps going this long after the last voiced frame
  double min_silence_seconds = 0.30;  // shorter gaps are bridged
};

class VoiceActivityDetector {
 public:
  explicit VoiceActivityDetector(VadOptions options = {});
  void feed(const int16_t* samples, size_t count);
  // Ends the stream; returns one flag per 10 ms frame (1 = speech).
  std::vector<uint8_t> finish();
  // Log energy (dB of the int16 signal) per 10 ms frame, for cut_pieces();
  // valid after finish().
  std::vector<float> frame_energy() const;

 private:
  // Holds the signal processing (defined in vad.cpp) so this header stays free
  // of it.
  struct Impl;
  VadOptions options_;
  std::vector<int16_t> carry_;     // samples of an incomplete frame
  std::vector<int16_t> previous_;  // the last complete frame: analysis windows span two frames
  std::vector<float> prev_bands_;  // the last frame's band energies, for spectral change
  std::vector<float> recent_;      // per-frame raw features of the frames around the next frame to score
  int64_t recent_first_ = 0;       // frame index of recent_'s first entry
  int64_t frames_seen_ = 0;        // frames analysed
  std::vector<float> features_;    // per scored frame: log energy, context score
  int features_per_frame_ = 0;
};

struct PieceOptions {
  double max_piece_seconds = 20.0;  // longer speech is cut at its deepest pause
  double min_piece_seconds = 0.3;
  double pad_seconds = 0.15;  // context kept on each side of a piece
  // A run of speech starts up to this much earlier where the frames before it
  // are still well above the noise floor (soft onsets; needs frame energy).
  double onset_seconds = 0.4;
};

// Turns per-frame speech flags into pieces (in samples) for `total_samples`
// of audio: consecutive speech, padded, and cut at the quietest point when
// longer than max_piece_seconds. `energy` (one value per frame, optional,
// same length as flags) guides where long speech is cut.
std::vector<SpeechPiece> cut_pieces(const std::vector<uint8_t>& speech_frames, int64_t total_samples,
                                    const std::vector<float>& frame_energy = {}, PieceOptions options = {});

}  // namespace scribe::speech
