#include "workers/job_queue.h"

#include "common/db.h"
#include "domain/plans.h"

namespace scribe::workers {
namespace {

// Candidates are job rows locked one by one (SKIP LOCKED) so that workers
// never wait on each other's candidates; a handful at a time lets a worker
// pass over accounts at their cap without another round trip. A job is
// claimable when nobody holds a live lease on it.
const db::Statement kCandidates{
    "jobs.candidates",
    "select j.transcription_id, j.attempt, j.account_id, a.plan from jobs j "
    "join accounts a on a.id = j.account_id "
    "left join job_leases l on l.transcription_id = j.transcription_id and l.attempt = j.attempt "
    "where l.transcription_id is null or l.expires_at < now() "
    "order by j.enqueued_at, j.transcription_id for update of j skip locked limit 8"};
// Serializes the cap check per account: two workers holding different jobs of
// one account would otherwise both count the other's job as not running.
const db::Statement kLockAccount{"jobs.lock_account",
                                 "select pg_advisory_xact_lock(hashtextextended('jobs:account:' || $1::text, 0))"};
const db::Statement kRunning{"jobs.running",
                             "select count(*) from job_leases l join jobs j on j.transcription_id = l.transcription_id "
                             "and j.attempt = l.attempt where l.account_id = $1 and l.expires_at >= now()"};
const db::Statement kTake{"jobs.take",
                          "insert into job_leases(transcription_id, attempt, account_id, owner, expires_at, claims, "
                          "claimed_at) values ($1, $2, $3, $4, now() + make_interval(secs => $5), 1, now()) "
                          "on conflict (transcription_id, attempt) do update set owner = excluded.owner, "
                          "expires_at = excluded.expires_at, claims = job_leases.claims + 1, claimed_at = now() "
                          "where job_leases.expires_at < now() returning claims"};
const db::Statement kRenew{"jobs.renew",
                           "update job_leases set expires_at = now() + make_interval(secs => $4) "
                           "where transcription_id = $1 and attempt = $2 and owner = $3 and exists "
                           "(select 1 from jobs j where j.transcription_id = $1 and j.attempt = $2)"};
// A released job keeps its claim count less this claim: handing a job back
// on shutdown is not an interruption.
const db::Statement kRelease{"jobs.release",
                             "update job_leases set expires_at = now() - interval '1 second', "
                             "claims = greatest(claims - 1, 0) "
                             "where transcription_id = $1 and attempt = $2 and owner = $3"};
// Leases of jobs that are gone (finished, retried, deleted).
const db::Statement kForget{"jobs.forget_lease",
                            "delete from job_leases l where l.transcription_id = $1 and not exists "
                            "(select 1 from jobs j where j.transcription_id = l.transcription_id "
                            "and j.attempt = l.attempt)"};

}  // namespace

std::optional<ClaimedJob> claim_job(pqxx::connection& conn, const std::string& owner, std::chrono::seconds lease) {
  pqxx::work txn(conn);
  auto rows = txn.exec_prepared(kCandidates.name);
  for (const auto& row : rows) {
    ClaimedJob job{row[0].as<int64_t>(), row[1].as<int>(), row[2].as<int64_t>(), 0};
    auto tier = plans::parse(row[3].as<std::string>()).value_or(plans::Tier::Free);
    if (auto cap = plans::limits_of(tier).max_concurrent_jobs) {
      txn.exec_prepared(kLockAccount.name, job.account_id);
      if (txn.exec_prepared1(kRunning.name, job.account_id)[0].as<int64_t>() >= *cap) continue;
    }
    // The candidate query read the leases in its snapshot: a worker that
    // claimed this job and committed since then is only seen here, where the
    // conflicting lease row is read as committed, so a live lease means skip.
    auto taken = txn.exec_prepared(kTake.name, job.transcription_id, job.attempt, job.account_id, owner,
                                   static_cast<double>(lease.count()));
    if (taken.empty()) continue;
    job.claims = taken[0][0].as<int>();
    txn.commit();
    return job;
  }
  txn.commit();
  return std::nullopt;
}

bool renew_lease(pqxx::connection& conn, const ClaimedJob& job, const std::string& owner, std::chrono::seconds lease) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kRenew.name, job.transcription_id, job.attempt, owner, static_cast<double>(lease.count()));
  txn.commit();
  return r.affected_rows() == 1;
}

void release_job(pqxx::connection& conn, const ClaimedJob& job, const std::string& owner) {
  pqxx::work txn(conn);
  txn.exec_prepared(kRelease.name, job.transcription_id, job.attempt, owner);
  txn.commit();
}

}  // namespace scribe::workers

namespace scribe::workers {

void forget_lease(pqxx::connection& conn, int64_t transcription_id) {
  pqxx::work txn(conn);
  txn.exec_prepared(kForget.name, transcription_id);
  txn.commit();
}

}  // namespace scribe::workers
