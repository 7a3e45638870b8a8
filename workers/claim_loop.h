#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

// The threads of a queue consumer (transcription jobs, clip renders): each
// slot claims work on its own connection and runs it; an idle slot sleeps
// until the event store's NOTIFY says something was appended, or the poll
// interval passes (the fallback for a missed notification). Claims are spaced
// at least kMinClaimGap apart: every append notifies and most appends are not
// work, so a busy log costs an idle slot at most 20 claims a second and new
// work waits at most 50 ms.
namespace scribe::workers {

// "<host>:<pid>": who holds a lease, as the leases tables show it.
std::string process_owner();

class ClaimLoop {
 public:
  // What a slot runs once it claimed something; throws on database failures
  // (the slot then reconnects and the lease runs out for another worker).
  using Work = std::function<void()>;
  // Claims one piece of work on `conn` for `slot_owner`; an empty Work when
  // nothing is claimable now.
  using Claim = std::function<Work(pqxx::connection& conn, const std::string& slot_owner)>;

  static constexpr auto kMinClaimGap = std::chrono::milliseconds(50);

  // `what` names the consumer in logs ("job", "clip").
  ClaimLoop(std::string database_url, std::string owner, std::string what, std::chrono::milliseconds poll);
  ~ClaimLoop();
  void start(int slots, Claim claim);
  // Stops claiming and joins the threads (work in progress sees stopping()).
  void stop();
  // Stops claiming without waiting, so that several loops stop together.
  void request_stop();
  const std::atomic<bool>& stopping() const { return stopping_; }

 private:
  void run(int slot);
  void listen();

  std::string url_;
  std::string owner_;
  std::string what_;
  std::chrono::milliseconds poll_;
  Claim claim_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t wakeups_ = 0;  // NOTIFYs of new events seen (under mu_)
  std::vector<std::thread> threads_;
};

}  // namespace scribe::workers
