#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <vector>

#include "eventstore/event.h"
#include "eventstore/inline_projector.h"

namespace scribe::eventstore {

// Raised when a stream is not at the version the appender expected.
class ConcurrencyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StreamAppend {
  std::string stream_id;
  ExpectedVersion expected;
  std::vector<NewEvent> events;
};

// What group commit has done in this process (eventstore/group_commit.cpp).
struct GroupCommitStats {
  uint64_t batches = 0;   // transactions a leader ran, committed or not
  uint64_t units = 0;     // commands' appends written in them
  uint64_t largest = 0;   // the most units one transaction carried
  uint64_t isolated = 0;  // units written again alone after their batch failed
  uint64_t queued = 0;    // appends waiting for a leader now
};

class GroupCommitQueues;

// The event log. An instance appends: it carries the inline projections its
// appends run and its group-commit queues. Reading, committing and locking
// involve no projection and stay static.
//
// A store is built with the projector of the read models it keeps current
// (app/ passes projections::inline_projections()), or, as a named choice,
// without_inline_projections(). It has no default constructor and refuses a
// null projector, so a store that appends unprojected is always one somebody
// asked for. Copies share the projector and the group-commit queues: pass it
// by reference or copy it, as is convenient.
class EventStore {
 public:
  // Appends run `projector` in their transaction. Throws std::invalid_argument
  // when it is null.
  explicit EventStore(std::shared_ptr<const InlineProjector> projector);
  // A store whose appends write events only and update no read model: for
  // tests and benchmarks of the log itself, and tools whose events no inline
  // projection must see.
  static EventStore without_inline_projections();
  bool projects_inline() const { return projector_ != nullptr; }

  // Appends to one or more streams atomically inside `txn`, which must not
  // have written anything yet (see migrations/001_eventstore.sql). Runs the
  // store's inline projector in the same transaction. The caller commits.
  std::vector<RecordedEvent> append(pqxx::work& txn, const std::vector<StreamAppend>& appends) const;
  std::vector<RecordedEvent> append(pqxx::work& txn, const std::string& stream_id, ExpectedVersion expected,
                                    std::vector<NewEvent> events) const;

  // Appends one command's streams atomically in a transaction of its own and
  // commits it. Concurrent callers share transactions (group commit, see
  // eventstore/group_commit.cpp): one of them, the leader, writes the queued
  // appends of the others with its own connection, and every unit is checked
  // against its expected versions on its own, so another command's conflict
  // never fails this one. `conn` must have no open transaction, and the
  // calling thread must hold no other transaction while it waits (a leader
  // could need a lock that transaction holds). Throws ConcurrencyError when a
  // stream is not at its expected version; the inline projector runs in the
  // shared transaction, as it does for append(). Only appends through this
  // store (or its copies) share a transaction, so a batch never mixes
  // projectors. A unit of many events commits alone at once (group_commit.cpp,
  // kAloneFromEvents).
  std::vector<RecordedEvent> append_and_commit(pqxx::connection& conn, std::vector<StreamAppend> unit) const;
  static GroupCommitStats group_commit_stats();
  // How many batches may be in flight at once per database (at least 1,
  // default kGroupCommitLeaders). More leaders keep more commits in one WAL
  // flush; fewer make larger batches.
  static void set_group_commit_leaders(int leaders);
  static constexpr int kGroupCommitLeaders = 3;

  // Commits an appending transaction, then wakes subscribers (NOTIFY
  // scribe_events) outside it; see migrations/006_notify_after_commit.sql.
  // The NOTIFY is sent by a per-process notifier thread that coalesces the
  // requests of all appenders (event_store.cpp), so commit returns without
  // waiting for it.
  static void commit(pqxx::work& txn);
  // Takes the stream's append lock now (the one scribe_append takes) and
  // holds it to the end of the transaction. A command that reads a hot stream,
  // decides and appends calls this before reading, so concurrent writers of
  // that stream queue instead of failing with a ConcurrencyError and starting
  // over. Lock streams in sorted order, as scribe_append does.
  static void lock_stream(pqxx::work& txn, const std::string& stream_id);

  static std::vector<RecordedEvent> read_stream(pqxx::transaction_base& txn, const std::string& stream_id,
                                                int64_t after_version = 0);
  // The stream's last event; nullopt for an empty stream. For deciders whose
  // events say from where the stream still matters (a rolling window).
  static std::optional<RecordedEvent> last_event(pqxx::transaction_base& txn, const std::string& stream_id);
  // Events after `after` in global order, at most `limit`, never one that a
  // still-running transaction could precede.
  static std::vector<RecordedEvent> read_all(pqxx::transaction_base& txn, GlobalPosition after, int limit);
  // Every committed event in global order, without the xmin bound; only for
  // callers that hold the inline-projection exclusive lock (rebuilds).
  static std::vector<RecordedEvent> read_all_unbounded(pqxx::transaction_base& txn, GlobalPosition after, int limit);

  // The one redaction path: replaces the data of every event of the stream with
  // `keep(data)` and stamps redacted_at. Used by transcription deletion so that
  // no transcript content stays readable, while billing fields survive.
  static int redact_stream(pqxx::work& txn, const std::string& stream_id,
                           const std::function<Json(const std::string& type, const Json& data)>& keep);

  // The last readable event's position (where a live-only subscriber starts).
  static GlobalPosition head(pqxx::transaction_base& txn);

  static uint64_t appended_total() { return appended_total_.load(); }

 private:
  struct Unprojected {};  // the tag of without_inline_projections()
  explicit EventStore(Unprojected);
  std::vector<RecordedEvent> append_one(pqxx::work& txn, const StreamAppend& a) const;
  // The JSON array [{"type", "data", "metadata"}, ...] the append functions take.
  static std::string events_json(const std::vector<NewEvent>& events);
  // Writes units with scribe_append_batch inside `txn` and runs the inline
  // projector on what was written. Sets conflicted[u] for a unit whose expected
  // versions did not hold (it wrote nothing); returns each unit's events.
  std::vector<std::vector<RecordedEvent>> append_units(pqxx::work& txn,
                                                       const std::vector<const std::vector<StreamAppend>*>& units,
                                                       std::vector<bool>& conflicted) const;
  friend class GroupCommitter;
  // Defined in group_commit.cpp, where GroupCommitQueues is complete.
  static std::shared_ptr<GroupCommitQueues> new_group_commit_queues();
  // The event appended from `e`, from the row an append function returned:
  // version, position, tx and recorded_at in columns first..first+3.
  static RecordedEvent appended_event(const pqxx::row& r, int first, std::string stream_id, const NewEvent& e);
  // Runs the inline projector on what was appended and counts it.
  std::vector<RecordedEvent> finish_append(pqxx::work& txn, std::vector<RecordedEvent> recorded) const;
  static std::atomic<uint64_t> appended_total_;

  std::shared_ptr<const InlineProjector> projector_;  // null only by without_inline_projections()
  std::shared_ptr<GroupCommitQueues> queues_;
};

}  // namespace scribe::eventstore
