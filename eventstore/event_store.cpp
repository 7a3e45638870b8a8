// Why (tx, position) is a gap-free global order.
//
// Positions come from a sequence, so a transaction can draw position 100 and
// commit after another that drew 101: a reader ordering by position alone
// could pass 101 and never see 100. Instead each event carries the id of the
// transaction that wrote it, and readers
//   (a) order by (tx, position), and
//   (b) read only events with tx < pg_snapshot_xmin(pg_current_snapshot()).
// Every transaction that has not finished when the snapshot is taken has an id
// >= xmin, and any transaction that starts writing later gets a larger id still
// (ids are handed out in increasing order). So every event that can ever be
// committed in the future sorts after everything a reader has been given, and a
// checkpoint (tx, position) never skips anything. Appends to one stream take an
// advisory lock before their transaction has an id, so a later append to the
// same stream always has the larger tx: stream order and global order agree.
#include "eventstore/event_store.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/db.h"
#include "common/sql_time.h"

namespace scribe::eventstore {
namespace {

const db::Statement kAppend{"events.append", "select stream_id, version, position, tx::text, " SCRIBE_SQL_ISO_US(
                                                 "now()") " from scribe_append($1::jsonb)"};
// One stream: the leaner function of migrations/050_append_stream.sql.
const db::Statement kAppendStream{"events.append_stream",
                                  "select version, position, tx::text, " SCRIBE_SQL_ISO_US(
                                      "recorded_at") " from scribe_append_stream($1, $2, $3::jsonb)"};
const db::Statement kLastEvent{
    "events.last_event",
    "select position, tx::text, stream_id, version, type, data::text, metadata::text, " SCRIBE_SQL_ISO_US(
        "recorded_at") " from events where stream_id = $1 order by version desc limit 1"};
const db::Statement kReadStream{
    "events.read_stream",
    "select position, tx::text, stream_id, version, type, data::text, metadata::text, " SCRIBE_SQL_ISO_US(
        "recorded_at") " from events where stream_id = $1 and version > $2 order by version"};
// The global order is by the xid8 column itself: ORDER BY must name e.tx, not
// the output column tx::text, or "10" would sort before "9".
const db::Statement kReadAll{"events.read_all",
                             "select position, tx::text, stream_id, version, type, data::text, metadata::text, "
                             SCRIBE_SQL_ISO_US("recorded_at")
                             " from events e where (e.tx, e.position) > ($1::xid8, $2::bigint) "
                             "and e.tx < pg_snapshot_xmin(pg_current_snapshot()) "
                             "order by e.tx, e.position limit $3"};
const db::Statement kReadAllUnbounded{"events.read_all_unbounded",
                                      "select position, tx::text, stream_id, version, type, data::text, "
                                      "metadata::text, "
                                      SCRIBE_SQL_ISO_US("recorded_at")
                                      " from events e where (e.tx, e.position) > ($1::xid8, $2::bigint) "
                                      "order by e.tx, e.position limit $3"};
const db::Statement kRedactSelect{"events.redact_select",
                                  "select position, type, data::text from events where stream_id = $1 "
                                  "and redacted_at is null order by version"};
const db::Statement kRedactUpdate{"events.redact_update",
                                  "update events set data = $2::jsonb, redacted_at = now() where position = $1"};

const db::Statement kLockStream{"events.lock_stream",
                                "select pg_advisory_xact_lock(hashtextextended('stream:' || $1, 0))"};
const db::Statement kHead{"events.head",
                          "select e.tx::text, e.position from events e "
                          "where e.tx < pg_snapshot_xmin(pg_current_snapshot()) "
                          "order by e.tx desc, e.position desc limit 1"};

// Wakes the subscribers of one database after appends commit, for every
// appender of this process. A NOTIFY takes a cluster-wide lock until its
// transaction's commit is done, so one per append made the appenders queue on
// it and cost each append a round trip. Appenders only raise a flag here; one
// thread with its own connection sends a NOTIFY as soon as it sees the flag,
// then waits kMinInterval before it sends the next, so a busy process sends at
// most a few hundred a second and an idle one still wakes subscribers at once.
// Subscribers also poll every 200 ms, so a NOTIFY lost to a broken connection
// only delays them.
class Notifier {
 public:
  static constexpr auto kMinInterval = std::chrono::milliseconds(2);

