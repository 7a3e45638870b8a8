#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <string_view>
#include <vector>

#include "domain/subtitles.h"
#include "domain/transcript_text.h"

// The transcript read models (`segments`, `words`) of one transcription as
// the plain values the exports render, in spoken order, and the rendering of
// a subtitle file from them. Shared by the export handlers and
// bench/exports_benchmark.cpp, so the benchmark times the handlers' code; the
// caller has already checked that the transcription is the caller's.
namespace scribe::api {

// Segments only (GET /transcript, and /subtitles in sentence mode).
std::vector<transcript::Segment> load_segments(pqxx::transaction_base& txn, int64_t transcription_id);

struct TranscriptRows {
  std::vector<transcript::Segment> segments;
  std::vector<transcript::Word> words;  // empty when the transcript has no word timings
};

// Segments and their words in one statement of one row per segment: the
// words come from `segments.packed_words` (migrations/011_packed_words.sql),
// not from 100,000 rows of `words`.
TranscriptRows load_segments_and_words(pqxx::transaction_base& txn, int64_t transcription_id);

// Appends the words of one segment's `packed_words` to `out`; every word gets
// the segment's id and speaker. Throws std::runtime_error when `packed` is not
// in the format of migrations/011_packed_words.sql.
void unpack_words(std::string_view packed, int64_t segment_id, const std::optional<std::string>& speaker,
                  std::vector<transcript::Word>& out);

// A rendered subtitle file: `format` is srt, vtt, vtt-karaoke or json.
struct SubtitlesFile {
  std::string body;
  std::string content_type;
  std::string extension;
  std::size_t cue_count = 0;
  bool word_mode = false;
};

// Word-timed cues when `rows.words` is not empty, sentence cues otherwise.
SubtitlesFile render_subtitles(const TranscriptRows& rows, std::string_view format,
                               const subtitles::BuildOptions& options);
// Materialized cues (a transcript revision): one cue per segment at its own
// times, lines broken by the preset (subtitles::build_from_cues).
SubtitlesFile render_cues(const std::vector<transcript::Segment>& cues, const std::vector<transcript::Word>& words,
                          std::string_view format, const subtitles::BuildOptions& options);

}  // namespace scribe::api
