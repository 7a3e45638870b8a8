#include "api/openai/response_formats.h"

#include "api/export_rows.h"
#include "common/text.h"
#include "domain/pipelines.h"
#include "domain/subtitles.h"

namespace scribe::api::openai {
namespace {

double seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

Json usage(const Transcript& t) { return {{"type", "duration"}, {"seconds", t.billed_seconds}}; }

std::string segment_id(std::size_t index) { return "seg_" + std::to_string(index); }

std::string sse(const Json& data) { return "data: " + data.dump() + "\n\n"; }

// Whisper's segment fields this service has no measure of are given the
// values that mean "nothing to report" to clients that filter on them:
// tokens empty, temperature 0, avg_logprob 0 (failed is below -1),
// compression_ratio 1 (failed is above 2.4), no_speech_prob 0.
Json verbose_segment(const transcript::Segment& s, std::size_t index) {
  return {{"id", index},
          {"seek", s.start_ms / 10},  // Whisper counts seek in 10 ms frames
          {"start", seconds(s.start_ms)},
          {"end", seconds(s.end_ms)},
          {"text", s.text},
          {"tokens", Json::array()},
          {"temperature", 0.0},
          {"avg_logprob", 0.0},
          {"compression_ratio", 1.0},
          {"no_speech_prob", 0.0}};
}

// diarized_json's segment, which is also the transcript.text.segment event.
Json diarized_segment(const transcript::Segment& s, std::size_t index) {
  return {{"type", "transcript.text.segment"}, {"id", segment_id(index)}, {"start", seconds(s.start_ms)},
          {"end", seconds(s.end_ms)},          {"text", s.text},          {"speaker", speaker_letter(s.speaker)}};
}

Rendered json_body(const Json& j) { return {j.dump(), "application/json"}; }

// A delta of `text` (trimmed; nothing when empty), after a space once the
// stream has sent text.
std::optional<Json> delta(std::string_view text, bool& started) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  Json d = {{"type", "transcript.text.delta"}, {"delta", (started ? " " : "") + std::string(text)}};
  started = true;
  return d;
}

}  // namespace

std::string full_text(const std::vector<transcript::Segment>& segments) {
  std::string out;
  for (const auto& s : segments) {
    std::string_view text = trim(s.text);
    if (text.empty()) continue;
    if (!out.empty()) out += ' ';
    out += text;
  }
  return out;
}

std::string language_name(const std::string& code) {
  for (const auto& p : pipelines::catalogue())
    for (const auto& l : p.languages)
      if (l.code == code && l.label != code) return to_lower(l.label);
  return code;
}

std::string speaker_letter(const std::optional<std::string>& speaker) {
  const std::string prefix = "SPEAKER_";
  if (!speaker || speaker->rfind(prefix, 0) != 0 || speaker->size() == prefix.size()) return "unknown";
  int64_t n = 0;
  for (std::size_t i = prefix.size(); i < speaker->size(); ++i) {
    char c = (*speaker)[i];
    if (c < '0' || c > '9' || n > 1'000'000) return "unknown";
    n = n * 10 + (c - '0');
  }
  // Bijective base 26, as spreadsheet columns: A..Z, AA..AZ, ...
  std::string out;
  for (int64_t v = n + 1; v > 0; v = (v - 1) / 26) out.insert(out.begin(), static_cast<char>('A' + (v - 1) % 26));
  return out;
}

Rendered render(const Transcript& t, const TranscriptionForm& form) {
  const std::string text = full_text(t.segments);
  switch (form.format) {
    case Format::Json:
      return json_body({{"text", text}, {"usage", usage(t)}});
    case Format::Text:
      return {text + "\n", "text/plain; charset=utf-8"};
    case Format::Srt:
    case Format::Vtt: {
      TranscriptRows rows{t.segments, t.words};
      auto file = render_subtitles(rows, form.format == Format::Srt ? "srt" : "vtt",
                                   subtitles::BuildOptions{subtitles::find_preset(subtitles::kDefaultPreset), false});
      // An empty transcript is an empty SRT file; WebVTT keeps its header.
      if (form.format == Format::Vtt && file.body.empty()) file.body = "WEBVTT\n";
      return {file.body, form.format == Format::Srt ? "text/plain; charset=utf-8" : "text/vtt; charset=utf-8"};
    }
    case Format::VerboseJson: {
      Json j = {{"task", "transcribe"},
                {"language", language_name(t.language)},
                {"duration", t.duration_seconds},
                {"text", text},
                {"usage", usage(t)}};
      if (form.segments) {
        Json segs = Json::array();
        for (std::size_t i = 0; i < t.segments.size(); ++i) segs.push_back(verbose_segment(t.segments[i], i));
        j["segments"] = std::move(segs);
      }
      if (form.words) {
        Json words = Json::array();
        for (const auto& w : t.words)
          words.push_back({{"word", w.text}, {"start", seconds(w.start_ms)}, {"end", seconds(w.end_ms)}});
        j["words"] = std::move(words);
      }
      return json_body(j);
    }
    case Format::DiarizedJson: {
      Json segs = Json::array();
      for (std::size_t i = 0; i < t.segments.size(); ++i) segs.push_back(diarized_segment(t.segments[i], i));
      return json_body({{"task", "transcribe"},
                        {"duration", t.duration_seconds},
                        {"text", text},
                        {"segments", std::move(segs)},
                        {"usage", usage(t)}});
    }
  }
  return json_body({{"text", text}});
}

std::vector<std::string> draft_events(const std::vector<draft::Piece>& pieces, bool& started) {
  std::vector<std::string> out;
  for (const auto& p : pieces)
    if (auto d = delta(p.text, started)) out.push_back(sse(*d));
  return out;
}

std::vector<std::string> final_events(const Transcript& t, bool started) {
  std::vector<std::string> out;
  if (!started)
    for (std::size_t i = 0; i < t.segments.size(); ++i)
      if (auto d = delta(t.segments[i].text, started)) {
        (*d)["segment_id"] = segment_id(i);
        out.push_back(sse(*d));
      }
  for (std::size_t i = 0; i < t.segments.size(); ++i) out.push_back(sse(diarized_segment(t.segments[i], i)));
  out.push_back(sse({{"type", "transcript.text.done"}, {"text", full_text(t.segments)}}));
  return out;
}

std::string sse_error(const Json& error_object) { return sse({{"error", error_object}}); }

}  // namespace scribe::api::openai
