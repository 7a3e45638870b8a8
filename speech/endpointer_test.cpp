#include "speech/endpointer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace scribe::speech {
namespace {

// Synthetic signals: a noise floor (uniform noise of the given amplitude) and
// "speech" bursts (a 200 Hz tone with harmonics) added where asked.
struct Signal {
  std::vector<int16_t> pcm;
  std::mt19937 rng{7};
  void noise(int ms, int amplitude) {
    std::uniform_int_distribution<int> d(-amplitude, amplitude);
    for (int i = 0; i < ms * 16; ++i) pcm.push_back(int16_t(d(rng)));
  }
  void tone(int ms, double level, int noise_amplitude) {
    std::uniform_int_distribution<int> d(-noise_amplitude, noise_amplitude);
    for (int i = 0; i < ms * 16; ++i) {
      const double t = double(pcm.size()) / 16000;
      pcm.push_back(int16_t(level * (std::sin(2 * M_PI * 200 * t) + 0.5 * std::sin(2 * M_PI * 600 * t)) + d(rng)));
    }
  }
};

struct Seen {
  std::vector<int64_t> starts, ends;  // frame indices of the events
  std::vector<int64_t> start_frames;  // turn_start_frame() at each start
};

Seen run(const std::vector<int16_t>& pcm, EndpointerOptions o = {}) {
  Endpointer ep(o);
  Seen s;
  for (size_t i = 0; i + kFrameSamples <= pcm.size(); i += kFrameSamples) {
    const auto e = ep.frame(pcm.data() + i);
    const int64_t f = int64_t(i / kFrameSamples);
    if (e == EndpointEvent::TurnStarted) {
      s.starts.push_back(f);
      s.start_frames.push_back(ep.turn_start_frame());
    }
    if (e == EndpointEvent::TurnEnded) s.ends.push_back(f);
  }
  return s;
}

TEST(Endpointer, NoiseAloneIsNoTurn) {
  Signal s;
  s.noise(5000, 300);
  const Seen seen = run(s.pcm);
  EXPECT_TRUE(seen.starts.empty());
  EXPECT_TRUE(seen.ends.empty());
}

TEST(Endpointer, ABurstIsOneTurnEndedAfterTheSilenceWindow) {
  Signal s;
  s.noise(1000, 100);
  s.tone(1500, 4000, 100);  // frames 100..249
  s.noise(2000, 100);
  const Seen seen = run(s.pcm);
  ASSERT_EQ(seen.starts.size(), 1u);
  ASSERT_EQ(seen.ends.size(), 1u);
  // Decided within the onset vote (60 ms), dated at the burst's first frame.
  EXPECT_GE(seen.starts[0], 100);
  EXPECT_LE(seen.starts[0], 108);
  EXPECT_NEAR(double(seen.start_frames[0]), 100, 1);
  // Ended 600 ms (the default window) after the last speech frame.
  EXPECT_NEAR(double(seen.ends[0]), 250 + 60, 2);
}

TEST(Endpointer, TheSilenceWindowIsConfigurable) {
  Signal s;
  s.noise(500, 100);
  s.tone(1000, 4000, 100);  // frames 50..149
  s.noise(2000, 100);
  EndpointerOptions o;
  o.end_of_turn_silence_ms = 300;
  const Seen seen = run(s.pcm, o);
  ASSERT_EQ(seen.ends.size(), 1u);
  EXPECT_NEAR(double(seen.ends[0]), 150 + 30, 2);
}

TEST(Endpointer, PausesShorterThanTheWindowStayInTheTurn) {
  Signal s;
  s.noise(500, 100);
  s.tone(800, 4000, 100);
  s.noise(400, 100);  // a pause inside the sentence
  s.tone(800, 4000, 100);
  s.noise(900, 100);  // the end of the turn
  s.tone(500, 4000, 100);
  s.noise(1000, 100);
  const Seen seen = run(s.pcm);
  EXPECT_EQ(seen.starts.size(), 2u);
  EXPECT_EQ(seen.ends.size(), 2u);
}

TEST(Endpointer, AClickIsNoTurn) {
  Signal s;
  s.noise(1000, 100);
  s.tone(40, 8000, 100);
  s.noise(1000, 100);
  EXPECT_TRUE(run(s.pcm).starts.empty());
}

TEST(Endpointer, ALouderBackgroundBecomesTheFloor) {
  // The background steps up by 20 dB: a turn may start (it is louder than
  // the floor was), but within seconds the floor follows and the turn ends;
  // speech over the new background is then heard again.
  Signal s;
  s.noise(1000, 100);
  s.noise(8000, 1000);
  s.tone(800, 12000, 1000);
  s.noise(1000, 1000);
  const Seen seen = run(s.pcm);
  ASSERT_FALSE(seen.ends.empty());
  EXPECT_LT(seen.ends[0], 900);
  ASSERT_FALSE(seen.starts.empty());
  EXPECT_NEAR(double(seen.start_frames.back()), 900, 2);
}

TEST(Endpointer, DigitalSilenceAndDitherAreNotSpeech) {
  Signal s;
  s.noise(500, 0);
  s.noise(500, 8);  // dither: far over a floor of zero but below min_speech_db
  s.noise(500, 0);
  EXPECT_TRUE(run(s.pcm).starts.empty());
}

TEST(Endpointer, EndTurnNeedsANewOnset) {
  Signal s;
  s.noise(500, 100);
  s.tone(2000, 4000, 100);
  Endpointer ep;
  int starts = 0;
  for (size_t i = 0; i + kFrameSamples <= s.pcm.size(); i += kFrameSamples) {
    if (ep.frame(s.pcm.data() + i) == EndpointEvent::TurnStarted) ++starts;
    if (i == 100 * kFrameSamples) {
      ASSERT_TRUE(ep.in_turn());
      ep.end_turn();
      EXPECT_FALSE(ep.in_turn());
    }
  }
  // The speech goes on after the forced end: a second turn starts.
  EXPECT_EQ(starts, 2);
}

}  // namespace
}  // namespace scribe::speech
