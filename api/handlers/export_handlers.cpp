// GET /api/v1/transcriptions/{id}/transcript, .../subtitles and .../words:
// the raw exports and the word timings. Rows are read in one snapshot, the
// connection goes back to the pool, and the pure functions of
// domain/transcript_text.h and domain/subtitles.h render the body.
#include <cmath>

#include "api/handlers/handlers.h"
#include "api/enrichment_rows.h"
#include "api/export_rows.h"
#include "api/params.h"
#include "api/revisions/revision_rows.h"
#include "common/db.h"
#include "common/error.h"
#include "common/text.h"
#include "domain/limits.h"
#include "domain/subtitles.h"
#include "domain/transcript_revision.h"
#include "domain/transcript_text.h"
#include "domain/transcription.h"

namespace scribe::api {
namespace {

const db::Statement kMeta{"exports.meta",
                          "select status, title, language, detected_language from transcriptions "
                          "where id = $1 and account_id = $2"};
const db::Statement kWordsPage{
    "exports.words_page",
    "select text, start_ms, end_ms, segment_id, word_index, speaker, punctuation, confidence "
    "from words where transcription_id = $1 order by word_index offset $2 limit $3"};
// The recognizer's confidences of a transcription's words, in word order
// (the order load_segments_and_words gives them): the JSON subtitles' words
// carry them, the packed words do not.
const db::Statement kWordConfidences{"exports.word_confidences",
                                     "select confidence from words where transcription_id = $1 order by word_index"};
const db::Statement kWordsCount{"exports.words_count", "select count(*) from words where transcription_id = $1"};

struct Meta {
  std::string status;
  std::optional<std::string> title;
  std::string language;
};

std::optional<std::string> opt_text(const pqxx::field& f) {
  return f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str());
}

Meta load_meta(pqxx::transaction_base& txn, int64_t account_id, int64_t id) {
  auto res = txn.exec_prepared(kMeta.name, id, account_id);
  if (res.empty()) throw Error::not_found("transcription");
  const auto& r = res[0];
  return {r[0].c_str(), opt_text(r[1]), r[3].is_null() ? r[2].c_str() : r[3].c_str()};
}

void require_completed(const Meta& m) { transcription::require_completed(m.status); }

Response raw(std::string body, const std::string& content_type) {
  Response res;
  res.status = 200;
  res.content_type = content_type;
  res.body = std::move(body);
  return res;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : subtitles::presets()) names.emplace_back(p.name);
  return names;
}

}  // namespace

Response TranscriptHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  QueryParams q(ctx.req);
  const std::string format = q.one_of("format", {"txt", "md"}, "txt");
  transcript::TextOptions opts;
  opts.speaker_labels = q.boolean("speaker_labels", true);
  opts.timestamps = q.boolean("timestamps", true);
  const bool speaker_names = q.boolean("speaker_names", false);
  Meta meta;
  std::vector<transcript::Segment> segments;
  std::vector<transcript::Chapter> chapters;
  std::optional<int64_t> revision;
  {
    pqxx::read_transaction txn(ctx.db());
    meta = load_meta(txn, ctx.caller().account_id, id);
    require_completed(meta);
    // The latest revision, when a person has corrected the transcript, is
    // the transcript; the recognized one otherwise.
    if (auto latest = revisions::load_latest(txn, id)) {
      revision = latest->revision;
      segments = revision::as_segments(latest->cues);
      if (speaker_names) revision::apply_names(segments, latest->speaker_names);
    } else {
      segments = load_segments(txn, id);
    }
    // The md export lists the chapters; without readable enrichment it has none.
    if (format == "md")
      for (const auto& c : load_chapter_rows(txn, id, "chapter"))
        chapters.push_back({static_cast<int64_t>(c.start_seconds * 1000 + 0.5), c.title});
  }
  ctx.release_db();
  const bool has_title = meta.title && !trim(*meta.title).empty();
  std::string body = format == "md"
                         ? transcript::render_md(has_title ? *meta.title : "Transcription " + std::to_string(id),
                                                 chapters, segments, opts)
                         : transcript::render_txt(segments, opts);
  // A 200 is never empty: a completed transcription without text has lost its artifact.
  if (body.empty())
    throw Error("not_ready", "the transcription completed but no transcript text is stored",
                {{"reason", "artifact_missing"}, {"status", meta.status}});
  auto res = raw(std::move(body), format == "md" ? "text/markdown; charset=utf-8" : "text/plain; charset=utf-8");
  res.set_header("x-service-segment-count", std::to_string(segments.size()));
  if (revision) res.set_header("x-service-revision", std::to_string(*revision));
  res.set_header("Content-Disposition",
                 "attachment; filename=" + transcript::slug(has_title ? meta.title : std::nullopt, id) + "." + format);
  return res;
}

