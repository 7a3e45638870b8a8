#include "speech/endpointer.h"

#include <algorithm>
#include <cmath>

namespace scribe::speech {

double frame_energy_db(const int16_t* samples, size_t count) {
  if (count == 0) return 0;
  double mean = 0;
  for (size_t i = 0; i < count; ++i) mean += samples[i];
  mean /= double(count);
  double energy = 0;
  for (size_t i = 0; i < count; ++i) energy += (samples[i] - mean) * (samples[i] - mean);
  return 10 * std::log10(energy / double(count) + 1.0);
}

Endpointer::Endpointer(EndpointerOptions options)
    : options_(options),
      floor_db_(options.initial_floor_db),
      recent_(size_t(std::max(1, options.onset_window_ms / 10)), 0) {}

EndpointEvent Endpointer::frame(const int16_t* samples) {
  const double e = frame_energy_db(samples, kFrameSamples);
  const int64_t index = frames_++;
  // The decision is taken against the floor before this frame moves it.
  const bool speech = e > floor_db_ + options_.speech_over_floor_db && e > options_.min_speech_db;
  floor_db_ = std::min(e, floor_db_ + options_.floor_rise_db_per_frame);
  recent_[size_t(index) % recent_.size()] = speech;
  last_frame_speech_ = speech;

  if (in_turn_) {
    if (speech) last_speech_frame_ = index;
    const int64_t silence_frames = std::max(1, options_.end_of_turn_silence_ms / 10);
    if (index - last_speech_frame_ >= silence_frames) {
      end_turn();
      return EndpointEvent::TurnEnded;
    }
    return EndpointEvent::None;
  }
  if (!speech) return EndpointEvent::None;
  const int votes = int(std::count(recent_.begin(), recent_.end(), uint8_t(1)));
  if (votes * 10 < options_.onset_speech_ms) return EndpointEvent::None;
  // The turn starts at the oldest speech frame of the vote.
  const int64_t window = int64_t(recent_.size());
  int64_t first = index;
  for (int64_t k = std::max<int64_t>(0, index - window + 1); k <= index; ++k)
    if (recent_[size_t(k) % recent_.size()]) {
      first = k;
      break;
    }
  in_turn_ = true;
  turn_start_frame_ = first;
  last_speech_frame_ = index;
  return EndpointEvent::TurnStarted;
}

void Endpointer::end_turn() {
  in_turn_ = false;
  std::fill(recent_.begin(), recent_.end(), uint8_t(0));
}

}  // namespace scribe::speech
