#include "workers/worker.h"

#include "common/config.h"

#include <unistd.h>

#include <filesystem>

#include "commands/transcription_commands.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/error.h"
#include "common/http_client.h"
#include "common/log.h"
#include "common/object_store.h"
#include "domain/clip.h"
#include "domain/plans.h"
#include "domain/realtime.h"
#include "domain/transcript_artifact.h"
#include "enrichment/artifact_store.h"
#include "media/source_media.h"
#include "projections/transcription_partials.h"
#include "workers/heartbeat.h"

namespace scribe::workers {

// The stages a job runs through: media intake, then the speech engine.
using media::MediaProbe;
using speech::JobAborted;
using speech::JobFailure;
using speech::TranscribeRequest;
using speech::TranscribeResult;
namespace {

const db::Statement kJobSpec{
    "worker.job_spec",
    "select t.source, t.url, t.upload_id, t.language, t.original_filename, a.plan, t.pipeline_code "
    "from transcriptions t join accounts a on a.id = t.account_id where t.id = $1"};
const db::Statement kSegmentIds{"worker.segment_ids", "select nextval('segment_ids') from generate_series(1, $1::int)"};

struct JobSpec {
  std::string source;
  std::optional<std::string> url, upload_id, original_filename;
  std::string language;
  plans::Tier tier = plans::Tier::Free;
  std::string pipeline_code;
};

std::optional<std::string> opt(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<std::string>();
}

// Video-site and platform links keep the spec's video codes (private,
// members-only ...); anything else about fetching the source, a direct media
// URL that is gone included, is source_unavailable.
JobFailure fetch_failure(const std::string& source, const Error& e) {
  const std::string& c = e.code();
  if (source != "external_url" && c.rfind("video_", 0) == 0) return JobFailure(c, e.message());
  return JobFailure("source_unavailable", "the source could not be fetched: " + e.message());
}

transcript::TranscriptArtifact make_artifact(pqxx::connection& conn, const TranscribeResult& r,
                                             const std::string& engine) {
  transcript::TranscriptArtifact a;
  a.duration_seconds = r.duration_seconds;
  a.language = r.language;
  a.engine = engine;
  a.speakers = r.speakers;
  std::vector<int64_t> ids;
  {
    pqxx::work txn(conn);
    for (const auto& row : txn.exec_prepared(kSegmentIds.name, static_cast<int>(r.sentences.size())))
      ids.push_back(row[0].as<int64_t>());
    txn.commit();
  }
  for (size_t i = 0; i < r.sentences.size(); ++i) {
    const auto& s = r.sentences[i];
    transcript::ArtifactSegment seg;
    seg.id = ids.at(i);
    seg.start = s.start;
    seg.end = s.end;
    if (s.speaker) seg.speaker = transcript::speaker_label(*s.speaker);
    seg.text = s.text;
    for (const auto& w : s.words) seg.words.push_back({w.text, w.start, w.end, w.confidence, w.punctuation});
    a.segments.push_back(std::move(seg));
  }
  for (const auto& x : r.alternates) a.alternates.push_back({x.word, x.start, x.end, x.posterior});
  return a;
}

// Clips of a link source need its audio after the fetched file is gone: the
// audio track is kept (not re-encoded) with the transcription's objects, so it
// goes when the transcription is deleted. Uploads are kept whole already. A
// failure here costs only the clips (409 not_ready), not the transcript.
void keep_audio(int64_t transcription_id, const std::string& fetched, const Json& log_fields) {
  const std::string out = fetched + ".audio.mka";
  try {
    media::extract_audio(fetched, out);
    object_store().put_file(clip::source_audio_key(transcription_id), out);
  } catch (const std::exception& e) {
    Json fields = log_fields;
    fields["error"] = e.what();
    log::warn("the source's audio could not be kept; clips of it will be refused", fields);
  }
  std::error_code ec;
  std::filesystem::remove(out, ec);
}

}  // namespace

Worker::Worker(std::string database_url, eventstore::EventStore store, Engines engines,
               std::shared_ptr<const MediaProbe> media, WorkerOptions options)
    : url_(std::move(database_url)),
      store_(std::move(store)),
      engines_(std::move(engines)),
      media_(std::move(media)),
      options_(std::move(options)),
      owner_(process_owner()),
      loop_(std::make_unique<ClaimLoop>(url_, owner_, "job", options_.poll)),
      stopping_(loop_->stopping()) {
  if (!options_.chat.base_url.empty()) {
    // The operator's own model server, usually private or on loopback: this
    // client talks only to that configured URL, so private addresses are
    // allowed for it alone (link-local and reserved ones stay refused).
    UrlPolicy policy;
    policy.allow_private = true;
    chat_client_ = std::make_shared<const HttpClient>(policy);
  }
}

Worker::~Worker() { stop(); }

void Worker::start() {
  std::filesystem::create_directories(options_.work_dir);
  // A new job is an appended event, so a job waits for a slot at most
  // ClaimLoop::kMinClaimGap, not half the poll interval (the time-to-result
  // benchmark measured 0.87 s of pickup at the 1 s poll).
  loop_->start(options_.slots, [this](pqxx::connection& conn, const std::string& slot_owner) -> ClaimLoop::Work {
    auto job = claim_job(conn, slot_owner, options_.lease);
    if (!job) return {};
    return [this, &conn, job = *job, slot_owner] {
      try {
        process(conn, job, slot_owner);
      } catch (const std::exception& e) {
        log::error("job interrupted", {{"transcription_id", job.transcription_id}, {"error", e.what()}});
        throw;
      }
    };
  });
  log::info("pipeline workers started", {{"owner", owner_}, {"slots", options_.slots}});
}

void Worker::stop() { loop_->stop(); }

// Sections, chapters, acts, system Q&A and the posting-chapters cache of the
// transcript (stage `enriching`, entered by the transcriber). A failure here
// never fails the transcription: it completes without them, reads report the
// artifact missing, and POST .../timestamps/regenerate computes them again.
Json Worker::enrich(const ClaimedJob& job, const transcript::TranscriptArtifact& artifact,
                    const Json& log_fields) const {
  try {
    const auto started = std::chrono::steady_clock::now();
    auto enriched = enrichment::enrich_transcript(artifact);
    if (chat_client_) {
      // The chat endpoint only rewrites words; what it cannot do leaves the
      // extractive titles, summaries and answers in place.
      try {
        enrichment::refine_with_chat(enriched, artifact, options_.chat, *chat_client_);
      } catch (const std::exception& e) {
        Json fields = log_fields;
        fields["error"] = e.what();
        log::warn("chat enrichment failed; the extractive enrichment is kept", fields);
      }
    }
    Json ref = enrichment::store_artifact(job.transcription_id, job.attempt, enriched);
    Json fields = log_fields;
    fields["enrichment_ms"] =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    log::info("job enriched", fields);
    return ref;
  } catch (const std::exception& e) {
    Json fields = log_fields;
    fields["error"] = e.what();
    log::error("enrichment failed; the transcription completes without it", fields);
    return {{"error", "enrichment_failed"}};
  }
}

void Worker::process(pqxx::connection& conn, const ClaimedJob& job, const std::string& slot_owner) {
  commands::Meta meta{"worker:" + slot_owner, ""};
  Json log_fields = {{"transcription_id", job.transcription_id}, {"attempt", job.attempt}, {"claims", job.claims}};
  if (job.claims > kMaxClaims) {
    commands::fail_attempt(
        store_, conn, job.transcription_id, job.attempt, "processing_interrupted",
        "processing was interrupted " + std::to_string(job.claims - 1) + " times; retry the transcription", meta);
    forget_lease(conn, job.transcription_id);
    log::warn("job failed after repeated interruptions", log_fields);
    return;
  }
  log::info("job started", log_fields);

  // Losing the lease (the job was reclaimed, retried or deleted) cancels the work.
  std::unique_ptr<pqxx::connection> hb;
  Heartbeat heartbeat(
      [&] {
        if (!hb || !hb->is_open()) hb = db::open_connection(url_);
        return renew_lease(*hb, job, slot_owner, options_.lease);
      },
      options_.lease, stopping_);
  const std::atomic<bool>& cancelled = heartbeat.cancelled_flag();

  JobSpec spec;
  {
    pqxx::read_transaction txn(conn);
    auto r = txn.exec_prepared(kJobSpec.name, job.transcription_id);
    if (r.empty()) {  // deleted meanwhile
      forget_lease(conn, job.transcription_id);
      return;
    }
    spec = {r[0][0].as<std::string>(),
            opt(r[0][1]),
            opt(r[0][2]),
            opt(r[0][4]),
            r[0][3].as<std::string>(),
            plans::parse(r[0][5].as<std::string>()).value_or(plans::Tier::Free),
            r[0][6].as<std::string>()};
  }
  auto on_stage = [&](const std::string& stage) {
    return !cancelled && commands::record_stage(store_, conn, job.transcription_id, job.attempt, stage, meta);
  };

  std::string downloaded;
  auto cleanup = [&] {
    if (!downloaded.empty()) std::filesystem::remove(downloaded);
  };
  try {
    std::string media_path;
    std::optional<std::string> fallback_title;
    if (spec.source == "upload") {
      auto path = spec.upload_id ? object_store().local_path("uploads/" + *spec.upload_id) : std::nullopt;
      if (!path) throw JobFailure("source_unavailable", "the uploaded file is no longer available");
      media_path = *path;
      fallback_title = spec.original_filename;
    } else if (spec.source == realtime::kSource) {
      // A realtime session's recording, joined from its persisted pieces when
      // the session ended and kept as the transcription's audio (clips read it
      // there too); the session's hold paid for it (transcription::State::prepaid).
      auto path = object_store().local_path(clip::source_audio_key(job.transcription_id));
      if (!path) throw JobFailure("source_unavailable", "the realtime session's recording is no longer available");
      media_path = *path;
    } else {
      if (!on_stage("downloading")) throw JobAborted();
      try {
        auto fetched = media_->fetch(spec.source, spec.url.value_or(""));
        downloaded = media_path = fetched.local_path;
        fallback_title = fetched.title;
      } catch (const Error& e) {
        throw fetch_failure(spec.source, e);
      }
    }
    auto engine = engines_.find(spec.pipeline_code);
    if (engine == engines_.end())
      throw JobFailure("internal_error", "pipeline " + spec.pipeline_code + " is not configured on this worker");
    TranscribeRequest req{media_path, spec.language, double(plans::limits_of(spec.tier).max_file_minutes) * 60.0,
                          options_.work_dir};
    // What is charged follows what is transcribed: the hold is made to cover
    // the measured length before recognition starts (a refusal has already
    // failed the attempt and released its hold).
    req.on_measured = [&](double seconds) {
      if (cancelled) return false;
      auto m = commands::measure_attempt(store_, conn, job.transcription_id, job.attempt, seconds, meta);
      if (m == commands::Measurement::Refused) log::info("job refused once measured", log_fields);
      return m == commands::Measurement::Go;
    };
    // The text of each piece of speech as it is recognized, in order, for
    // the streams waiting for this transcription in any process. Only a
    // draft: failing to record it costs nothing else.
    req.on_pieces = [&](const std::vector<draft::Piece>& pieces) {
      if (cancelled) return;
      try {
        projections::partials::record(conn, job.transcription_id, pieces);
      } catch (const std::exception& e) {
        Json fields = log_fields;
        fields["error"] = e.what();
        log::warn("could not record the draft text", fields);
      }
    };
    auto result = transcribe(*engine->second, req, on_stage, cancelled);
    if (!downloaded.empty() && !cancelled) keep_audio(job.transcription_id, downloaded, log_fields);
    cleanup();
    downloaded.clear();

    auto artifact = make_artifact(conn, result, spec.pipeline_code);
    const std::string bytes = transcript::to_json(artifact).dump();
    const std::string digest = crypto::sha256_hex(bytes);
    const std::string key = transcript::artifact_key(job.transcription_id, job.attempt, digest);
    object_store().put(key, bytes);
    size_t words = 0;
    for (const auto& s : artifact.segments) words += s.words.size();
    commands::Completion done_info;
    done_info.duration_seconds = result.duration_seconds;
    done_info.detected_language = result.language;
    done_info.title = result.title ? result.title : fallback_title;
    done_info.artifacts = {{"transcript",
                            {{"key", key},
                             {"sha256", digest},
                             {"segments", artifact.segments.size()},
                             {"words", words},
                             {"speakers", artifact.speakers}}}};
    done_info.artifacts["enrichment"] = enrich(job, artifact, log_fields);
    if (cancelled) throw JobAborted();
    bool recorded = commands::complete_attempt(store_, conn, job.transcription_id, job.attempt, done_info, meta);
    forget_lease(conn, job.transcription_id);
    log_fields["segments"] = artifact.segments.size();
    log_fields["duration_seconds"] = result.duration_seconds;
    log::info(recorded ? "job completed" : "job finished but was no longer current", log_fields);
  } catch (const JobFailure& f) {
    cleanup();
    if (cancelled) return;
    commands::fail_attempt(store_, conn, job.transcription_id, job.attempt, f.code(), f.what(), meta);
    forget_lease(conn, job.transcription_id);
    log_fields["error"] = f.code();
    log::info("job failed", log_fields);
  } catch (const JobAborted&) {
    cleanup();
    if (stopping_) {
      release_job(conn, job, slot_owner);
    } else {
      forget_lease(conn, job.transcription_id);  // the job is gone (retried, deleted, finished elsewhere)
    }
    log::info("job aborted", log_fields);
  } catch (const pqxx::failure&) {
    cleanup();
    throw;
  } catch (const std::exception& e) {
    cleanup();
    if (cancelled) return;
    commands::fail_attempt(store_, conn, job.transcription_id, job.attempt, "internal_error",
                           std::string("the speech pipeline failed: ") + e.what(), meta);
    forget_lease(conn, job.transcription_id);
    log_fields["error"] = e.what();
    log::error("job failed with an internal error", log_fields);
  }
}

}  // namespace scribe::workers
