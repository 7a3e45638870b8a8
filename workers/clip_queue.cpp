#include "workers/clip_queue.h"

#include "common/db.h"

namespace scribe::workers {
namespace {

const db::Statement kCandidates{"clip_queue.candidates",
                                "select c.id from clips c left join clip_leases l on l.clip_id = c.id "
                                "where c.status = 'queued' and (l.clip_id is null or l.expires_at < now()) "
                                "order by c.created_at, c.id for update of c skip locked limit 4"};
// The candidate query read the leases in its snapshot; the conflict clause
// reads the committed row, so a lease taken meanwhile by another worker is
// seen here and the candidate skipped.
const db::Statement kTake{
    "clip_queue.take",
    "insert into clip_leases(clip_id, owner, expires_at, claims, claimed_at) "
    "values ($1, $2, now() + make_interval(secs => $3), 1, now()) "
    "on conflict (clip_id) do update set owner = excluded.owner, expires_at = excluded.expires_at, "
    "claims = clip_leases.claims + 1, claimed_at = now() "
    "where clip_leases.expires_at < now() returning claims"};
const db::Statement kRenew{"clip_queue.renew",
                           "update clip_leases set expires_at = now() + make_interval(secs => $3) "
                           "where clip_id = $1 and owner = $2 and exists "
                           "(select 1 from clips c where c.id = $1 and c.status = 'queued')"};
// Handing a clip back on shutdown is not an interruption: its claim is not counted.
const db::Statement kRelease{"clip_queue.release",
                             "update clip_leases set expires_at = now() - interval '1 second', "
                             "claims = greatest(claims - 1, 0) where clip_id = $1 and owner = $2"};
const db::Statement kForget{"clip_queue.forget", "delete from clip_leases where clip_id = $1"};

}  // namespace

std::optional<ClaimedClip> claim_clip(pqxx::connection& conn, const std::string& owner, std::chrono::seconds lease) {
  pqxx::work txn(conn);
  for (const auto& row : txn.exec_prepared(kCandidates.name)) {
    const int64_t id = row[0].as<int64_t>();
    auto taken = txn.exec_prepared(kTake.name, id, owner, static_cast<double>(lease.count()));
    if (taken.empty()) continue;
    ClaimedClip c{id, taken[0][0].as<int>()};
    txn.commit();
    return c;
  }
  txn.commit();
  return std::nullopt;
}

bool renew_clip_lease(pqxx::connection& conn, int64_t clip_id, const std::string& owner, std::chrono::seconds lease) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kRenew.name, clip_id, owner, static_cast<double>(lease.count()));
  txn.commit();
  return r.affected_rows() == 1;
}

void release_clip(pqxx::connection& conn, int64_t clip_id, const std::string& owner) {
  pqxx::work txn(conn);
  txn.exec_prepared(kRelease.name, clip_id, owner);
  txn.commit();
}

void forget_clip_lease(pqxx::connection& conn, int64_t clip_id) {
  pqxx::work txn(conn);
  txn.exec_prepared(kForget.name, clip_id);
  txn.commit();
}

}  // namespace scribe::workers
