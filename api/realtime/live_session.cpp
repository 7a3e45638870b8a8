#include "api/realtime/live_session.h"

#include <algorithm>
#include <cstring>

#include "api/realtime/live_registry.h"
#include "common/log.h"
#include "common/thread_pool.h"
#include "domain/realtime.h"
#include "speech/streaming_recognizer.h"

namespace scribe::api::realtime {
namespace {

using Steady = std::chrono::steady_clock;
namespace cc = scribe::realtime::close_code;
constexpr int64_t kPieceSamples = scribe::realtime::kSampleRate;  // store about every second of audio
// Steps a session runs before its thread serves another session's.
constexpr int kStepsPerTurn = 4;
// Audio received and not yet recognized: past this (or past what the pace
// rule lets a client send ahead, if that is more) the server is behind (more
// streams than its cores recognize in real time), and the connection is
// closed resumable (1013, try again later) rather than let it grow.
constexpr double kMaxBacklogSeconds = 20;

std::vector<WireWord> wire_words(const std::vector<speech::StreamWord>& words, bool final) {
  std::vector<WireWord> out;
  out.reserve(words.size());
  for (const auto& w : words) out.push_back(WireWord{w.text, w.start_ms, w.end_ms, w.confidence, final});
  return out;
}

}  // namespace

LiveSession::LiveSession(LiveRegistry& registry, SessionStart start, std::shared_ptr<WebSocketConnection> conn)
    : registry_(registry), start_(std::move(start)), conn_(std::move(conn)) {
  connected_at_ = Steady::now();
  last_activity_ = connected_at_;
  samples_persisted_ = start_.samples_persisted;
  samples_received_ = start_.samples_persisted;
  next_seq_ = start_.next_seq;
  last_final_ = start_.last_turn_order;
}

LiveSession::~LiveSession() = default;

void LiveSession::post(std::function<void()> step) {
  bool start = false;
  {
    std::lock_guard lock(mu_);
    steps_.push_back(std::move(step));
    if (!running_) running_ = start = true;
  }
  if (start) registry_.pool().post([self = shared_from_this()] { self->drain(); });
}

void LiveSession::drain() {
  // A few steps, then the thread goes back to the pool: with more streams
  // than realtime threads, a busy session would otherwise keep its thread
  // while its client keeps sending, and the others (their Begin too) wait.
  for (int done = 0;; ++done) {
    std::function<void()> step;
    {
      std::lock_guard lock(mu_);
      if (steps_.empty()) {
        running_ = false;
        return;
      }
      if (done == kStepsPerTurn) {
        registry_.pool().post([self = shared_from_this()] { self->drain(); });
        return;
      }
      step = std::move(steps_.front());
      steps_.pop_front();
    }
    try {
      step();
    } catch (const std::exception& e) {
      // A database or recognizer failure: the session stays live (its audio
      // so far is stored), the client may resume; the stale sweep ends it
      // otherwise.
      log::error("realtime session failed", {{"session_id", start_.session_id}, {"error", e.what()}});
      if (!done_) refuse("internal_error", "The server failed; resume the session to continue.", true, 1011);
    }
  }
}

void LiveSession::begin() {
  post([this] {
    BeginInfo b;
    b.session_id = start_.session_id;
    b.transcription_id = start_.transcription_id;
    const double received = static_cast<double>(samples_persisted_) / scribe::realtime::kSampleRate;
    b.remaining_cap_seconds = scribe::realtime::remaining_cap_seconds(start_.cap_minutes, received);
    b.expires_at_unix =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count() +
        static_cast<int64_t>(b.remaining_cap_seconds);
    b.cap_minutes = start_.cap_minutes;
    b.resumed = start_.resumed;
    b.last_turn_order = last_final_;
    b.audio_received_seconds = received;
    b.end_of_turn_silence_ms = start_.end_of_turn_silence_ms;
    b.partials = start_.partials;
    // Begin before the recognizer is taken: AssemblyAI's SDK gives up on a
    // connection whose Begin takes a second, and making a decoder can. The
    // idle clock starts here: a client rightly waits for Begin.
    send(begin_message(b, start_.dialect));
    last_activity_ = Steady::now();
    speech::StreamingOptions o;
    o.end_of_turn_silence_ms = start_.end_of_turn_silence_ms;
    o.partials = start_.partials;
    o.start_offset_samples = start_.samples_persisted;
    o.first_turn_order = last_final_ ? *last_final_ + 1 : 0;
    recognizer_ = registry_.recognizers().make(o);
    // A resumed client names the last final it has: the ones after it again.
    if (start_.resumed && start_.client_last_turn_order)
      for (auto& m : registry_.finals_after(start_.session_id, *start_.client_last_turn_order, start_.dialect))
        send(std::move(m));
    if (scribe::realtime::cap_warning_due(start_.cap_minutes, received, cap_warned_)) {
      cap_warned_ = true;
      send(warning_message("cap_soon", "Less than a minute of the session's cap is left.", start_.dialect));
    }
  });
}

void LiveSession::on_binary(std::string frame) {
  {
    std::lock_guard lock(mu_);
    if (refused_) return;
  }
  if (auto bad = check_audio_frame(frame.size())) {
    refuse("bad_message", bad->message, true, cc::kBadMessage, bad->field);
    return;
  }
  scribe::realtime::Pace p;
  {
    std::lock_guard lock(mu_);
    audio_seconds_received_ += static_cast<double>(frame.size()) / (2.0 * scribe::realtime::kSampleRate);
    double wall = std::chrono::duration<double>(Steady::now() - connected_at_).count();
    p = scribe::realtime::pace(audio_seconds_received_, wall, registry_.pace_limits());
  }
  if (p == scribe::realtime::Pace::TooFast) {
    refuse("too_fast",
           "Audio arrived more than " + std::to_string(int(registry_.pace_limits().max_ahead_seconds)) +
               " s ahead of real time; send it as it is recorded.",
           true, cc::kTooFast);
    return;
  }
  bool warn = false;
  if (p == scribe::realtime::Pace::SlowDown) {
    std::lock_guard lock(mu_);
    warn = !warned_slow_;
    warned_slow_ = true;
  }
  // Sent from here, not the strand: the strand may be seconds behind a
  // client this far ahead, and the warning must precede a refusal.
  if (warn) conn_->send_text(warning_message("slow_down", "Audio is arriving faster than real time.", start_.dialect));
  const double seconds = static_cast<double>(frame.size()) / (2.0 * scribe::realtime::kSampleRate);
  bool behind = false;
  {
    std::lock_guard lock(mu_);
    backlog_seconds_ += seconds;
    behind = backlog_seconds_ > std::max(kMaxBacklogSeconds, 2 * registry_.pace_limits().max_ahead_seconds);
  }
  if (behind) {
    refuse("overloaded", "The server is behind on recognition; resume the session in a moment.", true, 1013);
    return;
  }
  post([this, seconds, frame = std::move(frame)] {
    {
      std::lock_guard lock(mu_);
      backlog_seconds_ -= seconds;
    }
    handle_audio(frame);
  });
}

void LiveSession::on_text(std::string text) {
  {
    std::lock_guard lock(mu_);
    if (refused_) return;
  }
  auto parsed = parse_client_message(text, start_.dialect);
  if (auto* bad = std::get_if<BadMessage>(&parsed)) {
    refuse("bad_message", bad->message, true, cc::kBadMessage, bad->field);
    return;
  }
  post([this, m = std::get<ClientMessage>(parsed)] { handle_control(m); });
}

void LiveSession::on_closed(uint16_t) {
  // The connection is gone (the client closed, dropped or was closed by us):
  // what arrived is stored, and the session stays live for a resume until
  // the stale window ends it.
  post([this] {
    if (!done_) {
      done_ = true;
      store_pending(true);
    }
    registry_.forget(shared_from_this());
  });
}

void LiveSession::request_end(const std::string& reason) {
  post([this, reason] {
    if (!done_) finish(reason, cc::kNormal);
  });
}

void LiveSession::supersede() {
  post([this] {
    if (done_) return;
    done_ = true;
    refuse("superseded", "A resumed connection replaced this one.", false, cc::kSuperseded);
  });
}

void LiveSession::shut_down() {
  // Told now, on the I/O thread, while the socket is still open; the audio
  // that came is stored on the strand, which the registry's pool drains
  // before the process exits.
  refuse("server_shutdown", "The server is restarting; resume the session to continue.", true, cc::kGoingAway);
  post([this] {
    if (done_) return;
    store_pending(true);
    done_ = true;
  });
}

void LiveSession::heartbeat_tick(bool end_requested, bool superseded) {
  if (superseded) return supersede();
  if (end_requested) return request_end(scribe::realtime::kReasonDeleted);
  post([this] {
    if (done_) return;
    double quiet = std::chrono::duration<double>(Steady::now() - last_activity_).count();
    if (scribe::realtime::idle(quiet, registry_.idle_seconds()))
      finish(scribe::realtime::kReasonIdle, cc::kIdleTimeout);
  });
}

void LiveSession::handle_audio(const std::string& frame) {
  if (done_) return;
  last_activity_ = Steady::now();
  const auto* pcm = reinterpret_cast<const int16_t*>(frame.data());
  std::size_t n = frame.size() / 2;
  // The cap is where the stream stops: audio past it is neither stored nor billed.
  const int64_t room = scribe::realtime::cap_samples(start_.cap_minutes) - samples_received_;
  const bool reaches_cap = static_cast<int64_t>(n) >= room;
  if (reaches_cap) n = static_cast<std::size_t>(std::max<int64_t>(0, room));
  pending_.insert(pending_.end(), pcm, pcm + n);
  samples_received_ += static_cast<int64_t>(n);
  feed(pcm, n);
  if (static_cast<int64_t>(pending_.size()) >= kPieceSamples) store_pending(false);
  if (done_) return;
  const double received = static_cast<double>(samples_received_) / scribe::realtime::kSampleRate;
  if (scribe::realtime::cap_warning_due(start_.cap_minutes, received, cap_warned_)) {
    cap_warned_ = true;
    send(warning_message("cap_soon", "Less than a minute of the session's cap is left.", start_.dialect));
  }
  if (reaches_cap) finish(scribe::realtime::kReasonCap, cc::kCapReached);
}

void LiveSession::handle_control(const ClientMessage& m) {
  if (done_) return;
  last_activity_ = Steady::now();
  if (auto* c = std::get_if<Configure>(&m)) {
    if (c->end_of_turn_silence_ms) recognizer_->set_end_of_turn_silence_ms(*c->end_of_turn_silence_ms);
    if (c->partials) recognizer_->set_partials(*c->partials);
  } else if (std::holds_alternative<ForceEndpoint>(m)) {
    emit(recognizer_->force_endpoint());
  } else if (std::holds_alternative<Terminate>(m)) {
    finish(scribe::realtime::kReasonTerminated, cc::kNormal);
  }
}

void LiveSession::feed(const int16_t* pcm, std::size_t n) {
  if (n > 0) emit(recognizer_->feed(pcm, n));
}

void LiveSession::emit(std::vector<speech::StreamEvent> events) {
  for (auto& e : events) {
    switch (e.kind) {
      case speech::StreamEvent::Kind::SpeechStarted:
        send(speech_started_message(e.time_ms, start_.dialect));
        break;
      case speech::StreamEvent::Kind::Partial:
        send(turn_message(e.turn_order, false, wire_words(e.words, false), start_.dialect), /*droppable=*/true);
        break;
      case speech::StreamEvent::Kind::Final: {
        // A final is stored before it is sent, so a resume can send it again.
        auto words = wire_words(e.words, true);
        registry_.record_final(start_.session_id, start_.generation, e.turn_order, words);
        last_final_ = e.turn_order;
        send(turn_message(e.turn_order, true, words, start_.dialect));
        break;
      }
    }
  }
}

void LiveSession::store_pending(bool all) {
  while (!pending_.empty() && (all || static_cast<int64_t>(pending_.size()) >= kPieceSamples)) {
    std::size_t n = all ? pending_.size() : static_cast<std::size_t>(kPieceSamples);
    n = std::min(n, pending_.size());
    if (!registry_.store_piece(start_.session_id, start_.generation, next_seq_, samples_persisted_, pending_.data(),
                               n)) {
      // Another connection took the session over: this one stores nothing more.
      done_ = true;
      pending_.clear();
      refuse("superseded", "A resumed connection replaced this one.", false, cc::kSuperseded);
      return;
    }
    ++next_seq_;
    samples_persisted_ += static_cast<int64_t>(n);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  }
}

void LiveSession::finish(const std::string& reason, int close_code) {
  if (done_) return;
  store_pending(true);
  if (done_) return;  // superseded while storing
  done_ = true;
  if (recognizer_) emit(recognizer_->finish());
  Settlement s = registry_.end_session(start_.session_id, reason, now() - start_.created_at);
  TerminationInfo t{s.reason, s.audio_seconds, s.session_seconds, s.billed_seconds, s.charge_usd};
  if (start_.dialect == Dialect::AssemblyAI && close_code != cc::kNormal) {
    // AssemblyAI ends a session at its limit with an error frame, not a
    // Termination (docs/realtime_assemblyai_wire.md).
    refuse(reason, reason == scribe::realtime::kReasonCap ? "Session cap reached." : "Session idle for too long.",
           false, close_code);
    return;
  }
  send(termination_message(t, start_.dialect));
  conn_->close(static_cast<uint16_t>(dialect_close_code(close_code, start_.dialect)), reason);
  {
    std::lock_guard lock(mu_);
    refused_ = true;
  }
}

void LiveSession::refuse(const std::string& code, const std::string& message, bool resumable, int close_code,
                         const std::string& field) {
  {
    std::lock_guard lock(mu_);
    if (refused_) return;
    refused_ = true;
  }
  conn_->send_text(error_message(code, message, resumable, start_.dialect, field, close_code));
  conn_->close(static_cast<uint16_t>(dialect_close_code(close_code, start_.dialect)), code);
}

void LiveSession::send(std::string message, bool droppable) {
  // A slow reader skips partials until it has caught up (each partial
  // repeats the turn so far, so the next one it gets replaces every one it
  // missed); finals and everything else always go out, in order.
  if (droppable && scribe::realtime::partial_fate(conn_->queued_bytes()) == scribe::realtime::PartialFate::Skip) return;
  conn_->send_text(std::move(message));
}

}  // namespace scribe::api::realtime
