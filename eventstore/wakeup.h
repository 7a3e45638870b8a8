#pragma once
#include <pqxx/pqxx>

namespace scribe::eventstore {

// LISTENs on `scribe_events` for as long as it lives. Appenders NOTIFY right
// after they commit (EventStore::commit; one NOTIFY per process covers every
// append committed before it was sent), so `conn.await_notification()` wakes
// as soon as new events are readable; the wake-up is all we need, so the body
// is empty.
class EventsWakeup final : public pqxx::notification_receiver {
 public:
  explicit EventsWakeup(pqxx::connection_base& c) : pqxx::notification_receiver(c, "scribe_events") {}
  void operator()(const std::string&, int) override {}
};

}  // namespace scribe::eventstore
