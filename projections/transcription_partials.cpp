#include "projections/transcription_partials.h"

#include <string>

#include "common/db.h"

namespace scribe::projections::partials {
namespace {

// Only while the transcription runs: a worker that has not yet noticed the
// deletion of its job writes nothing the deletion would have to find.
const db::Statement kInsert{
    "partials.insert",
    "insert into transcription_partials(transcription_id, seq, start_seconds, end_seconds, text) "
    "select $1, $2, $3, $4, $5 where exists "
    "(select 1 from transcriptions where id = $1 and status = 'processing') "
    "on conflict (transcription_id, seq) do update set start_seconds = excluded.start_seconds, "
    "end_seconds = excluded.end_seconds, text = excluded.text"};
const db::Statement kNotify{"partials.notify", "select pg_notify($1, $2)"};
const db::Statement kRead{"partials.read",
                          "select seq, start_seconds, end_seconds, text from transcription_partials "
                          "where transcription_id = $1 and seq > $2 order by seq"};
const db::Statement kClear{"partials.clear", "delete from transcription_partials where transcription_id = $1"};
const db::Statement kSweep{
    "partials.sweep",
    "with gone as (select distinct p.transcription_id from transcription_partials p "
    "left join transcriptions t on t.id = p.transcription_id "
    "where t.id is null or (t.status in ('completed', 'failed') "
    "and t.updated_at <= now() - make_interval(secs => $1)) limit 1000) "
    "delete from transcription_partials where transcription_id in (select transcription_id from gone)"};

}  // namespace

void record(pqxx::connection& conn, int64_t transcription_id, const std::vector<draft::Piece>& pieces) {
  pqxx::work txn(conn);
  bool wrote = false;
  for (const auto& p : pieces) {
    if (p.text.empty()) continue;
    wrote |= txn.exec_prepared(kInsert.name, transcription_id, p.index, p.start_seconds, p.end_seconds, p.text)
                 .affected_rows() > 0;
  }
  // Delivered at commit, so whoever it wakes reads the rows.
  if (wrote) txn.exec_prepared(kNotify.name, kChannel, std::to_string(transcription_id));
  txn.commit();
}

std::vector<draft::Piece> read_after(pqxx::transaction_base& txn, int64_t transcription_id, int after) {
  std::vector<draft::Piece> out;
  for (const auto& r : txn.exec_prepared(kRead.name, transcription_id, after))
    out.push_back({r[0].as<int>(), r[1].as<double>(), r[2].as<double>(), r[3].as<std::string>()});
  return out;
}

void clear(pqxx::transaction_base& txn, int64_t transcription_id) { txn.exec_prepared(kClear.name, transcription_id); }

int sweep(pqxx::connection& conn, int keep_seconds) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kSweep.name, keep_seconds);
  txn.commit();
  return static_cast<int>(r.affected_rows());
}

}  // namespace scribe::projections::partials
