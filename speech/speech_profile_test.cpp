#include "speech/speech_profile.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "domain/pipelines.h"
#include "speech/pocketsphinx_engine.h"

namespace scribe::speech {
namespace {

// The value given for `name` in a decoder argument list, or "" when absent.
std::string value_of(const std::vector<std::string>& args, const std::string& name) {
  auto it = std::find(args.begin(), args.end(), name);
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

TEST(SpeechProfile, EveryProfileKeepsWordTimesAndTheDefaultExists) {
  ASSERT_NE(find_speech_profile(kDefaultSpeechProfile), nullptr);
  for (const auto& p : speech_profiles()) {
    auto args = PocketSphinxOptions::for_profile(p.name).decoder_arguments();
    EXPECT_EQ(value_of(args, "-remove_silence"), "no") << p.name;
    EXPECT_FALSE(p.description.empty());
  }
}

TEST(SpeechProfile, AccuracyKeepsTheAccuracyFirstSettings) {
  auto o = PocketSphinxOptions::for_profile("accuracy");
  auto args = o.decoder_arguments();
  EXPECT_EQ(value_of(args, "-topn"), "16");
  EXPECT_EQ(value_of(args, "-maxhmmpf"), "-1");
  EXPECT_TRUE(o.vtln);
  EXPECT_FALSE(PocketSphinxOptions::for_profile("live").vtln);
}

TEST(SpeechProfile, OperatorArgumentsReplaceTheProfilesOfTheSameName) {
  auto o = PocketSphinxOptions::for_profile("accuracy");
  o.extra_args = {"-topn", "8"};
  auto args = o.decoder_arguments();
  EXPECT_EQ(std::count(args.begin(), args.end(), "-topn"), 1);
  EXPECT_EQ(value_of(args, "-topn"), "8");
}

TEST(SpeechProfile, AnUnknownNameIsRefusedNamingTheSettingAndTheChoices) {
  try {
    PocketSphinxOptions::for_profile("fastest");
    FAIL() << "accepted an unknown profile";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("SCRIBE_SPEECH_PROFILE"), std::string::npos) << m;
    EXPECT_NE(m.find("'fastest'"), std::string::npos) << m;
    EXPECT_NE(m.find("accuracy, balanced, live"), std::string::npos) << m;
  }
}

TEST(SpeechProfile, TheCatalogueNamesTheStandardPipelinesProfile) {
  const auto* live = find_speech_profile("live");
  pipelines::set_standard_profile(live->name, live->description);
  auto json = pipelines::to_json(pipelines::catalogue().front());
  EXPECT_EQ(json["speech_profile"], "live");
  EXPECT_EQ(json["speech_profile_description"], live->description);
  const auto* dflt = find_speech_profile(kDefaultSpeechProfile);
  pipelines::set_standard_profile(dflt->name, dflt->description);
  EXPECT_EQ(pipelines::to_json(pipelines::catalogue().front())["speech_profile"], kDefaultSpeechProfile);
}

}  // namespace
}  // namespace scribe::speech
