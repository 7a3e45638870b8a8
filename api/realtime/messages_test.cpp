#include "api/realtime/messages.h"

#include <gtest/gtest.h>

namespace scribe::api::realtime {
namespace {

template <typename T>
const T* as(const std::variant<ClientMessage, BadMessage>& v) {
  if (auto* m = std::get_if<ClientMessage>(&v)) return std::get_if<T>(m);
  return nullptr;
}
const BadMessage* refused(const std::variant<ClientMessage, BadMessage>& v) { return std::get_if<BadMessage>(&v); }

TEST(RealtimeMessages, ParsesEachControlMessage) {
  EXPECT_NE(as<Terminate>(parse_client_message(R"({"type":"Terminate"})", Dialect::Native)), nullptr);
  EXPECT_NE(as<ForceEndpoint>(parse_client_message(R"({"type":"ForceEndpoint"})", Dialect::Native)), nullptr);
  EXPECT_NE(as<KeepAlive>(parse_client_message(R"({"type":"KeepAlive"})", Dialect::Native)), nullptr);
  auto c =
      parse_client_message(R"({"type":"Configure","end_of_turn_silence_ms":800,"partials":false})", Dialect::Native);
  ASSERT_NE(as<Configure>(c), nullptr);
  EXPECT_EQ(as<Configure>(c)->end_of_turn_silence_ms, 800);
  EXPECT_EQ(as<Configure>(c)->partials, false);
}

TEST(RealtimeMessages, RefusesWhatTheProtocolDoesNotAllow) {
  for (const char* text :
       {"not json", "[1]", "{}", R"({"type":7})", R"({"type":"Dance"})",
        R"({"type":"Configure","end_of_turn_silence_ms":100})", R"({"type":"Configure","end_of_turn_silence_ms":5001})",
        R"({"type":"Configure","end_of_turn_silence_ms":"600"})",
        R"({"type":"Configure","end_of_turn_silence_ms":600.5})",
        R"({"type":"Configure","end_of_turn_silence_ms":true})", R"({"type":"Configure","partials":"yes"})",
        R"({"type":"UpdateConfiguration","max_turn_silence":900})"})
    EXPECT_NE(refused(parse_client_message(text, Dialect::Native)), nullptr) << text;
  auto r = parse_client_message(R"({"type":"Configure","end_of_turn_silence_ms":100})", Dialect::Native);
  EXPECT_EQ(refused(r)->field, "end_of_turn_silence_ms");
}

TEST(RealtimeMessages, AssemblyAiConfigurationPicksTheConfidentSilence) {
  auto r = parse_client_message(
      R"({"type":"UpdateConfiguration","min_end_of_turn_silence_when_confident":400,"max_turn_silence":1500})",
      Dialect::AssemblyAI);
  ASSERT_NE(as<Configure>(r), nullptr);
  EXPECT_EQ(as<Configure>(r)->end_of_turn_silence_ms, 400);
  auto ceiling = parse_client_message(R"({"type":"UpdateConfiguration","max_turn_silence":9000})", Dialect::AssemblyAI);
  EXPECT_EQ(as<Configure>(ceiling)->end_of_turn_silence_ms, 5000);
  EXPECT_NE(refused(parse_client_message(R"({"type":"Configure"})", Dialect::AssemblyAI)), nullptr);
}

// What the SDK's updateConfiguration() sends (4.41.5 rewrites its
// deprecated min_end_of_turn_silence_when_confident to min_turn_silence),
// with fields our endpointer has no use for.
TEST(RealtimeMessages, AssemblyAiConfigurationReadsTheSdksMinTurnSilence) {
  auto r = parse_client_message(
      R"({"type":"UpdateConfiguration","min_turn_silence":700,"max_turn_silence":1500,"format_turns":true,)"
      R"("end_of_turn_confidence_threshold":0.5,"keyterms_prompt":["scribe"]})",
      Dialect::AssemblyAI);
  ASSERT_NE(as<Configure>(r), nullptr);
  EXPECT_EQ(as<Configure>(r)->end_of_turn_silence_ms, 700);
  auto both = parse_client_message(
      R"({"type":"UpdateConfiguration","min_turn_silence":900,"min_end_of_turn_silence_when_confident":400})",
      Dialect::AssemblyAI);
  EXPECT_EQ(as<Configure>(both)->end_of_turn_silence_ms, 900);
  EXPECT_NE(
      refused(parse_client_message(R"({"type":"UpdateConfiguration","min_turn_silence":"700"})", Dialect::AssemblyAI)),
      nullptr);
}

TEST(RealtimeMessages, AssemblyAiWarningsCarryAnIntegerCode) {
  auto cap = Json::parse(warning_message("cap_soon", "soon", Dialect::AssemblyAI));
  EXPECT_EQ(cap["warning_code"], 3008);
  EXPECT_EQ(cap["warning"], "soon");
  EXPECT_EQ(Json::parse(warning_message("slow_down", "slow", Dialect::AssemblyAI))["warning_code"], 3007);
  auto native = Json::parse(warning_message("cap_soon", "soon", Dialect::Native));
  EXPECT_EQ(native["code"], "cap_soon");
  EXPECT_EQ(native["message"], "soon");
}

TEST(RealtimeMessages, AudioFramesMustBeWholeSamplesWithinBounds) {
  EXPECT_FALSE(check_audio_frame(640));
  EXPECT_FALSE(check_audio_frame(3200));
  EXPECT_FALSE(check_audio_frame(32000));
  EXPECT_TRUE(check_audio_frame(638));
  EXPECT_TRUE(check_audio_frame(32002));
  EXPECT_TRUE(check_audio_frame(3201));
  EXPECT_TRUE(check_audio_frame(0));
}

TEST(RealtimeMessages, TurnsCarryWordsAndTranscriptInBothDialects) {
  std::vector<WireWord> words{
      {"hello", 100, 400, 0.91234, true}, {"", 400, 450, std::nullopt, true}, {"world", 450, 900, std::nullopt, false}};
  auto native = Json::parse(turn_message(3, true, words, Dialect::Native));
  EXPECT_EQ(native["type"], "Turn");
  EXPECT_EQ(native["turn_order"], 3);
  EXPECT_EQ(native["end_of_turn"], true);
  EXPECT_EQ(native["transcript"], "hello world");
  EXPECT_EQ(native["words"][0]["start"], 100);
  EXPECT_DOUBLE_EQ(native["words"][0]["confidence"].get<double>(), 0.912);
  EXPECT_TRUE(native["words"][2]["confidence"].is_null());
  EXPECT_FALSE(native.contains("turn_is_formatted"));
  auto aai = Json::parse(turn_message(3, false, words, Dialect::AssemblyAI));
  EXPECT_EQ(aai["turn_is_formatted"], false);
  EXPECT_EQ(aai["end_of_turn"], false);
}

TEST(RealtimeMessages, BeginAndTerminationDifferByDialect) {
  BeginInfo b{.session_id = "rt_x",
              .transcription_id = 7,
              .expires_at_unix = 1800000000,
              .cap_minutes = 5,
              .remaining_cap_seconds = 300,
              .last_turn_order = 2,
              .audio_received_seconds = 1.5};
  auto n = Json::parse(begin_message(b, Dialect::Native));
  EXPECT_EQ(n["session_id"], "rt_x");
  EXPECT_EQ(n["last_turn_order"], 2);
  EXPECT_EQ(n["expires_at"], "2027-01-15T08:00:00.000Z");
  auto a = Json::parse(begin_message(b, Dialect::AssemblyAI));
  EXPECT_EQ(a["id"], "rt_x");
  EXPECT_EQ(a["expires_at"], 1800000000);
  TerminationInfo t{"cap_reached", 59.6, 61.2, 60, 0.0167};
  auto tn = Json::parse(termination_message(t, Dialect::Native));
  EXPECT_EQ(tn["reason"], "cap_reached");
  EXPECT_EQ(tn["billed_seconds"], 60);
  auto ta = Json::parse(termination_message(t, Dialect::AssemblyAI));
  EXPECT_EQ(ta["audio_duration_seconds"], 60);
  EXPECT_FALSE(ta.contains("reason"));
}

}  // namespace
}  // namespace scribe::api::realtime
