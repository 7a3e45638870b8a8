#include "domain/transcription.h"

#include <cmath>

#include "common/error.h"
#include "common/text.h"
#include "domain/events.h"
#include "domain/limits.h"
#include "domain/pipelines.h"

namespace scribe::transcription {
namespace {

const char* kSources[] = {"video_site", "platform_url", "external_url", "upload"};

Json opt(const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); }

std::optional<std::string> optional_string(const Json& d, const char* key) {
  if (!d.contains(key) || d.at(key).is_null()) return std::nullopt;
  return d.at(key).get<std::string>();
}

// What a new attempt (creation or retry) holds and may cost. Events from
// before max_charge_micros was recorded carry no ceiling.
void take_attempt_money(State& s, const Json& d) {
  s.last_charge = d.at("charge_micros").get<int64_t>();
  s.billed_seconds = d.value("billed_seconds", int64_t{0});
  s.hold = optional_string(d, "hold_id");
  s.max_charge.reset();
  if (d.contains("max_charge_micros") && d.at("max_charge_micros").is_number_integer())
    s.max_charge = d.at("max_charge_micros").get<int64_t>();
  s.measured_seconds.reset();
}

Json request_json(const Request& r) {
  return {{"source", r.source},
          {"url", opt(r.url)},
          {"upload_id", opt(r.upload_id)},
          {"original_filename", opt(r.original_filename)},
          {"duration_seconds", r.duration_seconds ? Json(*r.duration_seconds) : Json(nullptr)},
          {"language", r.language},
          {"pipeline_code", r.pipeline_code},
          {"addons", r.addons},
          {"callback_url", opt(r.callback_url)},
          {"client_reference", opt(r.client_reference)},
          {"title", opt(clean_title(r.title))}};
}

}  // namespace

std::string stream_id(int64_t id) { return "transcription-" + std::to_string(id); }
std::string hold_id(int64_t id, int attempt) {
  return "transcription-" + std::to_string(id) + "-" + std::to_string(attempt);
}

bool is_active(const std::string& status) { return status == kProcessing || status == "queued" || status == "pending"; }
bool is_terminal(const std::string& status) {
  return status == kCompleted || status == kFailed || status == kCancelled;
}

void apply(State& s, const std::string& type, const Json& d) {
  if (type == events::kTranscriptionQuoted) {
    s.exists = true;
    s.id = d.at("transcription_id").get<int64_t>();
    s.account_id = d.at("account_id").get<int64_t>();
    s.status = kQuoted;
    s.stage = kQuoted;
  } else if (type == events::kTranscriptionCreated) {
    s.exists = true;
    s.id = d.at("transcription_id").get<int64_t>();
    s.account_id = d.at("account_id").get<int64_t>();
    s.status = kProcessing;
    s.stage = "queued";
    s.attempt = 1;
    if (d.contains("key_id") && d.at("key_id").is_number_integer()) s.key_id = d.at("key_id").get<int64_t>();
    take_attempt_money(s, d);
    if (d.contains("duration_seconds") && d.at("duration_seconds").is_number())
      s.duration_seconds = d.at("duration_seconds").get<double>();
  } else if (type == events::kTranscriptionLiveStarted) {
    s.exists = true;
    s.id = d.at("transcription_id").get<int64_t>();
    s.account_id = d.at("account_id").get<int64_t>();
    s.status = kProcessing;
    s.stage = "live";
    s.attempt = 1;
    s.prepaid = true;
    if (d.contains("key_id") && d.at("key_id").is_number_integer()) s.key_id = d.at("key_id").get<int64_t>();
  } else if (type == events::kTranscriptionLiveRecorded) {
    // The joined recording's length is known exactly: the worker's
    // measurement finds it already measured and moves no money.
    s.stage = "queued";
    s.duration_seconds = d.at("duration_seconds").get<double>();
    s.measured_seconds = s.duration_seconds;
    s.billed_seconds = d.value("billed_seconds", int64_t{0});
    s.last_charge = d.value("charge_micros", int64_t{0});
  } else if (type == events::kTranscriptionCancelled) {
    s.status = kCancelled;
    s.stage = kCancelled;
  } else if (type == events::kTranscriptionRetried) {
    s.status = kProcessing;
    s.stage = "queued";
    s.attempt = d.at("attempt").get<int>();
    s.prepaid = false;  // a retry is a new paid attempt
    take_attempt_money(s, d);
  } else if (type == events::kTranscriptionMeasured) {
    s.measured_seconds = d.at("duration_seconds").get<double>();
    s.duration_seconds = *s.measured_seconds;
    s.billed_seconds = d.at("billed_seconds").get<int64_t>();
    s.last_charge = d.at("charge_micros").get<int64_t>();
    s.hold = optional_string(d, "hold_id");
  } else if (type == events::kTranscriptionStageChanged) {
    s.stage = d.at("stage").get<std::string>();
  } else if (type == events::kTranscriptionCompleted) {
    s.status = kCompleted;
    s.stage = kCompleted;
    s.regen_count = 0;  // "resets on re-transcription"
  } else if (type == events::kPostingChaptersRegenerated) {
    s.regen_count = d.value("regen_count", s.regen_count + 1);
  } else if (type == events::kTranscriptionFailed) {
    s.status = kFailed;
    s.stage = kFailed;
  } else if (type == events::kTranscriptionDeleted) {
    s.deleted = true;
  }
}

