#include "api/keyed_slots.h"

#include <mutex>
#include <unordered_map>

namespace scribe::api {

struct KeyedSlots::State {
  std::mutex mu;
  std::unordered_map<std::string, int> held;  // keys with no hold are erased
  int max = 0;
};

KeyedSlots::KeyedSlots(int max_per_key) : state_(std::make_shared<State>()) { state_->max = max_per_key; }

std::shared_ptr<void> KeyedSlots::take(const std::string& key) {
  {
    std::lock_guard lock(state_->mu);
    int& n = state_->held[key];
    if (n >= state_->max) {
      if (n == 0) state_->held.erase(key);
      return nullptr;
    }
    ++n;
  }
  // The hold is a token whose deleter gives the slot back.
  return std::shared_ptr<void>(new char(0), [state = state_, key](char* token) {
    delete token;
    std::lock_guard lock(state->mu);
    auto it = state->held.find(key);
    if (it != state->held.end() && --it->second <= 0) state->held.erase(it);
  });
}

int KeyedSlots::in_use(const std::string& key) const {
  std::lock_guard lock(state_->mu);
  auto it = state_->held.find(key);
  return it == state_->held.end() ? 0 : it->second;
}

}  // namespace scribe::api
