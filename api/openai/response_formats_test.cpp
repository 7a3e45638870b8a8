#include "api/openai/response_formats.h"

#include <gtest/gtest.h>

#include "api/openai/openai_errors.h"
#include "api/openai/transcription_form.h"
#include "common/error.h"

namespace scribe::api::openai {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Transcript two_speakers() {
  Transcript t;
  t.duration_seconds = 8.47;
  t.billed_seconds = 9;
  t.language = "en";
  t.segments = {{11, 0, 3320, std::string("SPEAKER_00"), "The beach was popular."},
                {12, 3500, 6000, std::string("SPEAKER_01"), "People were swimming."},
                {13, 6100, 6200, std::nullopt, "  "}};
  t.words = {{"The", std::nullopt, 0, 400, std::string("SPEAKER_00"), 11, std::nullopt},
             {"beach", std::nullopt, 400, 900, std::string("SPEAKER_00"), 11, std::nullopt},
             {"was", std::nullopt, 900, 1300, std::string("SPEAKER_00"), 11, std::nullopt},
             {"popular", std::string("."), 1300, 3320, std::string("SPEAKER_00"), 11, std::nullopt},
             {"People", std::nullopt, 3500, 4000, std::string("SPEAKER_01"), 12, std::nullopt},
             {"were", std::nullopt, 4000, 4500, std::string("SPEAKER_01"), 12, std::nullopt},
             {"swimming", std::string("."), 4500, 6000, std::string("SPEAKER_01"), 12, std::nullopt}};
  return t;
}

TranscriptionForm form(Fields fields) { return parse_form(fields); }

TEST(OpenAiFormats, JsonIsTextAndDurationUsage) {
  auto out = render(two_speakers(), form({}));
  EXPECT_EQ(out.content_type, "application/json");
  Json j = Json::parse(out.body);
  EXPECT_EQ(j["text"], "The beach was popular. People were swimming.");
  EXPECT_EQ(j["usage"], (Json{{"type", "duration"}, {"seconds", 9}}));
  EXPECT_EQ(j.size(), 2u);
}

TEST(OpenAiFormats, TextIsPlainWithANewline) {
  auto out = render(two_speakers(), form({{"response_format", "text"}}));
  EXPECT_EQ(out.body, "The beach was popular. People were swimming.\n");
  EXPECT_EQ(out.content_type.rfind("text/plain", 0), 0u);
}

TEST(OpenAiFormats, SrtAndVttAreSubtitlesOfTheWords) {
  auto srt = render(two_speakers(), form({{"response_format", "srt"}}));
  EXPECT_EQ(srt.body.rfind("1\n00:00:00,000 --> ", 0), 0u) << srt.body;
  EXPECT_NE(srt.body.find("swimming."), std::string::npos);
  EXPECT_EQ(srt.content_type.rfind("text/plain", 0), 0u);
  auto vtt = render(two_speakers(), form({{"response_format", "vtt"}}));
  EXPECT_EQ(vtt.body.rfind("WEBVTT", 0), 0u);
  EXPECT_NE(vtt.body.find("00:00:00.000 --> "), std::string::npos);
  EXPECT_EQ(vtt.content_type.rfind("text/vtt", 0), 0u);
  // Silence: an empty SRT, a WebVTT header alone.
  Transcript empty;
  EXPECT_EQ(render(empty, form({{"response_format", "srt"}})).body, "");
  EXPECT_EQ(render(empty, form({{"response_format", "vtt"}})).body, "WEBVTT\n");
}

TEST(OpenAiFormats, VerboseJsonHasSegmentsByDefaultAndWordsWhenAsked) {
  Json j = Json::parse(render(two_speakers(), form({{"response_format", "verbose_json"}})).body);
  EXPECT_EQ(j["task"], "transcribe");
  EXPECT_EQ(j["language"], "english");
  EXPECT_DOUBLE_EQ(j["duration"].get<double>(), 8.47);
  ASSERT_EQ(j["segments"].size(), 3u);
  const Json& s = j["segments"][1];
  EXPECT_EQ(s["id"], 1);
  EXPECT_EQ(s["seek"], 350);
  EXPECT_DOUBLE_EQ(s["start"].get<double>(), 3.5);
  EXPECT_DOUBLE_EQ(s["end"].get<double>(), 6.0);
  EXPECT_EQ(s["text"], "People were swimming.");
  for (const char* k : {"tokens", "temperature", "avg_logprob", "compression_ratio", "no_speech_prob"})
    EXPECT_TRUE(s.contains(k)) << k;
  EXPECT_FALSE(j.contains("words"));

  j = Json::parse(render(two_speakers(), form({{"response_format", "verbose_json"},
                                               {"timestamp_granularities[]", "word"},
                                               {"timestamp_granularities[]", "segment"}}))
                      .body);
  ASSERT_EQ(j["words"].size(), 7u);
  EXPECT_EQ(j["words"][3], (Json{{"word", "popular"}, {"start", 1.3}, {"end", 3.32}}));
  EXPECT_EQ(j["segments"].size(), 3u);

  j = Json::parse(
      render(two_speakers(), form({{"response_format", "verbose_json"}, {"timestamp_granularities", "word"}})).body);
  EXPECT_TRUE(j.contains("words"));
  EXPECT_FALSE(j.contains("segments"));
}

TEST(OpenAiFormats, DiarizedJsonLabelsSpeakersWithLetters) {
  Json j = Json::parse(render(two_speakers(), form({{"response_format", "diarized_json"}})).body);
  EXPECT_EQ(j["task"], "transcribe");
  ASSERT_EQ(j["segments"].size(), 3u);
  EXPECT_EQ(j["segments"][0], (Json{{"type", "transcript.text.segment"},
                                    {"id", "seg_0"},
                                    {"start", 0.0},
                                    {"end", 3.32},
                                    {"text", "The beach was popular."},
                                    {"speaker", "A"}}));
  EXPECT_EQ(j["segments"][1]["speaker"], "B");
  EXPECT_EQ(j["segments"][2]["speaker"], "unknown");
  EXPECT_EQ(j["usage"]["seconds"], 9);
}

TEST(OpenAiFormats, SpeakerLetters) {
  EXPECT_EQ(speaker_letter(std::string("SPEAKER_00")), "A");
  EXPECT_EQ(speaker_letter(std::string("SPEAKER_25")), "Z");
  EXPECT_EQ(speaker_letter(std::string("SPEAKER_26")), "AA");
  EXPECT_EQ(speaker_letter(std::string("SPEAKER_27")), "AB");
  EXPECT_EQ(speaker_letter(std::nullopt), "unknown");
  EXPECT_EQ(speaker_letter(std::string("SPEAKER_")), "unknown");
  EXPECT_EQ(speaker_letter(std::string("someone")), "unknown");
}

Json event_data(const std::string& event) {
  EXPECT_EQ(event.rfind("data: ", 0), 0u);
  EXPECT_EQ(event.substr(event.size() - 2), "\n\n");
  return Json::parse(event.substr(6));
}

TEST(OpenAiFormats, DraftPiecesAreDeltasInTheirOrderSpacedAfterTheFirst) {
  bool started = false;
  auto events =
      draft_events({{0, 0.2, 2.0, "Good evening."}, {1, 2.5, 3.0, ""}, {2, 3.1, 5.0, " welcome to "}}, started);
  ASSERT_EQ(events.size(), 2u);  // the piece without text sends nothing
  EXPECT_EQ(event_data(events[0]), (Json{{"type", "transcript.text.delta"}, {"delta", "Good evening."}}));
  EXPECT_EQ(event_data(events[1]), (Json{{"type", "transcript.text.delta"}, {"delta", " welcome to"}}));
  EXPECT_TRUE(started);
  // Later pieces continue the text.
  events = draft_events({{3, 5.1, 6.0, "the program."}}, started);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(event_data(events[0])["delta"], " the program.");
  // Nothing with text: nothing sent, and the stream has still not started.
  bool fresh = false;
  EXPECT_TRUE(draft_events({{0, 0, 1, "  "}}, fresh).empty());
  EXPECT_FALSE(fresh);
}

TEST(OpenAiFormats, AfterTheDraftsTheSegmentsThenTheFinalText) {
  auto events = final_events(two_speakers(), true);
  ASSERT_EQ(events.size(), 4u);
  // The segments are diarized_json's, as events.
  Json diarized = Json::parse(render(two_speakers(), form({{"response_format", "diarized_json"}})).body);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(event_data(events[i]), diarized["segments"][i]);
  EXPECT_EQ(event_data(events[1])["speaker"], "B");
  EXPECT_EQ(event_data(events[3]),
            (Json{{"type", "transcript.text.done"}, {"text", "The beach was popular. People were swimming."}}));
  EXPECT_EQ(event_data(sse_error({{"code", "x"}}))["error"]["code"], "x");
}

TEST(OpenAiFormats, WithoutDraftsEachSegmentIsADeltaFirst) {
  auto events = final_events(two_speakers(), false);
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(event_data(events[0]),
            (Json{{"type", "transcript.text.delta"}, {"delta", "The beach was popular."}, {"segment_id", "seg_0"}}));
  EXPECT_EQ(event_data(events[1]),
            (Json{{"type", "transcript.text.delta"}, {"delta", " People were swimming."}, {"segment_id", "seg_1"}}));
  for (std::size_t i = 2; i < 5; ++i) EXPECT_EQ(event_data(events[i])["type"], "transcript.text.segment");
  EXPECT_EQ(event_data(events[5])["text"], "The beach was popular. People were swimming.");
}

TEST(OpenAiForm, ModelsMapToPipelines) {
  EXPECT_EQ(form({}).model, "whisper-1");
  EXPECT_EQ(form({}).pipeline_code, "standard");
  for (const char* m : {"whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe", "standard", "default"})
    EXPECT_EQ(form({{"model", m}}).pipeline_code, "standard") << m;
  try {
    form({{"model", "gpt-5-speech"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "unsupported_pipeline");
    EXPECT_EQ(e.extras()["field"], "model");
  }
}

TEST(OpenAiForm, FieldsAreCheckedAndUnknownOnesIgnored) {
  auto f = form({{"language", "EN"},
                 {"prompt", "Names: Ada, Grace.\nStyle: formal."},
                 {"temperature", "0.2"},
                 {"stream", "False"},
                 {"include[]", "logprobs"},
                 {"chunking_strategy", "auto"},
                 {"something_new", "x"}});
  EXPECT_EQ(f.language, "en");
  EXPECT_EQ(f.prompt, "Names: Ada, Grace.\nStyle: formal.");
  EXPECT_DOUBLE_EQ(*f.temperature, 0.2);
  EXPECT_FALSE(f.stream);
  EXPECT_EQ(f.format, Format::Json);
  auto refused = [](Fields fields, const std::string& field) {
    try {
      parse_form(fields);
      ADD_FAILURE() << "accepted " << fields[0].first << "=" << fields[0].second;
    } catch (const Error& e) {
      EXPECT_EQ(e.http_status(), 400);
      EXPECT_EQ(e.extras()["field"], field);
    }
  };
  refused({{"response_format", "xml"}}, "response_format");
  refused({{"temperature", "hot"}}, "temperature");
  refused({{"temperature", "1.5"}}, "temperature");
  refused({{"stream", "yes please"}}, "stream");
  refused({{"timestamp_granularities[]", "sentence"}}, "timestamp_granularities");
  refused({{"language", "en_US!"}}, "language");
  refused({{"model", "whisper-1"}, {"model", "whisper-1"}}, "model");
  refused({{"prompt", std::string("\xff\xfe")}}, "prompt");
  refused({{"model", ""}}, "model");
}

TEST(OpenAiForm, FingerprintCoversWhatShapesTheTranscriptionOnly) {
  auto base = fingerprint(form({}), "a.wav", 10, "abc");
  EXPECT_EQ(base.rfind("oa1:", 0), 0u);
  EXPECT_EQ(base, fingerprint(form({{"model", "gpt-4o-transcribe"},
                                    {"response_format", "srt"},
                                    {"prompt", "x"},
                                    {"temperature", "0.5"},
                                    {"stream", "true"}}),
                              "a.wav", 10, "abc"));
  EXPECT_NE(base, fingerprint(form({{"language", "en"}}), "a.wav", 10, "abc"));
  EXPECT_NE(base, fingerprint(form({}), "b.wav", 10, "abc"));
  EXPECT_NE(base, fingerprint(form({}), "a.wav", 11, "abc"));
  EXPECT_NE(base, fingerprint(form({}), "a.wav", 10, "abd"));
}

TEST(OpenAiForm, FileTypes) {
  EXPECT_EQ(upload_media_type("audio/wav", "x"), "audio/wav");
  EXPECT_EQ(upload_media_type("Audio/WebM;codecs=opus", "blob"), "audio/webm");
  EXPECT_EQ(upload_media_type("application/octet-stream", "talk.MP3"), "audio/mpeg");
  EXPECT_EQ(upload_media_type("", "dir/x.m4a"), "audio/m4a");
  EXPECT_FALSE(upload_media_type("text/plain", "notes.txt"));
  EXPECT_FALSE(upload_media_type("application/octet-stream", "notes.txt"));
  EXPECT_TRUE(type_left_to_probe("application/octet-stream", "recording"));
  EXPECT_TRUE(type_left_to_probe("", ""));
  EXPECT_FALSE(type_left_to_probe("application/octet-stream", "notes.txt"));
  EXPECT_FALSE(type_left_to_probe("text/plain", "recording"));
}

TEST(OpenAiErrors, TypesAndRetryAdvice) {
  EXPECT_EQ(error_type(400), "invalid_request_error");
  EXPECT_EQ(error_type(401), "authentication_error");
  EXPECT_EQ(error_type(402), "insufficient_quota");
  EXPECT_EQ(error_type(403), "permission_error");
  EXPECT_EQ(error_type(503), "server_error");
  EXPECT_EQ(should_retry(402, Json::object()), false);
  EXPECT_EQ(should_retry(400, Json::object()), false);
  EXPECT_EQ(should_retry(409, Json::object()), std::nullopt);
  EXPECT_EQ(should_retry(429, {{"retry_after", 12}}), std::nullopt);
  EXPECT_EQ(should_retry(429, {{"retry_after", 3600}}), false);
  EXPECT_EQ(should_retry(429, Json::object()), false);
  EXPECT_EQ(should_retry(500, Json::object()), std::nullopt);
  EXPECT_EQ(should_retry(500, {{"transcription_id", 4}}), false);
}

TEST(OpenAiErrors, DecorateAddsTypeParamAndTheHeader) {
  Response r = Response::json(402, {{"error", {{"code", "insufficient_funds"}, {"message", "top up"}}}});
  decorate_error(r);
  Json e = Json::parse(r.body)["error"];
  EXPECT_EQ(e["type"], "insufficient_quota");
  EXPECT_TRUE(e["param"].is_null());
  EXPECT_EQ(e["code"], "insufficient_funds");
  EXPECT_EQ(r.header("x-should-retry"), "false");

  Response bad = Response::json(400, {{"error", {{"code", "invalid_request"}, {"field", "file"}}}});
  decorate_error(bad);
  EXPECT_EQ(Json::parse(bad.body)["error"]["param"], "file");

  Response ok = Response::json(200, {{"text", "x"}});
  decorate_error(ok);
  EXPECT_EQ(ok.body, Json({{"text", "x"}}).dump());
}

TEST(OpenAiErrors, FailedTranscriptions) {
  EXPECT_FALSE(failed_transcription_error("no_speech", "silence", 3));
  auto media = failed_transcription_error("media_undecodable", "cannot open media", 3);
  ASSERT_TRUE(media);
  EXPECT_EQ(media->http_status(), 400);
  EXPECT_EQ(media->extras()["field"], "file");
  EXPECT_EQ(media->extras()["transcription_id"], 3);
  auto internal = failed_transcription_error("internal_error", "boom", 3);
  EXPECT_EQ(internal->http_status(), 500);
  EXPECT_EQ(internal->extras()["reason"], "internal_error");
}

}  // namespace
}  // namespace scribe::api::openai
