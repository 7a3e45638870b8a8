#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "speech/speech_types.h"

// Live voice activity endpointing: decides, 10 ms frame by frame as audio
// arrives and without look-ahead, where a turn of speech starts and where it
// has ended. The offline detector (vad.h) scores each frame on the second
// around it and smooths over the whole recording in finish(), so it cannot
// say "speech started" until half a second later and never says "ended"
// before the stream does; a live turn must end a fixed silence after its last
// word. So this is a frame-energy decision over an adaptive noise floor, with
// a short onset vote and a silence window (the hangover). Pure: no I/O.
namespace scribe::speech {

struct EndpointerOptions {
  // Frames whose energy is this far over the noise floor are speech.
  double speech_over_floor_db = 12.0;
  // And never below this (dB of the int16 signal, mean square): digital
  // silence or dither is not speech however low the floor.
  double min_speech_db = 30.0;
  // A turn starts when this many of the last onset_window_ms hold speech
  // frames (a click or a knock is shorter).
  int onset_window_ms = 100;
  int onset_speech_ms = 60;
  // A turn ends after this much continuous non-speech.
  int end_of_turn_silence_ms = 600;
  // The floor follows the quietest level: it drops at once and rises by
  // this much per frame (5 dB a second), so a louder background becomes the
  // floor within seconds while speech, which dips between syllables, does not.
  double floor_rise_db_per_frame = 0.05;
  // Before the first frame the floor is at most this (a stream that starts
  // with speech is not its own floor).
  double initial_floor_db = 40.0;
};

// What one frame changed.
enum class EndpointEvent { None, TurnStarted, TurnEnded };

class Endpointer {
 public:
  explicit Endpointer(EndpointerOptions options = {});
  // Decides on one 10 ms frame (kFrameSamples samples).
  EndpointEvent frame(const int16_t* samples);
  // Ends the current turn now (force endpoint): the next turn needs a new onset.
  void end_turn();
  bool in_turn() const { return in_turn_; }
  // Whether the last frame given to frame() was a speech frame.
  bool last_frame_speech() const { return last_frame_speech_; }
  // The frame index (from 0) at which the current or last turn started: the
  // first speech frame of its onset vote.
  int64_t turn_start_frame() const { return turn_start_frame_; }
  // The frame index after the current turn's last speech frame.
  int64_t last_speech_end_frame() const { return last_speech_frame_ + 1; }
  int64_t frames() const { return frames_; }
  void set_end_of_turn_silence_ms(int ms) { options_.end_of_turn_silence_ms = ms; }
  double noise_floor_db() const { return floor_db_; }

 private:
  EndpointerOptions options_;
  double floor_db_ = 0;
  int64_t frames_ = 0;
  bool in_turn_ = false;
  bool last_frame_speech_ = false;
  int64_t turn_start_frame_ = 0;
  int64_t last_speech_frame_ = -1;
  std::vector<uint8_t> recent_;  // speech flags of the last onset window, a ring
};

// Log energy of one frame as the offline detector measures it (dB of the
// int16 signal's mean square, after removing its mean).
double frame_energy_db(const int16_t* samples, size_t count);

}  // namespace scribe::speech
