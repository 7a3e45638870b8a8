#pragma once
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

// Ends realtime sessions nobody ends (commands::end_stale_sessions): live
// ones with no connection heartbeat for the stale window (a client that never
// came back, a server that was killed), ones whose end was requested with no
// owner to finish it, and transcriptions a crash left live after the end. It
// runs in every `scribe serve` (any process may settle any session: the end
// is exactly once whoever gets there first), every quarter of the window
// and at least every 5 s.
namespace scribe::workers {

class RealtimeSweeper {
 public:
  RealtimeSweeper(std::string database_url, int stale_seconds);
  ~RealtimeSweeper();
  RealtimeSweeper(const RealtimeSweeper&) = delete;
  RealtimeSweeper& operator=(const RealtimeSweeper&) = delete;
  void stop();

 private:
  void run();
  std::string url_;
  int stale_seconds_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scribe::workers
