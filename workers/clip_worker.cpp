#include "workers/clip_worker.h"

#include <filesystem>

#include "commands/clip_commands.h"
#include "common/db.h"
#include "common/error.h"
#include "common/log.h"
#include "common/object_store.h"
#include "domain/clip.h"
#include "domain/clip_captions.h"
#include "media/clip_render.h"
#include "media/source_media.h"
#include "workers/heartbeat.h"

namespace scribe::workers {
namespace {

namespace fs = std::filesystem;

// A clip whose renders died this many times is failed rather than claimed again.
constexpr int kMaxClipClaims = 3;

const db::Statement kClipSpec{"clip_worker.spec",
                              "select c.view::text, c.transcription_id, t.source, t.upload_id, t.url, "
                              "c.video_download from clips c join transcriptions t on t.id = c.transcription_id "
                              "where c.id = $1 and c.status = 'queued'"};
// The words whose midpoint is in the range (domain/clip_captions.h), as
// displayed: text and punctuation.
const db::Statement kWords{"clip_worker.words",
                           "select text || coalesce(punctuation, ''), start_ms, end_ms from words "
                           "where transcription_id = $1 and start_ms + end_ms >= $2::bigint "
                           "and start_ms + end_ms <= $3::bigint order by word_index"};

// A render that cannot succeed, whatever worker tries: the clip fails with
// this code and its hold is released.
struct RenderFailure : std::runtime_error {
  RenderFailure(std::string code, const std::string& message) : std::runtime_error(message), code(std::move(code)) {}
  std::string code;
};

struct ClipSpec {
  Json view;
  int64_t transcription_id = 0;
  std::string source;
  std::optional<std::string> upload_id, url;
};

std::optional<ClipSpec> load_spec(pqxx::connection& conn, int64_t clip_id) {
  pqxx::read_transaction txn(conn);
  auto r = txn.exec_prepared(kClipSpec.name, clip_id);
  if (r.empty()) return std::nullopt;
  ClipSpec s;
  s.view = Json::parse(r[0][0].c_str());
  s.transcription_id = r[0][1].as<int64_t>();
  s.source = r[0][2].as<std::string>();
  if (!r[0][3].is_null()) s.upload_id = r[0][3].as<std::string>();
  if (!r[0][4].is_null()) s.url = r[0][4].as<std::string>();
  return s;
}

const db::Statement kTranscriptionExists{"clip_worker.transcription_exists",
                                         "select exists (select 1 from transcriptions where id = $1)"};

bool transcription_exists(pqxx::connection& conn, int64_t transcription_id) {
  pqxx::read_transaction txn(conn);
  return txn.exec_prepared1(kTranscriptionExists.name, transcription_id)[0].as<bool>();
}

std::vector<clips::ClipWord> load_words(pqxx::connection& conn, int64_t transcription_id, double start, double end) {
  pqxx::read_transaction txn(conn);
  std::vector<clips::ClipWord> words;
  for (const auto& row :
       txn.exec_prepared(kWords.name, transcription_id, static_cast<int64_t>(std::llround(start * 2000)),
                         static_cast<int64_t>(std::llround(end * 2000))))
    words.push_back({row[0].as<std::string>(), row[1].as<int64_t>() / 1000.0, row[2].as<int64_t>() / 1000.0});
  return words;
}

// The stored audio: the upload itself, or the audio the transcription kept of
// a fetched link (workers/worker.cpp).
std::string audio_of(const ClipSpec& s) {
  auto path =
      object_store().local_path(clip::audio_key(s.transcription_id, s.source == "upload" ? s.upload_id : std::nullopt));
  if (!path) throw RenderFailure("source_unavailable", "the transcription's audio is no longer stored");
  return *path;
}

// The source video: the original video added to an upload (POST .../video),
// else the upload's own file; or a link's video, downloaded once (the first
// video clip of the transcription) and kept with the transcription.
std::string video_of(const ClipSpec& s, const media::MediaProbe& media) {
  if (s.source == "upload") {
    if (auto added = object_store().local_path(clip::source_video_key(s.transcription_id))) return *added;
    if (auto path =
            s.upload_id ? object_store().local_path(clip::audio_key(s.transcription_id, s.upload_id)) : std::nullopt)
      return *path;
    throw RenderFailure("source_unavailable", "the uploaded file is no longer stored");
  }
  const std::string key = clip::source_video_key(s.transcription_id);
  if (auto path = object_store().local_path(key)) return *path;
  try {
    auto fetched = media.fetch(s.source, s.url.value_or(""));
    // Kept only when it has a picture: a site that serves audio and video
    // apart gives the fetch its audio, and that must not stand in for the
    // video of every later clip.
    if (!media::has_video_stream(fetched.local_path)) {
      std::error_code ec;
      fs::remove(fetched.local_path, ec);
      throw RenderFailure("video_unavailable", "the source's download has no video stream");
    }
    object_store().put_file(key, fetched.local_path);
  } catch (const Error& e) {
    throw RenderFailure("video_unavailable", "the source video could not be downloaded: " + e.message());
  }
  auto path = object_store().local_path(key);
  if (!path) throw RenderFailure("video_unavailable", "the source video could not be stored");
  return *path;
}

}  // namespace

ClipWorker::ClipWorker(std::string database_url, eventstore::EventStore store,
                       std::shared_ptr<const media::MediaProbe> media, WorkerOptions options)
    : url_(std::move(database_url)),
      store_(std::move(store)),
      media_(std::move(media)),
      options_(std::move(options)),
      owner_(process_owner() + ":clips"),
      loop_(std::make_unique<ClaimLoop>(url_, owner_, "clip", options_.poll)),
      stopping_(loop_->stopping()),
      renditions_(url_, options_) {}

ClipWorker::~ClipWorker() { stop(); }

void ClipWorker::start() {
  fs::create_directories(fs::path(options_.work_dir) / "clips");
  loop_->start(options_.clip_slots, [this](pqxx::connection& conn, const std::string& slot_owner) -> ClaimLoop::Work {
    auto claimed = claim_clip(conn, slot_owner, options_.lease);
    if (!claimed) return {};
    return [this, &conn, claimed = *claimed, slot_owner] {
      try {
        process(conn, claimed, slot_owner);
      } catch (const std::exception& e) {
        log::error("clip render interrupted", {{"clip_id", claimed.clip_id}, {"error", e.what()}});
        throw;
      }
    };
  });
  renditions_.start();
  log::info("clip workers started", {{"owner", owner_}, {"slots", options_.clip_slots}});
}

void ClipWorker::stop() {
  loop_->stop();
  renditions_.stop();
}

void ClipWorker::process(pqxx::connection& conn, const ClaimedClip& claimed, const std::string& slot_owner) {
  const int64_t id = claimed.clip_id;
  commands::Meta meta{"worker:" + slot_owner, ""};
  Json log_fields = {{"clip_id", id}, {"claims", claimed.claims}};
  if (claimed.claims > kMaxClipClaims) {
    commands::fail_clip(store_, conn, id, "processing_interrupted",
                        "the render was interrupted " + std::to_string(claimed.claims - 1) + " times", meta);
    forget_clip_lease(conn, id);
    log::warn("clip failed after repeated interruptions", log_fields);
    return;
  }
  std::unique_ptr<pqxx::connection> hb;
  Heartbeat heartbeat(
      [&] {
        if (!hb || !hb->is_open()) hb = db::open_connection(url_);
        return renew_clip_lease(*hb, id, slot_owner, options_.lease);
      },
      options_.lease, stopping_);
  auto spec = load_spec(conn, id);
  if (!spec) {
    // Finished elsewhere, or its transcription is gone. The deletion fails
    // the clips it finds queued; this only closes one it could not have
    // seen (a no-op when the clip is not queued any more).
    commands::fail_clip(store_, conn, id, "transcription_deleted", "the transcription was deleted", meta);
    forget_clip_lease(conn, id);
    return;
  }
  const fs::path dir = fs::path(options_.work_dir) / "clips" / (std::to_string(id) + "-" + slot_owner);
  std::error_code ec;
  bool rendered = false;
  try {
    const Json& v = spec->view;
    const double start = v.at("start_seconds").get<double>(), end = v.at("end_seconds").get<double>();
    const std::string output = v.at("output").get<std::string>();
    const auto aspect = clips::parse_aspect(v.at("aspect").get<std::string>()).value_or(clips::Aspect::Portrait);
    const auto position =
        clips::parse_position(v.at("caption_position").get<std::string>()).value_or(clips::Position::Lower);
    const auto words = load_words(conn, spec->transcription_id, start, end);
    const int per_line = v.value("words_per_line", clips::kDefaultWordsPerLine);
    log::info("clip render started", log_fields);

    media::RenderRequest req;
    req.clip_start = start;
    req.clip_end = end;
    req.output = media::parse_clip_output(output).value_or(media::ClipOutput::Audiogram);
    req.aspect = aspect;
    req.framing = media::parse_framing(v.value("framing", "blur")).value_or(media::Framing::Blur);
    req.caption_position = position;
    req.work_dir = dir.string();
    req.threads = options_.clip_render_threads;
    if (!v.at("title").is_null()) req.title = v.at("title").get<std::string>();
    if (req.output == media::ClipOutput::Video) {
      req.video_path = video_of(*spec, *media_);
      if (!media::has_video_stream(*req.video_path))
        throw RenderFailure("video_unavailable", "the source has no video stream");
    } else {
      req.audio_path = audio_of(*spec);
    }
    if (req.output != media::ClipOutput::Audio) {
      clips::CaptionOptions co;
      co.frame = clips::frame_size(aspect);
      co.style = clips::parse_style(v.at("style").get<std::string>()).value_or(clips::Style::Captions);
      co.position = position;
      co.words_per_line = per_line;
      co.highlight = clips::parse_color(v.value("highlight_color", "")).value_or(clips::kDefaultHighlight);
      co.title = req.title;
      req.ass_text = clips::render_ass(words, start, end, co);
    }
    // A lost lease or a shutdown stops FFmpeg at once rather than after the render.
    req.cancel = &heartbeat.cancelled_flag();
    if (heartbeat.cancelled()) throw speech::JobAborted();
    auto result = media::render_clip(req);
    if (result.cancelled || heartbeat.cancelled()) throw speech::JobAborted();
    if (!result.ok) throw RenderFailure("render_failed", "the render failed: " + result.error);

    clip::Rendered r;
    r.duration_seconds = result.duration_seconds;
    r.file_name = req.output == media::ClipOutput::Audio ? "clip.m4a" : "clip.mp4";
    r.content_type = result.content_type;
    r.bytes = static_cast<int64_t>(fs::file_size(result.output_path, ec));
    r.file_key = clip::file_key(spec->transcription_id, id, r.file_name);
    r.srt_key = clip::file_key(spec->transcription_id, id, "clip.srt");
    object_store().put(r.srt_key, clips::render_srt(words, start, end, per_line));
    object_store().put_file(r.file_key, result.output_path);
    rendered = true;
    const bool recorded = commands::complete_clip(store_, conn, id, r, meta);
    // Not recorded: finished elsewhere (the files are the same keys), or its
    // transcription was deleted meanwhile, whose objects must not come back.
    if (!recorded && !transcription_exists(conn, spec->transcription_id))
      object_store().remove_prefix(clip::file_key(spec->transcription_id, id, ""));
    forget_clip_lease(conn, id);
    log_fields["wall_seconds"] = result.wall_seconds;
    log_fields["cpu_seconds"] = result.cpu_seconds;
    log_fields["peak_rss_mib"] = result.peak_rss_mib;
    log::info(recorded ? "clip completed" : "clip rendered but no longer queued", log_fields);
  } catch (const RenderFailure& f) {
    commands::fail_clip(store_, conn, id, f.code, f.what(), meta);
    forget_clip_lease(conn, id);
    log_fields["error"] = f.code;
    log_fields["message"] = f.what();
    log::warn("clip failed", log_fields);
  } catch (const speech::JobAborted&) {
    if (stopping_) release_clip(conn, id, slot_owner);
    log::info("clip render aborted", log_fields);
  } catch (const pqxx::failure&) {
    fs::remove_all(dir, ec);
    throw;
  } catch (const std::exception& e) {
    // A render that is done but could not be recorded (the account too busy)
    // is not a failed clip: the lease runs out and it is rendered again.
    if (rendered) {
      fs::remove_all(dir, ec);
      throw;
    }
    commands::fail_clip(store_, conn, id, "internal_error", std::string("the render failed: ") + e.what(), meta);
    forget_clip_lease(conn, id);
    log_fields["error"] = e.what();
    log::error("clip failed with an internal error", log_fields);
  }
  fs::remove_all(dir, ec);
}

}  // namespace scribe::workers
