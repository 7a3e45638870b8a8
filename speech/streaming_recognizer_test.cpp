// The live recognizer on real speech: Debian's pocketsphinx-testdata
// recordings (LibriVox, read English) fed in 100 ms pieces as a microphone
// would send them, between stretches of low noise.
#include "speech/streaming_recognizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <sstream>

#include "media/audio_decoder.h"

namespace scribe::speech {
namespace {

namespace fs = std::filesystem;
using Kind = StreamEvent::Kind;

const std::string kLibrivox = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-";

std::vector<int16_t> load(const std::string& id) {
  std::vector<int16_t> pcm;
  media::decode_audio(kLibrivox + id + ".wav", [&](const int16_t* s, size_t n) { pcm.insert(pcm.end(), s, s + n); });
  return pcm;
}

// A session's audio: recordings with `gap_ms` of low noise before each and
// after the last; `starts` gets each recording's first sample.
struct Session {
  std::vector<int16_t> pcm;
  std::vector<int64_t> starts, ends;
  std::mt19937 rng{11};
  void gap(int ms) {
    std::uniform_int_distribution<int> d(-60, 60);
    for (int i = 0; i < ms * 16; ++i) pcm.push_back(int16_t(d(rng)));
  }
  void say(const std::vector<int16_t>& speech) {
    starts.push_back(int64_t(pcm.size()));
    pcm.insert(pcm.end(), speech.begin(), speech.end());
    ends.push_back(int64_t(pcm.size()));
  }
};

std::vector<StreamEvent> stream(StreamingRecognizer& r, const std::vector<int16_t>& pcm, size_t piece = 1600) {
  std::vector<StreamEvent> out;
  for (size_t i = 0; i < pcm.size(); i += piece) {
    auto e = r.feed(pcm.data() + i, std::min(piece, pcm.size() - i));
    out.insert(out.end(), e.begin(), e.end());
  }
  auto e = r.finish();
  out.insert(out.end(), e.begin(), e.end());
  return out;
}

std::vector<StreamEvent> of_kind(const std::vector<StreamEvent>& events, Kind k) {
  std::vector<StreamEvent> out;
  for (const auto& e : events)
    if (e.kind == k) out.push_back(e);
  return out;
}

std::vector<std::string> texts(const std::vector<StreamWord>& words) {
  std::vector<std::string> out;
  for (const auto& w : words) out.push_back(w.text);
  return out;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Word error rate of `hyp` against `ref` (edit distance over words).
double wer(const std::vector<std::string>& ref, const std::vector<std::string>& hyp) {
  std::vector<size_t> row(hyp.size() + 1);
  for (size_t j = 0; j <= hyp.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= ref.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= hyp.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (ref[i - 1] == hyp[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return ref.empty() ? double(hyp.size()) : double(row[hyp.size()]) / double(ref.size());
}

class StreamingRecognizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(kLibrivox + "0870.wav")) return;
    factory_ = std::make_unique<StreamingRecognizerFactory>(PocketSphinxOptions{});
  }
  static void TearDownTestSuite() { factory_.reset(); }
  void SetUp() override {
    if (!factory_) GTEST_SKIP() << "the pocketsphinx-testdata recordings are needed";
  }
  static std::unique_ptr<StreamingRecognizer> make(StreamingOptions o = {}) { return factory_->make(o); }
  // What the offline recognizer, with the same profile (without the live
  // path's HMM cap), hears in the same recording decoded whole.
  static std::vector<std::string> offline(const std::vector<int16_t>& pcm) {
    PocketSphinxFactory f{PocketSphinxOptions::for_profile(kRealtimeSpeechProfile)};
    std::vector<std::string> out;
    for (const auto& w : f.make()->recognize(pcm.data(), pcm.size(), "en", {}).words) out.push_back(w.text);
    return out;
  }
  static inline std::unique_ptr<StreamingRecognizerFactory> factory_;
};

TEST_F(StreamingRecognizerTest, OneUtteranceGivesPartialsWhileSpokenThenAFinalLikeTheOfflineResult) {
  const auto speech = load("0870");
  Session s;
  s.gap(500);
  s.say(speech);
  s.gap(1500);
  const auto events = stream(*make(), s.pcm);

  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().kind, Kind::SpeechStarted);
  // Onset dated within 300 ms of the recording's start (its first word is
  // a little way in).
  EXPECT_NEAR(double(events.front().time_ms), double(s.starts[0]) / 16, 300);
  const auto finals = of_kind(events, Kind::Final);
  ASSERT_EQ(finals.size(), 1u);
  EXPECT_EQ(finals[0].turn_order, 0);
  EXPECT_EQ(events.back().kind, Kind::Final);

  // Decoded as it arrives: partials at least 3 a second of the recording,
  // the first well before the recording ends, each with words in order.
  const auto partials = of_kind(events, Kind::Partial);
  const double seconds = double(speech.size()) / 16000;
  EXPECT_GE(double(partials.size()), 3 * (seconds - 1)) << partials.size() << " partials for " << seconds << " s";
  ASSERT_FALSE(partials.empty());
  EXPECT_LT(partials.front().time_ms, s.ends[0] / 16 - 3000);
  for (const auto& p : partials) {
    EXPECT_EQ(p.turn_order, 0);
    EXPECT_FALSE(p.words.empty());
    for (const auto& w : p.words) EXPECT_FALSE(w.confidence.has_value());
  }

  // The final resembles the offline result of the same recording.
  const auto heard = texts(finals[0].words);
  const auto reference = offline(speech);
  EXPECT_LE(wer(reference, heard), 0.3) << "stream: " << joined(heard) << "\noffline: " << joined(reference);

  // Word times are absolute, within the recording, in order; confidences
  // are lattice posteriors: within [0, 1] and not all the same.
  double low = 1, high = 0;
  int64_t previous_end = 0;
  for (const auto& w : finals[0].words) {
    EXPECT_GE(w.start_ms, s.starts[0] / 16 - 100) << w.text;
    EXPECT_LE(w.end_ms, s.ends[0] / 16 + 100) << w.text;
    EXPECT_LT(w.start_ms, w.end_ms) << w.text;
    EXPECT_GE(w.start_ms, previous_end) << w.text;
    previous_end = w.end_ms;
    ASSERT_TRUE(w.confidence.has_value());
    EXPECT_GE(*w.confidence, 0.0);
    EXPECT_LE(*w.confidence, 1.0);
    low = std::min(low, *w.confidence);
    high = std::max(high, *w.confidence);
  }
  EXPECT_GT(high - low, 0.2) << "posteriors expected, not a constant";
  // The final came the end-of-turn silence (600 ms) and a little after the
  // last word, on the audio clock.
  EXPECT_LE(finals[0].time_ms - finals[0].words.back().end_ms, 600 + 400);
}

TEST_F(StreamingRecognizerTest, UtterancesSeparatedBySilenceAreTurnsInOrderContinuingTheGivenCount) {
  Session s;
  s.gap(500);
  s.say(load("0880"));
  s.gap(1500);
  s.say(load("0930"));
  s.gap(1500);
  StreamingOptions o;
  o.first_turn_order = 7;
  auto r = make(o);
  const auto events = stream(*r, s.pcm);
  const auto finals = of_kind(events, Kind::Final);
  ASSERT_EQ(finals.size(), 2u);
  EXPECT_EQ(finals[0].turn_order, 7);
  EXPECT_EQ(finals[1].turn_order, 8);
  EXPECT_EQ(r->next_turn_order(), 9);
  EXPECT_EQ(of_kind(events, Kind::SpeechStarted).size(), 2u);
  // Each turn's words lie within its recording: the second turn's times
  // count on from the session's start, not from the turn's.
  for (size_t t = 0; t < 2; ++t) {
    ASSERT_FALSE(finals[t].words.empty());
    EXPECT_GE(finals[t].words.front().start_ms, s.starts[t] / 16 - 100) << t;
    std::ostringstream said;
    for (const auto& w : finals[t].words) said << w.text << "(" << w.start_ms << "-" << w.end_ms << ") ";
    EXPECT_LE(finals[t].words.back().end_ms, s.ends[t] / 16 + 100) << t << ": " << said.str();
  }
  // Partials of a turn carry that turn's order and come before its final.
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].kind == Kind::Partial) {
      const auto next_final =
          std::find_if(events.begin() + long(i), events.end(), [](const auto& e) { return e.kind == Kind::Final; });
      ASSERT_NE(next_final, events.end());
      EXPECT_EQ(events[i].turn_order, next_final->turn_order);
    }
  const auto heard = texts(finals[0].words);
  EXPECT_LE(wer({"he", "was", "not", "an", "ill", "disposed", "young", "man"}, heard), 0.5) << joined(heard);
}

