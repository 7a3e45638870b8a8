#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/time.h"
#include "domain/money.h"
#include "domain/plans.h"
#include "eventstore/event.h"

// The Transcription aggregate: one stream per transcription, from quote or
// creation through attempts to completion, failure or deletion.
namespace scribe::transcription {

std::string stream_id(int64_t id);
std::string hold_id(int64_t id, int attempt);

// Statuses of the spec; `processing` with stage `queued` after creation.
inline constexpr const char* kQuoted = "quoted";
inline constexpr const char* kProcessing = "processing";
inline constexpr const char* kCompleted = "completed";
inline constexpr const char* kFailed = "failed";
inline constexpr const char* kCancelled = "cancelled";

bool is_active(const std::string& status);
bool is_terminal(const std::string& status);

// A create or quote request after validation (api/ turns JSON into this).
struct Request {
  std::string source;  // video_site | platform_url | external_url | upload
  std::optional<std::string> url;
  std::optional<std::string> upload_id;  // normalized
  std::optional<std::string> original_filename;
  std::optional<double> duration_seconds;
  std::string language = "auto";
  std::string pipeline_code = "standard";
  std::vector<std::string> addons;
  std::optional<money::Micros> max_charge;
  std::optional<std::string> callback_url;
  std::optional<std::string> client_reference;
  std::optional<std::string> title;  // from the probe or the file name
};

struct State {
  bool exists = false;
  int64_t id = 0;
  int64_t account_id = 0;
  std::optional<int64_t> key_id;  // the key that created it
  std::string status;
  std::string stage;
  int attempt = 0;
  bool deleted = false;
  money::Micros last_charge = 0;            // what the current attempt holds
  int64_t billed_seconds = 0;               // the seconds that hold covers
  std::optional<std::string> hold;          // the current attempt's hold (none when it costs 0)
  std::optional<money::Micros> max_charge;  // the current attempt's ceiling
  std::optional<double> measured_seconds;   // the current attempt's measured length
  int regen_count = 0;                      // posting-chapters regenerations since the last completion
  // A realtime session's transcription: its first attempt was paid by the
  // session's hold (domain/realtime.h), so it places, measures and settles
  // no money of its own.
  bool prepaid = false;
  double duration_seconds = 0;
  int64_t version = 0;
};

void apply(State& s, const std::string& type, const Json& data);
State fold(const std::vector<eventstore::RecordedEvent>& events);

// Pure checks of a request against the spec's rules and the plan; throws
// scribe::Error with the spec's code. `duration` is the known or probed length.
void check_request(const Request& r);
void check_plan_length(double duration_seconds, plans::Tier tier);
void check_max_charge(std::optional<money::Micros> max_charge, money::Micros charge);

// A title as stored and shown (the upload's original_filename, a probed or
// container title): every run of control characters (C0, DEL, C1) and other
// line breaks (U+2028, U+2029), with the spaces around it, becomes one space,
// and spaces at either end go, so a title is always one line (the .md export
// puts it in a heading). nullopt when nothing is left.
std::optional<std::string> clean_title(const std::optional<std::string>& title);

// Upload ids: "tus/<id>+<token>" and "tus/<id>" both name the upload "tus/<id>";
// presigned uploads are "upl_<id>". Returns nullopt when not of either form.
std::optional<std::string> normalize_upload_id(const std::string& raw);

// Events. Payload fields are the Request's plus pricing and ids.
eventstore::NewEvent quoted(int64_t id, int64_t account_id, std::optional<int64_t> key_id, const Request& r,
                            int64_t billed_seconds, money::Micros charge, TimePoint expires_at);
eventstore::NewEvent created(int64_t id, int64_t account_id, std::optional<int64_t> key_id, const Request& r,
                             int64_t billed_seconds, money::Micros charge, const std::string& hold);
// Refused unless the transcription failed; returns the TranscriptionRetried event.
eventstore::NewEvent retried(const State& s, int64_t billed_seconds, money::Micros charge, const std::string& hold,
                             std::optional<money::Micros> max_charge);
eventstore::NewEvent deleted(const State& s);
// The pipeline's progress on the current attempt: nullopt when `attempt` is
// not the current processing attempt (retried, finished or deleted), so a
// worker that lost its job records nothing. Stages, in order: queued,
// downloading, decoding, transcribing, diarizing, enriching (then completed).
std::optional<eventstore::NewEvent> stage_changed(const State& s, int attempt, const std::string& stage);
bool is_pipeline_stage(const std::string& stage);

// Reads of a completed transcription's content (/transcript, /subtitles,
// /timestamps, regeneration) on one in another status: throws 409 not_ready
// with the spec's reason (transcription_processing with retry_after,
// transcription_failed, transcription_cancelled, not_started) and `status`.
void require_completed(const std::string& status);

// Regenerating the posting-chapters cache: refused (429
// regen_limit_exceeded) after limits::kRegenerationsPerTranscription since
// the last completion, and unless completed (require_completed). Returns the
// PostingChaptersRegenerated event; `refs` carries `posting` and optionally
// `enrichment` ({key, sha256} each).
eventstore::NewEvent posting_regenerated(const State& s, const std::optional<std::string>& refine_prompt,
                                         const Json& refs);

}  // namespace scribe::transcription