  explicit Notifier(std::string url) : url_(std::move(url)), thread_([this] { run(); }) {}
  // Sends what is still pending (a command-line process that appended and is
  // exiting), then stops.
  ~Notifier() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void request() {
    {
      std::lock_guard lock(mu_);
      if (pending_) return;
      pending_ = true;
    }
    cv_.notify_one();
  }

 private:
  void run() {
    std::unique_ptr<pqxx::connection> conn;
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return pending_ || stop_; });
      if (!pending_) return;  // stopping with nothing pending
      pending_ = false;
      lock.unlock();
      auto sent = std::chrono::steady_clock::now();
      try {
        if (!conn) conn = db::open_connection(url_, false);
        pqxx::nontransaction txn(*conn);
        txn.exec0("notify scribe_events");
      } catch (const std::exception&) {
        conn.reset();  // reconnect on the next request; pollers cover the gap
      }
      lock.lock();
      if (stop_) continue;  // flush a last request without waiting
      cv_.wait_until(lock, sent + kMinInterval, [this] { return stop_; });
    }
  }

  std::string url_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: started once the fields above exist
};

// One notifier per database URL this process appends to, for the process's
// lifetime (their destructors flush at exit).
Notifier& notifier_for(const std::string& url) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Notifier>> notifiers;
  std::lock_guard lock(mu);
  auto& n = notifiers[url];
  if (!n) n = std::make_unique<Notifier>(url);
  return *n;
}

RecordedEvent row_to_event(const pqxx::row& r) {
  RecordedEvent e;
  e.global.position = r[0].as<int64_t>();
  e.global.tx = std::stoull(r[1].c_str());
  e.stream_id = r[2].c_str();
  e.version = r[3].as<int64_t>();
  e.type = r[4].c_str();
  e.data = Json::parse(r[5].c_str());
  e.metadata = Json::parse(r[6].c_str());
  e.recorded_at = r[7].c_str();
  return e;
}

std::vector<RecordedEvent> rows_to_events(const pqxx::result& res) {
  std::vector<RecordedEvent> out;
  out.reserve(res.size());
  for (const auto& r : res) out.push_back(row_to_event(r));
  return out;
}

}  // namespace

std::atomic<uint64_t> EventStore::appended_total_{0};

EventStore::EventStore(std::shared_ptr<const InlineProjector> projector)
    : projector_(std::move(projector)), queues_(new_group_commit_queues()) {
  if (!projector_)
    throw std::invalid_argument(
        "EventStore: no inline projector; build the store with projections::inline_projections(), or with "
        "EventStore::without_inline_projections() to append events no read model sees");
}

EventStore::EventStore(Unprojected) : queues_(new_group_commit_queues()) {}

EventStore EventStore::without_inline_projections() { return EventStore(Unprojected{}); }

std::vector<RecordedEvent> EventStore::append(pqxx::work& txn, const std::vector<StreamAppend>& appends) const {
  if (appends.size() == 1) return append_one(txn, appends.front());
  Json payload = Json::array();
  for (const auto& a : appends) {
    Json events = Json::array();
    for (const auto& e : a.events) events.push_back({{"type", e.type}, {"data", e.data}, {"metadata", e.metadata}});
    payload.push_back({{"stream", a.stream_id}, {"expected", a.expected.value}, {"events", std::move(events)}});
  }
  pqxx::result res;
  try {
    res = txn.exec_prepared(kAppend.name, payload.dump());
  } catch (const pqxx::sql_error& err) {
    if (err.sqlstate() == "SC001") throw ConcurrencyError(err.what());
    throw;
  }
  // The function returns (stream, version, position, tx, recorded_at) per
  // event in input order.
  std::vector<RecordedEvent> recorded;
  recorded.reserve(res.size());
  std::size_t row = 0;
  for (const auto& a : appends)
    for (const auto& e : a.events) {
      const auto& r = res[static_cast<pqxx::result::size_type>(row++)];
      recorded.push_back(appended_event(r, 1, r[0].c_str(), e));
    }
  return finish_append(txn, std::move(recorded));
}

std::vector<RecordedEvent> EventStore::append(pqxx::work& txn, const std::string& stream_id, ExpectedVersion expected,
                                              std::vector<NewEvent> events) const {
  return append_one(txn, StreamAppend{stream_id, expected, std::move(events)});
}

