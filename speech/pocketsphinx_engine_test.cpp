// PocketSphinx decoders made, used and freed on many threads at once, as the
// first job of a fresh worker does: each decoding thread makes its own
// decoder. sphinxbase keeps its log stream in a global, and decoders that each
// reopened it closed a stream other threads were still logging to (heap
// corruption, a segfault at thread exit). Under AddressSanitizer that is a
// use-after-free report; in a release build it crashes now and then.
#include "speech/pocketsphinx_engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

namespace scribe::speech {
namespace {

TEST(PocketSphinxEngine, DecodersMadeUsedAndFreedConcurrentlyAreIndependent) {
  PocketSphinxFactory factory{PocketSphinxOptions{}};
  // One second of a vowel-like tone: the decoder logs and searches while
  // other threads make and free theirs.
  std::vector<int16_t> pcm(16000);
  for (size_t i = 0; i < pcm.size(); ++i)
    pcm[i] = static_cast<int16_t>(3000 * std::sin(2 * M_PI * 220 * double(i) / 16000) +
                                  1500 * std::sin(2 * M_PI * 660 * double(i) / 16000));
  constexpr int kThreads = 6, kRounds = 2;
  std::vector<std::string> first(kThreads), errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < kRounds; ++r) {
          auto engine = factory.make();
          std::string words;
          for (const auto& w : engine->recognize(pcm.data(), pcm.size(), "en", {}).words) words += w.text + " ";
          if (r == 0) first[t] = words;
          else if (words != first[t])
            errors[t] = "round " + std::to_string(r) + " heard \"" + words + "\", not \"" + first[t] + "\"";
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    // Every decoder hears the same thing from the same audio.
    EXPECT_EQ(first[t], first[0]) << "thread " << t;
  }
}

}  // namespace
}  // namespace scribe::speech
