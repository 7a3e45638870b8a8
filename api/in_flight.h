#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

// How many long requests each account has running in this process. A long
// request (Route::long_running: asks, regenerations) computes on its request
// thread for up to a minute or more, and a server has few request threads
// (SCRIBE_DB_POOL), so without a bound one account could occupy them all and
// stall every other account. The bound is per process because what it
// protects, the process's request threads, is.
namespace scribe::api {

class InFlight {
 public:
  explicit InFlight(int limit) : limit_(limit) {}
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

  // A running request; its place is given back when the slot is destroyed.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : owner_(other.owner_), key_(std::move(other.key_)) { other.owner_ = nullptr; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (owner_) owner_->release(key_);
    }

   private:
    friend class InFlight;
    Slot(InFlight* owner, std::string key) : owner_(owner), key_(std::move(key)) {}
    InFlight* owner_;
    std::string key_;
  };

  // A slot for `key` (an account), or nullopt when `key` already has `limit` running.
  std::optional<Slot> try_take(const std::string& key);
  int limit() const { return limit_; }
  int running(const std::string& key) const;

 private:
  void release(const std::string& key);

  const int limit_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, int> running_;  // only keys with a request running
};

}  // namespace scribe::api
