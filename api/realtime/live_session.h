#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/realtime/messages.h"
#include "common/time.h"
#include "api/websocket.h"
#include "domain/realtime_pacing.h"

namespace scribe {
class ThreadPool;
}
namespace scribe::speech {
class StreamingRecognizer;
struct StreamingOptions;
struct StreamEvent;
}  // namespace scribe::speech

// One connected realtime stream (docs/realtime_protocol.md): the socket's
// frames in, the recognizer's turns out, the audio stored piece by piece,
// and the session's end. Everything a session does runs in order on its own
// strand over the realtime thread pool: the socket's I/O thread only checks
// a frame and queues it, so a slow recognizer or database never stalls the
// server's I/O, and no two steps of one session ever run at once.
namespace scribe::api::realtime {

class LiveRegistry;

// What the session needs from the rest of the server, as functions, so the
// database and the recognizer stay behind the registry (live_registry.cpp).
struct SessionStart {
  std::string session_id;
  int64_t transcription_id = 0;
  int64_t account_id = 0;
  int cap_minutes = 0;
  int generation = 0;
  int64_t samples_persisted = 0;  // where this connection's audio starts
  int64_t next_seq = 0;           // the next stored piece's number
  std::optional<int> last_turn_order;
  std::optional<int> client_last_turn_order;  // ?last_turn_order= on a resume
  bool resumed = false;
  TimePoint created_at{};  // the session's, for its duration
  Dialect dialect = Dialect::Native;
  int end_of_turn_silence_ms = 400;
  bool partials = true;
};

struct Settlement {
  std::string reason;  // the end's: an earlier end (another process) keeps its own
  double audio_seconds = 0;
  double session_seconds = 0;
  int64_t billed_seconds = 0;
  double charge_usd = 0;
};

class LiveSession : public std::enable_shared_from_this<LiveSession> {
 public:
  LiveSession(LiveRegistry& registry, SessionStart start, std::shared_ptr<WebSocketConnection> conn);
  ~LiveSession();

  // Socket callbacks (the I/O thread): quick checks, then queued.
  void on_binary(std::string frame);
  void on_text(std::string text);
  void on_closed(uint16_t code);

  // From the registry's heartbeat or a handler on this process.
  void request_end(const std::string& reason);
  void supersede();
  void shut_down();  // the server is stopping: store what came, close 1001 (resumable)
  void heartbeat_tick(bool end_requested, bool superseded);

  const std::string& id() const { return start_.session_id; }
  int generation() const { return start_.generation; }

  // Starts the strand: Begin, replayed finals.
  void begin();

 private:
  void post(std::function<void()> step);
  void drain();

  void handle_audio(const std::string& frame);
  void handle_control(const ClientMessage& m);
  void feed(const int16_t* pcm, std::size_t n);
  void emit(std::vector<speech::StreamEvent> events);
  void store_pending(bool all);
  void finish(const std::string& reason, int close_code);
  void refuse(const std::string& code, const std::string& message, bool resumable, int close_code,
              const std::string& field = "");
  void send(std::string message, bool droppable = false);

  LiveRegistry& registry_;
  SessionStart start_;
  std::shared_ptr<WebSocketConnection> conn_;

  // Strand.
  std::mutex mu_;
  std::deque<std::function<void()>> steps_;
  bool running_ = false;

  // I/O-thread side (under mu_): pacing of this connection.
  std::chrono::steady_clock::time_point connected_at_;
  double audio_seconds_received_ = 0;
  bool refused_ = false;  // a refusal was queued: drop what follows
  bool warned_slow_ = false;
  double backlog_seconds_ = 0;  // audio queued on the strand, not yet recognized

  // Strand side.
  std::unique_ptr<speech::StreamingRecognizer> recognizer_;
  std::vector<int16_t> pending_;  // received, not yet stored
  int64_t samples_persisted_ = 0;
  int64_t samples_received_ = 0;  // session clock: persisted + pending
  int64_t next_seq_ = 0;
  std::optional<int> last_final_;
  std::chrono::steady_clock::time_point last_activity_;
  bool cap_warned_ = false;
  bool done_ = false;  // ended, superseded, shut down or disconnected
};

}  // namespace scribe::api::realtime