TEST_F(StreamingRecognizerTest, AStartOffsetShiftsEveryTimeAndTheWordsStayTheSame) {
  Session s;
  s.gap(500);
  s.say(load("0930"));
  s.gap(1000);
  const auto plain_events = stream(*make(), s.pcm);
  const auto plain = of_kind(plain_events, Kind::Final);
  StreamingOptions o;
  o.start_offset_samples = 16000 * 3600;  // an hour into the session
  auto r = make(o);
  const auto events = stream(*r, s.pcm);
  const auto shifted = of_kind(events, Kind::Final);
  ASSERT_EQ(plain.size(), 1u);
  ASSERT_EQ(shifted.size(), 1u);
  // A decoder back from the pool starts from the same channel estimate: the
  // same audio gives the same words.
  ASSERT_EQ(texts(plain[0].words), texts(shifted[0].words));
  for (size_t i = 0; i < plain[0].words.size(); ++i) {
    EXPECT_EQ(shifted[0].words[i].start_ms, plain[0].words[i].start_ms + 3600 * 1000);
    EXPECT_EQ(shifted[0].words[i].end_ms, plain[0].words[i].end_ms + 3600 * 1000);
  }
  ASSERT_EQ(of_kind(events, Kind::SpeechStarted).size(), 1u);
  EXPECT_EQ(of_kind(events, Kind::SpeechStarted)[0].time_ms,
            of_kind(plain_events, Kind::SpeechStarted)[0].time_ms + 3600 * 1000);
  EXPECT_EQ(r->clock_samples(), o.start_offset_samples + int64_t(s.pcm.size()));
}

