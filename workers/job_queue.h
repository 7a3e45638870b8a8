#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

// The work queue seen from the workers. `jobs` rows (written by the
// transcriptions projection) say which work exists; `job_leases` (written
// here) say who holds it: claim with FOR UPDATE SKIP LOCKED and a lease, keep
// the lease alive with heartbeats, and respect each plan's concurrent-job cap
// across every worker process.
namespace scribe::workers {

struct ClaimedJob {
  int64_t transcription_id = 0;
  int attempt = 0;
  int64_t account_id = 0;
  int claims = 0;  // how many times this attempt has been claimed, this one included
};

// A job whose workers died this many times is failed rather than claimed again.
inline constexpr int kMaxClaims = 3;

// Claims the oldest claimable job: queued, or running with an expired lease
// (its worker died). Skips accounts at their plan's concurrency cap. Returns
// nullopt when nothing is claimable now.
std::optional<ClaimedJob> claim_job(pqxx::connection& conn, const std::string& owner, std::chrono::seconds lease);

// Extends the lease; false when this owner no longer holds the job (it was
// reclaimed after the lease expired, finished elsewhere, retried or deleted).
bool renew_lease(pqxx::connection& conn, const ClaimedJob& job, const std::string& owner, std::chrono::seconds lease);

// Hands a job back to the queue (graceful shutdown mid-job).
void release_job(pqxx::connection& conn, const ClaimedJob& job, const std::string& owner);

// Drops the leases of a transcription's attempts that no longer have a job
// (called once the outcome is recorded).
void forget_lease(pqxx::connection& conn, int64_t transcription_id);

}  // namespace scribe::workers
