#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// The form fields of POST /v1/audio/transcriptions (OpenAI's
// CreateTranscriptionRequest, docs/openai_compat_notes.md) read into what
// this service does with them, and the fingerprint that makes a retried
// upload the same request. Pure: the handler passes the fields the multipart
// parser kept.
namespace scribe::api::openai {

enum class Format { Json, Text, Srt, Vtt, VerboseJson, DiarizedJson };

struct TranscriptionForm {
  std::string model;          // as sent ("whisper-1" when absent)
  std::string pipeline_code;  // the pipeline it names
  std::string language = "auto";
  Format format = Format::Json;
  // verbose_json: segments unless only words were asked for (OpenAI's
  // default granularity is segment); words only when asked for.
  bool segments = true;
  bool words = false;
  bool stream = false;
  // Accepted, checked and not used (the recognizer has neither):
  std::optional<std::string> prompt;
  std::optional<double> temperature;
};

// The OpenAI model names `model` takes besides this service's pipeline
// codes; each runs the default pipeline.
const std::vector<std::string>& model_aliases();
// The pipeline a model name runs: a pipeline code (pipelines::resolve_code)
// or an alias; nullopt when unknown.
std::optional<std::string> pipeline_for_model(const std::string& model);

// Reads the fields (in the order sent; "name[]" and "name" are the same
// array field). Throws 400 invalid_request naming the field (or
// unsupported_pipeline naming model) for a value it cannot take, and for a
// single-valued field sent twice. Fields it does not know are ignored, as
// are include[], chunking_strategy, known_speaker_*, keywords and languages.
TranscriptionForm parse_form(const std::vector<std::pair<std::string, std::string>>& fields);

const char* format_name(Format f);

// What makes two requests the same transcription: the pipeline, language,
// the file's name, length and SHA-256. The rendering options (response
// format, granularities, stream) and the fields that change nothing
// (prompt, temperature) are left out, so a retry or a second rendering of
// the same upload is never a second charge. Hex SHA-256, "oa1:" prefixed.
std::string fingerprint(const TranscriptionForm& form, const std::string& filename, int64_t file_bytes,
                        const std::string& file_sha256);

// The media type of the file part: its Content-Type when it is one the
// upload route accepts (upload::is_allowed_content_type), else the one its
// file name's extension names (OpenAI's list: flac, mp3, mp4, mpeg, mpga,
// m4a, ogg, wav, webm; and oga, opus, aac, mov, avi); nullopt when neither.
std::optional<std::string> upload_media_type(const std::string& part_content_type, const std::string& filename);
// A file whose part says nothing of its type (no Content-Type, or
// application/octet-stream, as the npm SDK sends a stream) and whose name
// has no extension: whether it is media is left to ffprobe. Any other file
// without an accepted type is refused before anything is stored.
bool type_left_to_probe(const std::string& part_content_type, const std::string& filename);

}  // namespace scribe::api::openai