TEST_F(StreamingRecognizerTest, ForceEndpointEndsTheTurnNowAndTheRestIsANewTurn) {
  const auto speech = load("0870");
  Session s;
  s.gap(500);
  s.say(speech);
  s.gap(1500);
  auto r = make();
  std::vector<StreamEvent> events;
  const size_t cut = size_t(s.starts[0]) + 3 * 16000;  // 3 s into the recording
  for (size_t i = 0; i < cut; i += 1600) {
    auto e = r->feed(s.pcm.data() + i, std::min<size_t>(1600, cut - i));
    events.insert(events.end(), e.begin(), e.end());
  }
  ASSERT_TRUE(r->in_turn());
  const auto forced = r->force_endpoint();
  EXPECT_FALSE(r->in_turn());
  ASSERT_EQ(forced.size(), 1u);
  EXPECT_EQ(forced[0].kind, Kind::Final);
  EXPECT_EQ(forced[0].turn_order, 0);
  ASSERT_FALSE(forced[0].words.empty());
  EXPECT_LE(forced[0].words.back().end_ms, int64_t(cut) / 16 + 20);
  EXPECT_TRUE(r->force_endpoint().empty());  // nothing left to end

  std::vector<int16_t> rest(s.pcm.begin() + long(cut), s.pcm.end());
  const auto after = stream(*r, rest);
  EXPECT_EQ(after.front().kind, Kind::SpeechStarted);
  EXPECT_GE(after.front().time_ms, int64_t(cut) / 16);
  const auto finals = of_kind(after, Kind::Final);
  ASSERT_EQ(finals.size(), 1u);
  EXPECT_EQ(finals[0].turn_order, 1);
  ASSERT_FALSE(finals[0].words.empty());
  EXPECT_GE(finals[0].words.front().start_ms, int64_t(cut) / 16 - 300);
}

TEST_F(StreamingRecognizerTest, FinishEndsTheTurnInProgress) {
  const auto speech = load("0880");
  auto r = make();
  std::vector<int16_t> pcm(8000, 0);
  pcm.insert(pcm.end(), speech.begin(), speech.end());  // no silence after: the stream just stops
  pcm.resize(pcm.size() + 7);                           // and not on a 10 ms frame
  std::vector<StreamEvent> events;
  for (size_t i = 0; i < pcm.size(); i += 320) {  // 20 ms pieces
    auto e = r->feed(pcm.data() + i, std::min<size_t>(320, pcm.size() - i));
    events.insert(events.end(), e.begin(), e.end());
  }
  EXPECT_TRUE(of_kind(events, Kind::Final).empty());
  const auto last = r->finish();
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].kind, Kind::Final);
  EXPECT_FALSE(last[0].words.empty());
  EXPECT_EQ(r->clock_samples(), int64_t(pcm.size()));
}

TEST_F(StreamingRecognizerTest, PartialsCanBeTurnedOffAndLongSpeechIsCutAtTheTurnCap) {
  const auto speech = load("0870");  // 7.1 s
  Session s;
  s.gap(300);
  s.say(speech);
  s.gap(1000);
  StreamingOptions o;
  o.partials = false;
  o.max_turn_ms = 3000;
  const auto events = stream(*make(o), s.pcm);
  EXPECT_TRUE(of_kind(events, Kind::Partial).empty());
  const auto finals = of_kind(events, Kind::Final);
  ASSERT_GE(finals.size(), 2u);
  for (size_t i = 1; i < finals.size(); ++i) {
    EXPECT_EQ(finals[i].turn_order, finals[i - 1].turn_order + 1);
    if (!finals[i].words.empty() && !finals[i - 1].words.empty()) {
      EXPECT_GE(finals[i].words.front().start_ms, finals[i - 1].words.back().end_ms);
    }
  }
}

TEST_F(StreamingRecognizerTest, SilenceAloneGivesNoEvents) {
  Session s;
  s.gap(5000);
  EXPECT_TRUE(stream(*make(), s.pcm).empty());
}

TEST_F(StreamingRecognizerTest, DecodersAreReturnedToThePool) {
  const size_t before = factory_->idle_decoders();
  {
    auto a = make();
    auto b = make();
    EXPECT_EQ(factory_->idle_decoders(), before >= 2 ? before - 2 : 0);
  }
  EXPECT_GE(factory_->idle_decoders(), 2u);
}

}  // namespace
}  // namespace scribe::speech
