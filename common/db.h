#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <vector>

// PostgreSQL access: a fixed pool of connections and named statements.
//
// A named statement is declared next to the code that owns its table:
//   static const db::Statement kSelectAccount{"accounts.select", "select ... where id = $1"};
// Every pooled connection prepares every declared statement when it opens, so
// callers run `txn.exec_prepared(kSelectAccount.name, ...)` without setup.
namespace scribe::db {

struct Statement {
  Statement(const char* name, const char* sql);
  const char* name;
  const char* sql;
};

std::unique_ptr<pqxx::connection> open_connection(const std::string& url, bool prepare = true);

// Blocks until `stop`: LISTENs on `channel` on a connection of its own and
// calls `on_notify` for every notification (from this thread). A lost
// connection is logged under `what` and opened again a second later. The
// waiters that wake on a NOTIFY (pipeline workers, webhook senders) run it on
// a thread each.
void listen_until(const std::string& url, const std::string& channel, const std::string& what,
                  const std::atomic<bool>& stop, const std::function<void()>& on_notify);
// The same, with each notification's payload (a NOTIFY's text) for
// `on_payload`, called once per notification.
void listen_payloads_until(const std::string& url, const std::string& channel, const std::string& what,
                           const std::atomic<bool>& stop, const std::function<void(const std::string&)>& on_payload);

// A PostgreSQL array literal of integers ("{1,2,3}") for a bigint[]
// parameter: libpqxx 6 has no conversion for vectors, and integers need no
// quoting.
std::string int_array_literal(const std::vector<int64_t>& ids);
// The same for a text[] parameter: every element quoted, with backslash and
// double quote escaped.
std::string text_array_literal(const std::vector<std::string>& values);
// A text[] column's value (NULL elements are skipped).
std::vector<std::string> text_array(const pqxx::field& f);

class Pool;

// A connection borrowed from the pool; returned when the lease goes away.
// A connection that broke while leased is dropped and replaced lazily.
class Lease {
 public:
  Lease(Pool* pool, std::unique_ptr<pqxx::connection> conn) : pool_(pool), conn_(std::move(conn)) {}
  Lease(Lease&&) = default;
  Lease& operator=(Lease&&) = delete;
  ~Lease();
  pqxx::connection& operator*() { return *conn_; }
  pqxx::connection* operator->() { return conn_.get(); }

 private:
  Pool* pool_;
  std::unique_ptr<pqxx::connection> conn_;
};

class Pool {
 public:
  Pool(std::string url, int size);
  Lease acquire();
  const std::string& url() const { return url_; }
  int size() const { return size_; }
  int in_use() const;

 private:
  friend class Lease;
  void release(std::unique_ptr<pqxx::connection> conn);

  std::string url_;
  int size_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  int open_ = 0;
};

}  // namespace scribe::db