Response SubtitlesHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  QueryParams q(ctx.req);
  const std::string format = q.one_of("format", {"srt", "vtt", "vtt-karaoke", "json"}, "srt");
  const subtitles::Preset* preset =
      subtitles::find_preset(q.one_of("preset", preset_names(), subtitles::kDefaultPreset));
  const bool labels = q.boolean("speaker_labels", false);
  const std::string mode = q.one_of("mode", {"auto", "word", "sentence"}, "auto");
  const std::string source = q.one_of("source", {"auto", "generated", "materialized"}, "auto");
  const bool speaker_names = q.boolean("speaker_names", false);
  // The spec's precedence: edited cues only for source=materialized, or for
  // source=auto with the default mode and preset; anything explicit regenerates.
  const bool may_materialize =
      source == "materialized" ||
      (source == "auto" && mode == "auto" && std::string_view(preset->name) == subtitles::kDefaultPreset);
  Meta meta;
  TranscriptRows rows;
  std::optional<revisions::RevisionRow> edited;
  revision::SpeakerNames names;
  {
    pqxx::read_transaction txn(ctx.db());
    meta = load_meta(txn, ctx.caller().account_id, id);
    require_completed(meta);
    if (may_materialize) edited = revisions::load_latest(txn, id);
    if (source == "materialized" && !edited)
      throw Error("not_found", "this transcription has no edited cues (source=materialized): no revision is saved");
    if (mode == "sentence" && !edited) rows.segments = load_segments(txn, id);
    else rows = load_segments_and_words(txn, id);
    if (speaker_names) names = edited ? edited->speaker_names : revisions::latest_speaker_names(txn, id);
    if (rows.segments.empty() && !edited)
      throw Error("not_found", "the transcription completed without segments; no subtitles exist");
    if (format == "json" && !edited && !rows.words.empty()) {
      const auto c = txn.exec_prepared(kWordConfidences.name, id);
      if (c.size() == rows.words.size())
        for (std::size_t i = 0; i < c.size(); ++i)
          if (!c[i][0].is_null()) rows.words[i].confidence = c[i][0].as<double>();
    }
  }
  ctx.release_db();
  if (mode == "word" && rows.words.empty() && !edited)
    throw Error::invalid("mode", "mode=word needs word timestamps, and this transcription has none; use mode=sentence");
  SubtitlesFile file;
  if (edited) {
    // Edited cues keep their times; only the preset's line breaking applies.
    auto cues = revision::as_segments(edited->cues);
    auto words = revision::cue_words(cues, rows.segments, rows.words);
    revision::apply_names(cues, names);
    revision::apply_names(words, names);
    file = render_cues(cues, words, format, subtitles::BuildOptions{preset, labels});
    // The mode is reported, not honored (spec): the one asked for, sentence for auto.
    file.word_mode = mode == "word";
  } else {
    revision::apply_names(rows.segments, names);
    revision::apply_names(rows.words, names);
    file = render_subtitles(rows, format, subtitles::BuildOptions{preset, labels});
  }
  if (file.cue_count == 0) throw Error("not_found", "the transcription has no text to subtitle");
  Response res = raw(std::move(file.body), file.content_type);
  res.set_header("x-service-cue-count", std::to_string(file.cue_count));
  res.set_header("x-service-cue-source", edited ? "materialized" : "generated");
  if (edited) res.set_header("x-service-revision", std::to_string(edited->revision));
  res.set_header("x-service-cue-mode", file.word_mode ? "word" : "sentence");
  res.set_header("Content-Disposition", "inline; filename=" + transcript::slug(meta.title, id) + "-" +
                                            (file.word_mode ? std::string(preset->name) : "sentence") + "." +
                                            file.extension);
  return res;
}

Response WordsHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  QueryParams q(ctx.req);
  const int64_t offset = q.integer("offset", 0, 0, INT32_MAX);
  const int64_t limit = q.integer("limit", limits::kWordsLimitDefault, 1, limits::kWordsLimitMax);
  pqxx::read_transaction txn(ctx.db());
  const Meta meta = load_meta(txn, ctx.caller().account_id, id);
  const bool completed = meta.status == transcription::kCompleted;
  const int64_t total = completed ? txn.exec_prepared1(kWordsCount.name, id)[0].as<int64_t>() : 0;
  Json words = Json::array();
  if (total > 0) {
    for (const auto& r : txn.exec_prepared(kWordsPage.name, id, offset, limit)) {
      words.push_back(
          {{"text", r[0].c_str()},
           {"start_ms", r[1].as<int64_t>()},
           {"end_ms", r[2].as<int64_t>()},
           {"segment_id", r[3].as<int64_t>()},
           {"word_index", r[4].as<int64_t>()},
           {"speaker", r[5].is_null() ? Json(nullptr) : Json(r[5].c_str())},
           {"punctuation", r[6].is_null() ? Json(nullptr) : Json(r[6].c_str())},
           {"confidence", r[7].is_null() ? Json(nullptr) : Json(transcript::shown_confidence(r[7].as<double>()))}});
    }
  }
  const int64_t returned = static_cast<int64_t>(words.size());
  Json reason = completed ? (total > 0 ? Json(nullptr) : Json("no_word_timestamps")) : Json("not_completed");
  return Response::json(200, {{"id", id},
                              {"status", meta.status},
                              {"granularity", "word"},
                              {"available", total > 0},
                              {"reason", reason},
                              {"language", meta.language},
                              {"count", total},
                              {"offset", offset},
                              {"limit", limit},
                              {"has_more", offset + returned < total},
                              {"words", std::move(words)}});
}

}  // namespace scribe::api
