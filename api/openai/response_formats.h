#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/openai/transcription_form.h"
#include "common/json.h"
#include "domain/transcript_draft.h"
#include "domain/transcript_text.h"

// A completed transcription in the shapes OpenAI's clients parse (the
// CreateTranscriptionResponse* schemas and transcript.text.* stream events of
// openai/openai-openapi; docs/openai_compat_notes.md). Pure functions over
// the rows the handler read: tested without a server.
namespace scribe::api::openai {

struct Transcript {
  double duration_seconds = 0;  // measured
  int64_t billed_seconds = 0;   // what was charged for
  std::string language;         // code, e.g. "en"
  std::vector<transcript::Segment> segments;
  std::vector<transcript::Word> words;  // empty when the transcript has no word timings
};

struct Rendered {
  std::string body;
  std::string content_type;
};

// The whole text: the segments' texts joined with single spaces.
std::string full_text(const std::vector<transcript::Segment>& segments);
// verbose_json's language: the language's English name in lower case
// ("english"), as Whisper reports it; the code when the name is not known.
std::string language_name(const std::string& code);
// diarized_json's speaker: SPEAKER_00 -> "A", SPEAKER_01 -> "B", ...
// SPEAKER_26 -> "AA" (OpenAI labels unknown speakers A, B, ...); a segment
// the pipeline could not attribute is "unknown".
std::string speaker_letter(const std::optional<std::string>& speaker);

// The response body of a non-streaming request, in the form's format:
//  json          {"text", "usage": {"type": "duration", "seconds"}}
//  text          the text and a newline, text/plain
//  srt, vtt      subtitles (api::render_subtitles, the youtube preset)
//  verbose_json  {"task", "language", "duration", "text", "segments"?, "words"?, "usage"}
//  diarized_json {"task", "duration", "text", "segments": [{"type", "id", "start", "end", "text", "speaker"}], "usage"}
// JSON formats are application/json; text and srt are text/plain, vtt
// text/vtt (the SDK returns any non-JSON body as a string).
Rendered render(const Transcript& t, const TranscriptionForm& form);

// stream=true: Server-Sent Events, each "data: {json}\n\n".
// While the transcription runs, a transcript.text.delta per piece of draft
// text (domain/transcript_draft.h) with text, in recording order: the text,
// after a space unless it is the stream's first. `started` says whether
// text went out before, and is set once some does.
std::vector<std::string> draft_events(const std::vector<draft::Piece>& pieces, bool& started);
// Once completed: when no text went out (`started` false: the draft was
// already swept, or none was recorded) a delta per segment with its
// segment_id; then a transcript.text.segment per segment (diarized_json's
// segments); then transcript.text.done with the whole text. That text is the
// transcript's, whose sentences were rebuilt across pieces once the voices
// were told apart: the drafts' words, but casing, punctuation and spacing
// may differ from the deltas joined.
std::vector<std::string> final_events(const Transcript& t, bool started);
// An error inside a stream: "data: {"error": {...}}\n\n", which the SDK's
// stream reader throws as an APIError.
std::string sse_error(const Json& error_object);
// A comment line that keeps a quiet stream open through proxies; SSE
// readers skip it.
inline constexpr const char* kSseKeepAlive = ": waiting for the transcription\n\n";

}  // namespace scribe::api::openai