bool is_pipeline_stage(const std::string& stage) {
  static const char* stages[] = {"queued", "downloading", "decoding", "transcribing", "diarizing", "enriching"};
  for (const char* st : stages)
    if (stage == st) return true;
  return false;
}

std::optional<eventstore::NewEvent> stage_changed(const State& s, int attempt, const std::string& stage) {
  if (!is_pipeline_stage(stage)) throw std::invalid_argument("unknown pipeline stage " + stage);
  if (!s.exists || s.deleted || s.status != kProcessing || s.attempt != attempt) return std::nullopt;
  return eventstore::NewEvent{events::kTranscriptionStageChanged,
                              {{"transcription_id", s.id}, {"attempt", attempt}, {"stage", stage}}};
}

void require_completed(const std::string& status) {
  if (status == kCompleted) return;
  Json extras = {{"status", status}};
  std::string message;
  if (is_active(status)) {
    extras["reason"] = "transcription_processing";
    extras["retry_after"] = limits::kNotReadyRetryAfterSeconds;
    message = "the transcription is still processing; retry in 15 s or use /wait";
  } else if (status == kFailed) {
    extras["reason"] = "transcription_failed";
    message = "the transcription failed; POST /retry starts a new attempt";
  } else if (status == kCancelled) {
    extras["reason"] = "transcription_cancelled";
    message = "the transcription was cancelled";
  } else {
    extras["reason"] = "not_started";
    message = "the transcription is '" + status + "' and was never started; waiting does nothing";
  }
  throw Error("not_ready", message, extras);
}

eventstore::NewEvent posting_regenerated(const State& s, const std::optional<std::string>& refine_prompt,
                                         const Json& refs) {
  if (!s.exists || s.deleted) throw Error::not_found("transcription");
  require_completed(s.status);
  if (s.regen_count >= limits::kRegenerationsPerTranscription)
    throw Error("regen_limit_exceeded",
                "this transcription's posting chapters were regenerated " + std::to_string(s.regen_count) +
                    " times, the limit until it is transcribed again",
                {{"regen_count", s.regen_count}, {"regen_limit", limits::kRegenerationsPerTranscription}});
  Json d = {{"transcription_id", s.id},
            {"attempt", s.attempt},
            {"regen_count", s.regen_count + 1},
            {"refine_prompt", refine_prompt ? Json(*refine_prompt) : Json(nullptr)},
            {"posting", refs.at("posting")}};
  if (refs.contains("enrichment")) d["enrichment"] = refs.at("enrichment");
  return {events::kPostingChaptersRegenerated, std::move(d)};
}

State fold(const std::vector<eventstore::RecordedEvent>& events) { return eventstore::fold<State>(events, apply); }

std::optional<std::string> clean_title(const std::optional<std::string>& title) {
  if (!title) return std::nullopt;
  const std::string& s = *title;
  // Bytes of one line break or control character starting at i, or 0.
  auto line_break_at = [&](std::size_t i) -> std::size_t {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return 1;
    const auto next = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
    if (c == 0xC2 && next(1) >= 0x80 && next(1) <= 0x9F) return 2;                       // U+0080-U+009F
    if (c == 0xE2 && next(1) == 0x80 && (next(2) == 0xA8 || next(2) == 0xA9)) return 3;  // U+2028, U+2029
    return 0;
  };
  std::string out;
  bool pending_space = false;  // a run of breaks (and the spaces beside it) not yet written
  for (std::size_t i = 0; i < s.size();) {
    if (std::size_t n = line_break_at(i)) {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      pending_space = true;
      i += n;
    } else if (s[i] == ' ' && pending_space) {
      ++i;
    } else {
      if (pending_space && !out.empty()) out += ' ';
      pending_space = false;
      out += s[i++];
    }
  }
  const std::string_view trimmed = trim(out, " ");
  if (trimmed.empty()) return std::nullopt;
  return std::string(trimmed);
}

std::optional<std::string> normalize_upload_id(const std::string& raw) {
  auto alnum = [](const std::string& s) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
    return true;
  };
  if (raw.rfind("tus/", 0) == 0) {
    std::string rest = raw.substr(4);
    std::string id = rest.substr(0, rest.find('+'));
    if (!alnum(id)) return std::nullopt;
    return "tus/" + id;
  }
  if (raw.rfind("upl_", 0) == 0 && alnum(raw)) return raw;
  return std::nullopt;
}

