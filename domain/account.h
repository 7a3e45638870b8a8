#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/time.h"
#include "domain/api_key.h"
#include "domain/money.h"
#include "domain/plans.h"
#include "eventstore/event.h"

// The Account aggregate: who the customer is, their plan, their wallet and
// their API keys. Every decision about money and keys is made here, on the
// state folded from the account's own stream, never on a projection.
namespace scribe::account {

std::string stream_id(int64_t account_id);

struct KeyState {
  int64_t id = 0;
  apikey::Permission permission = apikey::Permission::Full;
  std::optional<money::Micros> monthly_cap;
  std::optional<TimePoint> expires_at;
  bool revoked = false;
};

// Money reserved for work in flight; settled (charged) or released exactly once.
struct Hold {
  money::Micros amount = 0;
  std::optional<int64_t> key_id;
  std::string month;    // "YYYY-MM" when placed
  std::string purpose;  // "transcription", "clip", ...
};

struct State {
  bool exists = false;
  int64_t id = 0;
  std::string email;
  plans::Tier plan = plans::Tier::Free;
  money::Micros balance = 0;
  std::map<int64_t, KeyState> keys;
  std::map<std::string, Hold> open_holds;    // by hold id
  std::map<std::string, bool> closed_holds;  // hold ids settled or released
  // Settled spend per key and month ("YYYY-MM"), for monthly caps.
  std::map<std::pair<int64_t, std::string>, money::Micros> key_spend;
  // Jobs accepted, for the rolling fair-use window. The billed seconds of an
  // attempt follow its measured length once the worker has measured it.
  struct Accepted {
    TimePoint at;
    int64_t billed_seconds = 0;
    int64_t transcription_id = 0;
    int attempt = 0;
  };
  std::vector<Accepted> accepted;
  // When clips started a new download of a source video (ClipAccepted with
  // video_download), for the daily cap of domain/clip.h.
  std::vector<TimePoint> video_downloads;
  int64_t version = 0;  // stream version this state was folded to

  int active_keys(TimePoint at) const;
  money::Micros held() const;
  money::Micros available() const { return balance - held(); }
  money::Micros key_held(int64_t key_id) const;
  // Billed seconds accepted in (at - window, at].
  int64_t accepted_seconds_since(TimePoint since) const;
};

// Folds one event into the state (evolve). Unknown event types are ignored so
// that new events do not break old code paths.
void apply(State& state, const std::string& type, const Json& data);
State fold(const std::vector<eventstore::RecordedEvent>& events);

// Decisions: each returns the events to append or throws scribe::Error.
std::vector<eventstore::NewEvent> open(int64_t account_id, const std::string& email, plans::Tier plan);
std::vector<eventstore::NewEvent> deposit(const State& s, money::Micros amount, const std::string& reference);
std::vector<eventstore::NewEvent> change_plan(const State& s, plans::Tier to);

struct NewKey {
  int64_t key_id = 0;
  std::string name;
  std::string key_hash;
  std::string key_prefix;
  apikey::Permission permission = apikey::Permission::Full;
  std::optional<money::Micros> monthly_cap;
  std::optional<TimePoint> expires_at;
};
std::vector<eventstore::NewEvent> create_key(const State& s, const NewKey& key, TimePoint at);
std::vector<eventstore::NewEvent> revoke_key(const State& s, int64_t key_id);

}  // namespace scribe::account
