#include "api/realtime/live_registry.h"

#include "commands/realtime_commands.h"
#include "common/crypto.h"
#include "common/log.h"
#include "domain/money.h"
#include "workers/claim_loop.h"

namespace scribe::api::realtime {
namespace {

commands::Meta meta_of(const std::string& session_id) { return commands::Meta{"realtime:" + session_id, ""}; }

}  // namespace

LiveRegistry::LiveRegistry(Services& services, LiveSettings settings, speech::PocketSphinxOptions recognizer_options)
    : services_(services),
      settings_(settings),
      recognizers_(std::move(recognizer_options)),
      owner_(workers::process_owner() + "/rt-" + crypto::random_hex(4)),
      pool_(settings.threads) {
  heartbeat_ = std::thread([this] { heartbeat_loop(); });
  // One decoder made now, while nobody waits: the first session takes it
  // instead of loading the model (about a second) before its first turn.
  pool_.post([this] {
    try {
      recognizers_.make(speech::StreamingOptions{});
    } catch (const std::exception& e) {
      log::error("realtime recognizer could not be made", {{"error", e.what()}});
    }
  });
}

LiveRegistry::~LiveRegistry() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
}

void LiveRegistry::adopt(std::shared_ptr<LiveSession> s) {
  std::shared_ptr<LiveSession> old;
  {
    std::lock_guard lock(mu_);
    auto& slot = sessions_[s->id()];
    old = std::move(slot);
    slot = std::move(s);
  }
  // A resume reached this same process: the older connection is replaced
  // at once instead of at its next heartbeat.
  if (old) old->supersede();
}

void LiveRegistry::forget(const std::shared_ptr<LiveSession>& s) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(s->id());
  if (it != sessions_.end() && it->second == s) sessions_.erase(it);
}

std::shared_ptr<LiveSession> LiveRegistry::find(const std::string& session_id) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(session_id);
  return it == sessions_.end() ? nullptr : it->second;
}

void LiveRegistry::shut_down() {
  std::vector<std::shared_ptr<LiveSession>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, s] : sessions_) all.push_back(s);
  }
  for (auto& s : all) s->shut_down();
}

bool LiveRegistry::store_piece(const std::string& session_id, int generation, int64_t seq, int64_t start_sample,
                               const int16_t* pcm, std::size_t n) {
  auto lease = services_.pool.acquire();
  return commands::persist_piece(*lease, session_id, generation, seq, start_sample,
                                 std::string(reinterpret_cast<const char*>(pcm), n * sizeof(int16_t)));
}

void LiveRegistry::record_final(const std::string& session_id, int generation, int turn_order,
                                const std::vector<WireWord>& words) {
  Json payload{{"turn_order", turn_order}, {"words", Json::array()}};
  for (const auto& w : words) {
    Json j{{"text", w.text}, {"start", w.start_ms}, {"end", w.end_ms}};
    j["confidence"] = w.confidence ? Json(*w.confidence) : Json(nullptr);
    payload["words"].push_back(std::move(j));
  }
  auto lease = services_.pool.acquire();
  commands::record_turn(*lease, session_id, generation, turn_order, payload);
}

std::vector<std::string> LiveRegistry::finals_after(const std::string& session_id, int turn_order, Dialect d) {
  std::vector<Json> turns;
  {
    auto lease = services_.pool.acquire();
    turns = commands::turns_after(*lease, session_id, turn_order);
  }
  std::vector<std::string> out;
  for (const auto& t : turns) {
    std::vector<WireWord> words;
    for (const auto& w : t.at("words"))
      words.push_back(WireWord{w.at("text").get<std::string>(), w.at("start").get<int64_t>(),
                               w.at("end").get<int64_t>(), optional_field<double>(w, "confidence"), true});
    out.push_back(turn_message(t.at("turn_order").get<int>(), true, words, d));
  }
  return out;
}

Settlement LiveRegistry::end_session(const std::string& session_id, const std::string& reason,
                                     std::chrono::microseconds session_age) {
  auto lease = services_.pool.acquire();
  auto end = commands::end_session(services_.store, *lease, session_id, reason, meta_of(session_id));
  Settlement s;
  s.audio_seconds = static_cast<double>(end.samples) / scribe::realtime::kSampleRate;
  s.session_seconds = std::chrono::duration<double>(session_age).count();
  s.billed_seconds = end.billed_seconds;
  s.charge_usd = money::to_usd(end.charge);
  s.reason = end.reason.empty() ? reason : end.reason;
  return s;
}

void LiveRegistry::heartbeat_loop() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, std::chrono::seconds(settings_.heartbeat_seconds), [&] { return stopping_; })) return;
    }
    std::vector<std::shared_ptr<LiveSession>> all;
    {
      std::lock_guard lock(mu_);
      for (auto& [id, s] : sessions_) all.push_back(s);
    }
    for (auto& s : all) {
      try {
        auto lease = services_.pool.acquire();
        auto beat = commands::heartbeat(*lease, s->id(), s->generation());
        s->heartbeat_tick(beat == commands::Heartbeat::EndRequested || beat == commands::Heartbeat::Ended,
                          beat == commands::Heartbeat::Superseded);
      } catch (const std::exception& e) {
        log::warn("realtime heartbeat failed", {{"session_id", s->id()}, {"error", e.what()}});
      }
    }
  }
}

}  // namespace scribe::api::realtime