void check_request(const Request& r) {
  bool known = false;
  for (const char* s : kSources) known = known || r.source == s;
  if (!known) throw Error::invalid("source", "source must be one of video_site, platform_url, external_url, upload");
  if (r.source == "upload") {
    if (!r.upload_id) throw Error::invalid("upload_id", "upload_id is required for source upload");
    if (!r.duration_seconds) throw Error::invalid("duration_seconds", "duration_seconds is required for source upload");
  } else if (!r.url) {
    throw Error::invalid("url", "url is required for source " + r.source);
  }
  if (r.duration_seconds && !(*r.duration_seconds > 0 && std::isfinite(*r.duration_seconds)))
    throw Error::invalid("duration_seconds", "duration_seconds must be a number > 0");
  if (r.language != "auto") {
    bool supported = false;
    for (const auto& p : pipelines::catalogue())
      if (p.code == r.pipeline_code)
        for (const auto& l : p.languages) supported = supported || l.code == r.language;
    if (!supported)
      throw Error("unsupported_language",
                  "language '" + r.language + "' is not supported by pipeline " + r.pipeline_code +
                      "; use 'auto' or one of GET /api/v1/pipelines",
                  {{"field", "language"}});
  }
  if (r.addons.size() > static_cast<std::size_t>(limits::kMaxAddons))
    throw Error::invalid("addons", "addons may have at most " + std::to_string(limits::kMaxAddons) + " entries");
  // No add-on exists for the embedded pipeline: diarization is built in.
  if (!r.addons.empty())
    throw Error("addon_not_supported",
                "addon '" + r.addons.front() + "' is not supported by pipeline " + r.pipeline_code +
                    "; omit addons (speaker labels are built in)",
                {{"field", "addons"}});
  if (r.client_reference &&
      (r.client_reference->empty() ||
       utf8_length(*r.client_reference) > static_cast<std::size_t>(limits::kClientReferenceMaxLength) ||
       has_control_chars(*r.client_reference) || !is_valid_utf8(*r.client_reference)))
    throw Error::invalid("client_reference",
                         "client_reference must be 1-200 characters of UTF-8 without control characters "
                         "(U+0000-U+001F, U+007F-U+009F)");
}

void check_plan_length(double duration_seconds, plans::Tier tier) {
  int cap = plans::limits_of(tier).max_file_minutes;
  if (duration_seconds > cap * 60.0)
    throw Error("invalid_request",
                "the file is " + std::to_string(static_cast<int64_t>(std::ceil(duration_seconds / 60))) +
                    " minutes long; the " + std::string(plans::name(tier)) + " plan's cap is " + std::to_string(cap) +
                    " minutes per file",
                {{"field", "duration_seconds"}, {"max_file_minutes", cap}});
}

void check_max_charge(std::optional<money::Micros> max_charge, money::Micros charge) {
  if (max_charge && charge > *max_charge)
    throw Error("max_charge_exceeded",
                "the charge of " + format_number(money::to_usd(charge)) +
                    " USD is above max_charge_usd; nothing was "
                    "created or held",
                {{"charge_usd", money::to_usd(charge)}, {"max_charge_usd", money::to_usd(*max_charge)}});
}

eventstore::NewEvent quoted(int64_t id, int64_t account_id, std::optional<int64_t> key_id, const Request& r,
                            int64_t billed_seconds, money::Micros charge, TimePoint expires_at) {
  Json d = request_json(r);
  d["transcription_id"] = id;
  d["account_id"] = account_id;
  d["key_id"] = key_id ? Json(*key_id) : Json(nullptr);
  d["billed_seconds"] = billed_seconds;
  d["charge_micros"] = charge;
  d["expires_at"] = to_iso8601(expires_at);
  return {events::kTranscriptionQuoted, std::move(d)};
}

eventstore::NewEvent created(int64_t id, int64_t account_id, std::optional<int64_t> key_id, const Request& r,
                             int64_t billed_seconds, money::Micros charge, const std::string& hold) {
  Json d = request_json(r);
  d["transcription_id"] = id;
  d["account_id"] = account_id;
  d["key_id"] = key_id ? Json(*key_id) : Json(nullptr);
  d["attempt"] = 1;
  d["billed_seconds"] = billed_seconds;
  d["charge_micros"] = charge;
  d["hold_id"] = charge > 0 ? Json(hold) : Json(nullptr);
  d["max_charge_micros"] = r.max_charge ? Json(*r.max_charge) : Json(nullptr);
  return {events::kTranscriptionCreated, std::move(d)};
}

eventstore::NewEvent retried(const State& s, int64_t billed_seconds, money::Micros charge, const std::string& hold,
                             std::optional<money::Micros> max_charge) {
  if (!s.exists || s.deleted) throw Error::not_found("transcription");
  if (s.status != kFailed)
    throw Error("invalid_request", "only a failed transcription can be retried; this one is " + s.status,
                {{"status", s.status}});
  return {events::kTranscriptionRetried,
          {{"transcription_id", s.id},
           {"account_id", s.account_id},
           {"attempt", s.attempt + 1},
           {"billed_seconds", billed_seconds},
           {"charge_micros", charge},
           {"hold_id", charge > 0 ? Json(hold) : Json(nullptr)},
           {"max_charge_micros", max_charge ? Json(*max_charge) : Json(nullptr)}}};
}

eventstore::NewEvent deleted(const State& s) {
  if (!s.exists || s.deleted) throw Error::not_found("transcription");
  return {events::kTranscriptionDeleted, {{"transcription_id", s.id}, {"account_id", s.account_id}}};
}

}  // namespace scribe::transcription
