#pragma once
#include <memory>
#include <string>

// A bounded count of things in progress per key, in this process (downloads
// of one clip file): take() gives a hold on one of the key's slots, which is
// free again when the hold's last copy goes, wherever that happens (a
// response body sent, a connection dropped).
namespace scribe::api {

class KeyedSlots {
 public:
  explicit KeyedSlots(int max_per_key);
  // A hold on one of `key`'s slots, or nullptr when all `max_per_key` are taken.
  std::shared_ptr<void> take(const std::string& key);
  // How many of `key`'s slots are held.
  int in_use(const std::string& key) const;

 private:
  struct State;
  // Shared with every hold, so a hold may outlive this object.
  std::shared_ptr<State> state_;
};

}  // namespace scribe::api
