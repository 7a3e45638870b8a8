#include "workers/media_renditions.h"

#include "common/db.h"

namespace scribe::workers::renditions {
namespace {

const db::Statement kLoad{"renditions.load",
                          "select transcription_id, source, state, kind, content_type, duration_seconds, error, claims "
                          "from media_renditions where transcription_id = $1 and source = $2"};
// The NOTIFY wakes the claim loops (workers/claim_loop.h listens on the
// event store's channel); it is delivered at commit.
const db::Statement kDecide{
    "renditions.decide",
    "with ins as (insert into media_renditions(transcription_id, source, state, kind, content_type, "
    "duration_seconds) values ($1, $2, $3, $4, $5, $6) on conflict do nothing returning state) "
    "select pg_notify('scribe_events', '') from ins where state = 'queued'"};
const db::Statement kForget{"renditions.forget",
                            "delete from media_renditions where transcription_id = $1 and source = $2"};
// Only renditions of transcriptions that still exist are claimed.
const db::Statement kClaim{
    "renditions.claim",
    "update media_renditions m set owner = $1, lease_until = now() + make_interval(secs => $2), "
    "claims = m.claims + 1, updated_at = now() from (select r.transcription_id, r.source from media_renditions r "
    "join transcriptions t on t.id = r.transcription_id where r.state = 'queued' and "
    "(r.lease_until is null or r.lease_until < now()) order by r.updated_at for update of r skip locked limit 1) c "
    "where m.transcription_id = c.transcription_id and m.source = c.source "
    "returning m.transcription_id, m.source, m.state, m.kind, m.content_type, m.duration_seconds, m.error, m.claims"};
const db::Statement kRenew{"renditions.renew",
                           "update media_renditions set lease_until = now() + make_interval(secs => $4) "
                           "where transcription_id = $1 and source = $2 and owner = $3 and state = 'queued'"};
const db::Statement kRelease{"renditions.release",
                             "update media_renditions set lease_until = null, owner = null, "
                             "claims = greatest(claims - 1, 0) where transcription_id = $1 and source = $2 "
                             "and owner = $3 and state = 'queued'"};
const db::Statement kFinish{"renditions.finish",
                            "update media_renditions set state = $4, content_type = $5, error = $6, owner = null, "
                            "lease_until = null, updated_at = now() where transcription_id = $1 and source = $2 "
                            "and owner = $3 and state = 'queued'"};
const db::Statement kSweep{"renditions.sweep",
                           "delete from media_renditions r where not exists "
                           "(select 1 from transcriptions t where t.id = r.transcription_id)"};

Row row_of(const pqxx::row& r) {
  Row out;
  out.transcription_id = r[0].as<int64_t>();
  out.source = r[1].as<std::string>();
  out.state = r[2].as<std::string>();
  out.kind = r[3].as<std::string>();
  out.content_type = r[4].as<std::string>();
  if (!r[5].is_null()) out.duration_seconds = r[5].as<double>();
  if (!r[6].is_null()) out.error = r[6].as<std::string>();
  out.claims = r[7].as<int>();
  return out;
}

}  // namespace

std::optional<Row> load(pqxx::connection& conn, int64_t transcription_id, const std::string& source) {
  pqxx::read_transaction txn(conn);
  auto r = txn.exec_prepared(kLoad.name, transcription_id, source);
  if (r.empty()) return std::nullopt;
  return row_of(r[0]);
}

void decide(pqxx::connection& conn, const Row& row) {
  pqxx::work txn(conn);
  txn.exec_prepared(kDecide.name, row.transcription_id, row.source, row.state, row.kind, row.content_type,
                    row.duration_seconds);
  txn.commit();
}

void forget(pqxx::connection& conn, int64_t transcription_id, const std::string& source) {
  pqxx::work txn(conn);
  txn.exec_prepared(kForget.name, transcription_id, source);
  txn.commit();
}

std::optional<Row> claim(pqxx::connection& conn, const std::string& owner, std::chrono::seconds lease) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kClaim.name, owner, static_cast<double>(lease.count()));
  txn.commit();
  if (r.empty()) return std::nullopt;
  return row_of(r[0]);
}

bool renew(pqxx::connection& conn, int64_t transcription_id, const std::string& source, const std::string& owner,
           std::chrono::seconds lease) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kRenew.name, transcription_id, source, owner, static_cast<double>(lease.count()));
  txn.commit();
  return r.affected_rows() == 1;
}

void release(pqxx::connection& conn, int64_t transcription_id, const std::string& source, const std::string& owner) {
  pqxx::work txn(conn);
  txn.exec_prepared(kRelease.name, transcription_id, source, owner);
  txn.commit();
}

bool finish(pqxx::connection& conn, int64_t transcription_id, const std::string& source, const std::string& owner,
            const std::string& state, const std::string& content_type, const std::optional<std::string>& error) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kFinish.name, transcription_id, source, owner, state, content_type, error);
  txn.commit();
  return r.affected_rows() == 1;
}

int sweep_deleted(pqxx::connection& conn) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kSweep.name);
  txn.commit();
  return static_cast<int>(r.affected_rows());
}

}  // namespace scribe::workers::renditions
