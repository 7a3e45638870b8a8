#include "api/export_rows.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "common/db.h"

namespace scribe::api {
namespace {

const db::Statement kSegments{"exports.segments",
                              "select id, start_ms, end_ms, speaker, text from segments "
                              "where transcription_id = $1 order by segment_index"};
// No `order by`: the rows are put in segment_index order here. Sorting 8,000
// rows that carry their packed words could make the server spill the sort to
// disk (work_mem), depending on the plan the statistics of the moment choose.
const db::Statement kSegmentsWithWords{"exports.segments_with_words",
                                       "select segment_index, id, start_ms, end_ms, speaker, text, packed_words "
                                       "from segments where transcription_id = $1"};

std::optional<std::string> opt_text(const pqxx::field& f) {
  return f.is_null() ? std::nullopt : std::optional<std::string>(std::string(f.c_str(), f.size()));
}

// A decimal integer of the packed form up to `stop`; advances `p` past the stop.
int64_t packed_int(const char*& p, const char* end, char stop) {
  int64_t v = 0;
  const auto [next, ec] = std::from_chars(p, end, v);
  if (ec != std::errc() || next == end || *next != stop) throw std::runtime_error("malformed packed_words");
  p = next + 1;
  return v;
}

}  // namespace

std::vector<transcript::Segment> load_segments(pqxx::transaction_base& txn, int64_t transcription_id) {
  std::vector<transcript::Segment> out;
  auto res = txn.exec_prepared(kSegments.name, transcription_id);
  out.reserve(res.size());
  for (const auto& r : res)
    out.push_back({r[0].as<int64_t>(), r[1].as<int64_t>(), r[2].as<int64_t>(), opt_text(r[3]),
                   std::string(r[4].c_str(), r[4].size())});
  return out;
}

void unpack_words(std::string_view packed, int64_t segment_id, const std::optional<std::string>& speaker,
                  std::vector<transcript::Word>& out) {
  const char* p = packed.data();
  const char* const end = p + packed.size();
  while (p < end) {
    transcript::Word w;
    w.start_ms = packed_int(p, end, ',');
    w.end_ms = packed_int(p, end, ',');
    const int64_t text_bytes = packed_int(p, end, ',');
    const int64_t punct_bytes = packed_int(p, end, ':');
    // Compared one at a time, so that no sum of two lengths can overflow.
    if (text_bytes < 0 || punct_bytes < -1 || text_bytes > end - p || punct_bytes > end - p - text_bytes)
      throw std::runtime_error("malformed packed_words");
    w.text.assign(p, static_cast<std::size_t>(text_bytes));
    p += text_bytes;
    if (punct_bytes >= 0) {
      w.punctuation.emplace(p, static_cast<std::size_t>(punct_bytes));
      p += punct_bytes;
    }
    w.speaker = speaker;
    w.segment_id = segment_id;
    out.push_back(std::move(w));
  }
}

TranscriptRows load_segments_and_words(pqxx::transaction_base& txn, int64_t transcription_id) {
  TranscriptRows out;
  auto res = txn.exec_prepared(kSegmentsWithWords.name, transcription_id);
  // Row numbers in segment_index order.
  std::vector<std::pair<int64_t, int>> order;
  order.reserve(res.size());
  std::size_t packed_bytes = 0;
  for (int i = 0; i < static_cast<int>(res.size()); ++i) {
    order.emplace_back(res[i][0].as<int64_t>(), i);
    packed_bytes += res[i][6].size();
  }
  std::sort(order.begin(), order.end());
  out.segments.reserve(res.size());
  // A packed word takes at least 10 bytes ("0,0,1,-1:a"); most take 20-30.
  out.words.reserve(packed_bytes / 16);
  for (const auto& [index, i] : order) {
    const auto r = res[i];
    out.segments.push_back({r[1].as<int64_t>(), r[2].as<int64_t>(), r[3].as<int64_t>(), opt_text(r[4]),
                            std::string(r[5].c_str(), r[5].size())});
    if (!r[6].is_null())
      unpack_words({r[6].c_str(), r[6].size()}, out.segments.back().id, out.segments.back().speaker, out.words);
  }
  return out;
}

namespace {

SubtitlesFile render_set(const subtitles::CueSet& cues, std::string_view format) {
  SubtitlesFile f;
  f.cue_count = cues.cues.size();
  f.word_mode = cues.mode == subtitles::Mode::Word;
  if (format == "vtt") {
    f.body = subtitles::render_vtt(cues);
    f.content_type = "text/vtt; charset=utf-8";
    f.extension = "vtt";
  } else if (format == "vtt-karaoke") {
    f.body = subtitles::render_vtt_karaoke(cues);
    f.content_type = "text/vtt; charset=utf-8";
    f.extension = "vtt";
  } else if (format == "json") {
    f.body = subtitles::render_json(cues);
    f.content_type = "application/json; charset=utf-8";
    f.extension = "json";
  } else {
    f.body = subtitles::render_srt(cues);
    f.content_type = "application/x-subrip; charset=utf-8";
    f.extension = "srt";
  }
  return f;
}

}  // namespace

SubtitlesFile render_subtitles(const TranscriptRows& rows, std::string_view format,
                               const subtitles::BuildOptions& options) {
  return render_set(rows.words.empty() ? subtitles::build_from_segments(rows.segments, options)
                                       : subtitles::build_from_words(rows.words, options),
                    format);
}

SubtitlesFile render_cues(const std::vector<transcript::Segment>& cues, const std::vector<transcript::Word>& words,
                          std::string_view format, const subtitles::BuildOptions& options) {
  return render_set(subtitles::build_from_cues(cues, words, options), format);
}

}  // namespace scribe::api
