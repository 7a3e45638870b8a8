#include "common/db.h"

#include <thread>
#include <tuple>

#include "common/log.h"

namespace scribe::db {
namespace {

std::vector<const Statement*>& registry() {
  static std::vector<const Statement*> statements;
  return statements;
}

}  // namespace

Statement::Statement(const char* n, const char* s) : name(n), sql(s) { registry().push_back(this); }

std::unique_ptr<pqxx::connection> open_connection(const std::string& url, bool prepare) {
  auto conn = std::make_unique<pqxx::connection>(url);
  if (prepare)
    for (const Statement* s : registry()) conn->prepare(s->name, s->sql);
  return conn;
}

Lease::~Lease() {
  if (pool_ && conn_) pool_->release(std::move(conn_));
}

Pool::Pool(std::string url, int size) : url_(std::move(url)), size_(size) {}

Lease Pool::acquire() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !idle_.empty() || open_ < size_; });
  if (!idle_.empty()) {
    auto conn = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(conn));
  }
  ++open_;
  lock.unlock();
  try {
    return Lease(this, open_connection(url_));
  } catch (...) {
    std::lock_guard relock(mu_);
    --open_;
    cv_.notify_one();
    throw;
  }
}

void Pool::release(std::unique_ptr<pqxx::connection> conn) {
  std::lock_guard lock(mu_);
  if (conn->is_open()) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
  cv_.notify_one();
}

int Pool::in_use() const {
  std::lock_guard lock(mu_);
  return open_ - static_cast<int>(idle_.size());
}

namespace {
class Wakeup final : public pqxx::notification_receiver {
 public:
  Wakeup(pqxx::connection_base& c, const std::string& channel, const std::function<void(const std::string&)>& on)
      : pqxx::notification_receiver(c, channel), on_(on) {}
  void operator()(const std::string& payload, int) override { on_(payload); }

 private:
  const std::function<void(const std::string&)>& on_;
};
}  // namespace

void listen_payloads_until(const std::string& url, const std::string& channel, const std::string& what,
                           const std::atomic<bool>& stop, const std::function<void(const std::string&)>& on_payload) {
  while (!stop) {
    try {
      auto conn = open_connection(url, false);
      Wakeup wakeup(*conn, channel, on_payload);
      // Short waits, so that `stop` is seen within 200 ms.
      while (!stop) conn->await_notification(0, 200000);
    } catch (const std::exception& err) {
      log::error(what + " failed; retrying", {{"error", err.what()}});
      for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

void listen_until(const std::string& url, const std::string& channel, const std::string& what,
                  const std::atomic<bool>& stop, const std::function<void()>& on_notify) {
  listen_payloads_until(url, channel, what, stop, [&](const std::string&) { on_notify(); });
}

std::string int_array_literal(const std::vector<int64_t>& ids) {
  std::string out = "{";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "}";
}

std::string text_array_literal(const std::vector<std::string>& values) {
  std::string out = "{";
  for (const auto& v : values) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : v) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::vector<std::string> text_array(const pqxx::field& f) {
  std::vector<std::string> out;
  if (f.is_null()) return out;
  auto parser = f.as_array();
  for (auto [kind, value] = parser.get_next(); kind != pqxx::array_parser::juncture::done;
       std::tie(kind, value) = parser.get_next()) {
    if (kind == pqxx::array_parser::juncture::string_value) out.push_back(value);
  }
  return out;
}

}  // namespace scribe::db
