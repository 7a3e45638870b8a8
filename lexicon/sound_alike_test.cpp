#include "lexicon/sound_alike.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

namespace scribe::lexicon {
namespace {

std::vector<Phone> phones(std::initializer_list<const char*> names) {
  std::vector<Phone> out;
  for (const char* n : names) out.push_back(*phone_of(n));
  return out;
}

bool has(const std::vector<SoundAlike>& v, const std::string& w) {
  return std::any_of(v.begin(), v.end(), [&](const SoundAlike& s) { return s.word == w; });
}

TEST(PhoneDistance, IsAMetricWithCheapVowelsAndVoicing) {
  const auto moat = phones({"M", "OW", "T"}), most = phones({"M", "OW", "S", "T"}), mode = phones({"M", "OW", "D"});
  EXPECT_EQ(phone_distance(moat, moat), 0);
  EXPECT_DOUBLE_EQ(phone_distance(moat, most), phone_distance(most, moat));
  // t -> d (voicing) is cheaper than inserting an s.
  EXPECT_LT(phone_distance(moat, mode), phone_distance(moat, most));
  // A vowel for a vowel is cheaper than a vowel for a consonant.
  EXPECT_LT(phone_distance(phones({"K", "AO", "L"}), phones({"K", "AA", "L"})),
            phone_distance(phones({"K", "AO", "L"}), phones({"K", "S", "L"})));
  EXPECT_TRUE(phone_of("ao1"));
  EXPECT_FALSE(phone_of("QQ"));
}

// Through Debian's dictionary, the one the recognizer decodes with.
TEST(SoundAlikes, FindTheRecognizersMishearings) {
  ASSERT_NE(pronunciations(), nullptr);
  EXPECT_TRUE(has(sound_alikes("moat", 100), "most"));
  EXPECT_TRUE(has(sound_alikes("coral", 100), "carl"));
  EXPECT_TRUE(has(sound_alikes("bees", 100), "peas"));
  EXPECT_TRUE(has(sound_alikes("harbor", 20), "harbour"));
  // Homophones weigh 1, and closest come first.
  const auto h = sound_alikes("harbor", 20);
  EXPECT_TRUE(has({h.begin(), h.begin() + 2}, "harbour"));
  EXPECT_DOUBLE_EQ(h.front().weight, 1.0);
  for (std::size_t i = 1; i < h.size(); ++i) EXPECT_LE(h[i - 1].distance, h[i].distance);
  for (const auto& s : sound_alikes("coral", 50)) {
    EXPECT_NE(s.word, "coral");
    EXPECT_LE(s.distance, kSoundAlikeMaxDistance);
    EXPECT_GT(s.weight, 0);
    EXPECT_LE(s.weight, 1);
  }
  // Not words that merely share letters or nothing at all.
  EXPECT_FALSE(has(sound_alikes("coral", 50), "dog"));
  EXPECT_FALSE(has(sound_alikes("moat", 50), "dog"));
  EXPECT_FALSE(has(sound_alikes("elephant", 50), "telephone"));
  EXPECT_TRUE(sound_alikes("qwxzv").empty());
  EXPECT_LE(sound_alikes("moat", 3).size(), 3u);
  EXPECT_TRUE(std::isinf(phonetic_distance("moat", "qwxzv")));
  EXPECT_LT(phonetic_distance("coral", "carl"), phonetic_distance("coral", "moat"));
}

TEST(SoundAlikes, TimeOfALookupIsPrinted) {
  ASSERT_NE(pronunciations(), nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  int found = 0;
  for (const char* w : {"moat", "coral", "volcano", "harbour", "encyclopedia", "bees", "sourdough", "penguin"})
    found += static_cast<int>(sound_alikes(w).size());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ sound_alikes ] 8 lookups, " << found << " words, " << ms / 8 << " ms each\n";
  EXPECT_GT(found, 0);
}

}  // namespace
}  // namespace scribe::lexicon
