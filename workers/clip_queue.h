#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

// The render queue seen from the workers: the clips still queued (the clips
// read model, written inline when a clip is requested) and who renders them
// (`clip_leases`). Claimed like transcription jobs (workers/job_queue.h):
// FOR UPDATE SKIP LOCKED and a lease kept alive by heartbeats, so a worker
// that dies mid-render leaves its clip to be claimed again once the lease
// runs out.
namespace scribe::workers {

struct ClaimedClip {
  int64_t clip_id = 0;
  int claims = 0;  // how many times this clip has been claimed, this one included
};

// Claims the oldest queued clip nobody holds a live lease on.
std::optional<ClaimedClip> claim_clip(pqxx::connection& conn, const std::string& owner, std::chrono::seconds lease);
// Extends the lease; false when this owner no longer holds it (reclaimed, or
// the clip is no longer queued).
bool renew_clip_lease(pqxx::connection& conn, int64_t clip_id, const std::string& owner, std::chrono::seconds lease);
// Hands the clip back (graceful shutdown mid-render).
void release_clip(pqxx::connection& conn, int64_t clip_id, const std::string& owner);
// Drops the lease once the outcome is recorded.
void forget_clip_lease(pqxx::connection& conn, int64_t clip_id);

}  // namespace scribe::workers
