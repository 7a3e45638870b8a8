#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "eventstore/event_store.h"
#include "media/media_probe.h"
#include "workers/claim_loop.h"
#include "workers/clip_queue.h"
#include "workers/rendition_worker.h"
#include "workers/worker.h"

// Clip renders: threads that claim queued clips (workers/clip_queue.h),
// gather the words of the range and the stored media, render with FFmpeg
// (media/clip_render.h), store the files and record the outcome
// (commands/clip_commands.h), which settles or releases the clip's hold.
// They run beside the transcription workers, in `scribe serve` and in
// `scribe worker` processes, with the media renditions' worker
// (workers/rendition_worker.h), which they start and stop.
namespace scribe::workers {

class ClipWorker {
 public:
  // Shares the transcription workers' options: lease, poll, work_dir,
  // clip_slots and clip_render_threads.
  ClipWorker(std::string database_url, eventstore::EventStore store, std::shared_ptr<const media::MediaProbe> media,
             WorkerOptions options);
  ~ClipWorker();
  void start();
  // Stops claiming; waits for a render in progress (handed back to the
  // queue when it is cut short).
  void stop();
  // Stops claiming at once, without waiting (shutdown stops every consumer
  // first, then waits for them).
  void request_stop() {
    loop_->request_stop();
    renditions_.request_stop();
  }

 private:
  void process(pqxx::connection& conn, const ClaimedClip& claimed, const std::string& slot_owner);

  std::string url_;
  eventstore::EventStore store_;
  std::shared_ptr<const media::MediaProbe> media_;
  WorkerOptions options_;
  std::string owner_;
  std::unique_ptr<ClaimLoop> loop_;
  const std::atomic<bool>& stopping_;  // loop_'s
  RenditionWorker renditions_;
};

}  // namespace scribe::workers