std::string EventStore::events_json(const std::vector<NewEvent>& events) {
  // The events array is written by hand: building a Json tree of copies of
  // every payload only to print it again cost more than the rest of the
  // client's side of an append.
  std::string out = "[";
  for (const auto& e : events) {
    if (out.size() > 1) out += ',';
    out += "{\"type\":";
    out += Json(e.type).dump();
    out += ",\"data\":";
    out += e.data.dump();
    out += ",\"metadata\":";
    out += e.metadata.dump();
    out += '}';
  }
  return out + "]";
}

std::vector<RecordedEvent> EventStore::append_one(pqxx::work& txn, const StreamAppend& a) const {
  pqxx::result res;
  try {
    res = txn.exec_prepared(kAppendStream.name, a.stream_id, a.expected.value, events_json(a.events));
  } catch (const pqxx::sql_error& err) {
    if (err.sqlstate() == "SC001") throw ConcurrencyError(err.what());
    throw;
  }
  // One row (version, position, tx, recorded_at) per event, in input order.
  std::vector<RecordedEvent> recorded;
  recorded.reserve(res.size());
  std::size_t row = 0;
  for (const auto& e : a.events)
    recorded.push_back(appended_event(res[static_cast<pqxx::result::size_type>(row++)], 0, a.stream_id, e));
  return finish_append(txn, std::move(recorded));
}

RecordedEvent EventStore::appended_event(const pqxx::row& r, int first, std::string stream_id, const NewEvent& e) {
  RecordedEvent ev;
  ev.stream_id = std::move(stream_id);
  ev.version = r[first].as<int64_t>();
  ev.global.position = r[first + 1].as<int64_t>();
  ev.global.tx = std::stoull(r[first + 2].c_str());
  ev.type = e.type;
  ev.data = e.data;
  ev.metadata = e.metadata;
  ev.recorded_at = r[first + 3].c_str();
  return ev;
}

std::vector<RecordedEvent> EventStore::finish_append(pqxx::work& txn, std::vector<RecordedEvent> recorded) const {
  if (projector_) projector_->project(txn, recorded);
  appended_total_ += recorded.size();
  return recorded;
}

std::optional<RecordedEvent> EventStore::last_event(pqxx::transaction_base& txn, const std::string& stream_id) {
  auto events = rows_to_events(txn.exec_prepared(kLastEvent.name, stream_id));
  if (events.empty()) return std::nullopt;
  return std::move(events.front());
}

std::vector<RecordedEvent> EventStore::read_stream(pqxx::transaction_base& txn, const std::string& stream_id,
                                                   int64_t after_version) {
  return rows_to_events(txn.exec_prepared(kReadStream.name, stream_id, after_version));
}

std::vector<RecordedEvent> EventStore::read_all(pqxx::transaction_base& txn, GlobalPosition after, int limit) {
  return rows_to_events(txn.exec_prepared(kReadAll.name, std::to_string(after.tx), after.position, limit));
}

std::vector<RecordedEvent> EventStore::read_all_unbounded(pqxx::transaction_base& txn, GlobalPosition after,
                                                          int limit) {
  return rows_to_events(txn.exec_prepared(kReadAllUnbounded.name, std::to_string(after.tx), after.position, limit));
}

void EventStore::commit(pqxx::work& txn) {
  // Every connection in scribe is a pqxx::connection (db::open_connection);
  // its options are the URL it was opened with, which the notifier reuses.
  auto& conn = static_cast<pqxx::connection&>(txn.conn());
  txn.commit();
  notifier_for(conn.options()).request();
}

void EventStore::lock_stream(pqxx::work& txn, const std::string& stream_id) {
  txn.exec_prepared(kLockStream.name, stream_id);
}

GlobalPosition EventStore::head(pqxx::transaction_base& txn) {
  auto res = txn.exec_prepared(kHead.name);
  if (res.empty()) return {};
  return {std::stoull(res[0][0].c_str()), res[0][1].as<int64_t>()};
}

int EventStore::redact_stream(pqxx::work& txn, const std::string& stream_id,
                              const std::function<Json(const std::string&, const Json&)>& keep) {
  txn.exec("set local scribe.redaction = 'on'");
  int count = 0;
  for (const auto& r : txn.exec_prepared(kRedactSelect.name, stream_id)) {
    Json kept = keep(r[1].c_str(), Json::parse(r[2].c_str()));
    txn.exec_prepared(kRedactUpdate.name, r[0].as<int64_t>(), kept.dump());
    ++count;
  }
  txn.exec("set local scribe.redaction = 'off'");
  return count;
}

}  // namespace scribe::eventstore
