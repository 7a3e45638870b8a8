#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "workers/claim_loop.h"
#include "workers/media_renditions.h"
#include "workers/worker.h"

// Browser-playable renditions of stored media the player cannot play as it
// is (domain/media_playback.h): a thread that claims queued renditions
// (workers/media_renditions.h), transcodes with FFmpeg
// (media::make_rendition), stores the file under the transcription's prefix
// and records it ready (or failed). GET .../media queues them; the clip
// workers own this one, so it runs wherever clips render, never on a request
// thread.
namespace scribe::workers {

class RenditionWorker {
 public:
  // Uses lease, poll, work_dir and clip_render_threads of the options.
  RenditionWorker(std::string database_url, WorkerOptions options);
  ~RenditionWorker();
  void start();
  void stop();
  void request_stop() { loop_->request_stop(); }

 private:
  void process(pqxx::connection& conn, const renditions::Row& row, const std::string& slot_owner);

  std::string url_;
  WorkerOptions options_;
  std::unique_ptr<ClaimLoop> loop_;
  const std::atomic<bool>& stopping_;  // loop_'s
  std::atomic<int64_t> last_sweep_{0};
};

}  // namespace scribe::workers
