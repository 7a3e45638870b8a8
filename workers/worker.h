#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "eventstore/event_store.h"
#include "workers/claim_loop.h"
#include "workers/job_queue.h"
#include "media/media_probe.h"
#include "speech/transcriber.h"
#include "domain/transcript_artifact.h"
#include "enrichment/chat_adapter.h"

// Pipeline workers: threads that claim queued jobs (workers/job_queue.h),
// fetch the media, run the speech engine (speech/transcriber.h), store the
// transcript artifact and report the outcome as commands. They run inside
// `scribe serve` by default and in `scribe worker` processes; any number of
// them may share one database.
namespace scribe::workers {

struct WorkerOptions {
  int slots = 1;                         // SCRIBE_WORKER_SLOTS: jobs at once per process
  std::chrono::seconds lease{60};        // SCRIBE_WORKER_LEASE_SECONDS
  std::chrono::milliseconds poll{1000};  // SCRIBE_WORKER_POLL_MS: idle wait between claims
  std::string work_dir;                  // SCRIBE_WORK_DIR: fetched media go to <work_dir>/media
  // SCRIBE_CHAT_ENRICHMENT_*: an OpenAI-compatible chat endpoint that rewrites
  // enrichment's titles, summaries and answers; base_url empty: extractive only.
  enrichment::ChatOptions chat;
  // Clip renders (workers/clip_worker.h): SCRIBE_CLIP_SLOTS renders at once
  // per process, each FFmpeg with SCRIBE_CLIP_RENDER_THREADS threads (0: one
  // per core).
  int clip_slots = 1;
  int clip_render_threads = 0;
};

class Worker {
 public:
  // `engines` maps each pipeline code to its recognizer. Outcomes are
  // appended through `store`.
  using Engines = std::map<std::string, std::shared_ptr<speech::EnginePool>>;
  Worker(std::string database_url, eventstore::EventStore store, Engines engines,
         std::shared_ptr<const media::MediaProbe> media, WorkerOptions options);
  ~Worker();
  void start();
  // Stops claiming, aborts running jobs and hands them back to the queue.
  void stop();
  const std::string& owner() const { return owner_; }

 private:
  void process(pqxx::connection& conn, const ClaimedJob& job, const std::string& slot_owner);
  Json enrich(const ClaimedJob& job, const transcript::TranscriptArtifact& artifact, const Json& log_fields) const;

  std::string url_;
  eventstore::EventStore store_;
  Engines engines_;
  std::shared_ptr<const media::MediaProbe> media_;
  WorkerOptions options_;
  std::string owner_;
  std::shared_ptr<const HttpClient> chat_client_;  // set when options_.chat names an endpoint
  std::unique_ptr<ClaimLoop> loop_;
  const std::atomic<bool>& stopping_;  // loop_'s
};

}  // namespace scribe::workers
