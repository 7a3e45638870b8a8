#include "domain/clip.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/text.h"
#include "domain/clip_captions.h"
#include "domain/events.h"
#include "domain/limits.h"
#include "domain/signed_link.h"
#include "domain/transcript_artifact.h"

namespace scribe::clip {
namespace {

constexpr money::Micros kMicrosPerStartedMinute = 50'000;  // 0.05 USD
constexpr double kRangeSlackSeconds = 0.05;

Error feature_unavailable(const std::string& field, const std::string& message) {
  return Error("invalid_request", message, {{"field", field}, {"reason", "feature_unavailable"}});
}

Error rate_limited(const std::string& reason, const std::string& message, int64_t retry_after) {
  return Error("rate_limited", message, {{"reason", reason}, {"retry_after", retry_after}});
}

Json opt(const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

std::string stream_id(int64_t clip_id) { return "clip-" + std::to_string(clip_id); }
std::string hold_id(int64_t clip_id) { return "clip-" + std::to_string(clip_id); }

bool is_uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (s[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::optional<std::string> canonical_uuid(std::string_view s) {
  if (!is_uuid(s)) return std::nullopt;
  return to_lower(s);
}

void check_request(const Request& r) {
  if (!std::isfinite(r.start_seconds) || r.start_seconds < 0)
    throw Error::invalid("start_seconds", "start_seconds must be a number of seconds >= 0");
  if (!std::isfinite(r.end_seconds) || r.end_seconds <= r.start_seconds)
    throw Error::invalid("end_seconds", "end_seconds must be greater than start_seconds");
  const double len = r.clip_seconds();
  if (len < limits::kClipMinSeconds - 1e-9 || len > limits::kClipMaxSecondsWhereEnabled + 1e-9)
    throw Error::invalid("end_seconds", "a clip lasts 1 to 60 seconds (end_seconds - start_seconds)");
  if (len > limits::kClipMaxSeconds + 1e-9)
    throw feature_unavailable("end_seconds", "clips longer than 60 seconds are not available on this service");
  if (!clips::parse_aspect(r.aspect)) throw Error::invalid("aspect", "aspect must be one of 9:16, 1:1, 16:9");
  if (r.style == "highlight" || r.style == "boxed" || r.style == "none")
    throw feature_unavailable("style", "style '" + r.style + "' is not available; use captions, karaoke or minimal");
  if (!clips::parse_style(r.style)) throw Error::invalid("style", "style must be one of captions, karaoke, minimal");
  if (r.output != "audiogram" && r.output != "video" && r.output != "audio")
    throw Error::invalid("output", "output must be one of audiogram, video, audio");
  if (!clips::parse_position(r.caption_position))
    throw Error::invalid("caption_position", "caption_position must be one of upper, middle, lower");
  if (r.words_per_line < limits::kClipWordsPerLineMin || r.words_per_line > limits::kClipWordsPerLineMax)
    throw Error::invalid("words_per_line", "words_per_line must be an integer from 1 to 6");
  if (!clips::parse_color(r.highlight_color))
    throw Error::invalid("highlight_color", "highlight_color must be a colour #RRGGBB");
  if (r.framing != "blur" && r.framing != "crop") throw Error::invalid("framing", "framing must be blur or crop");
  // Drawn on the picture as one line: no line breaks, tabs or other control
  // characters (the quote's query parameters never carry them either).
  if (r.title && (!is_valid_utf8(*r.title) || has_control_chars(*r.title)))
    throw Error::invalid("title", "title must be UTF-8 text without control characters");
  if (r.title && utf8_length(*r.title) > static_cast<std::size_t>(limits::kClipTitleMaxChars))
    throw Error::invalid("title", "title must be at most 120 characters");
  if (r.client_nonce && !is_uuid(*r.client_nonce))
    throw Error::invalid("client_nonce", "client_nonce must be a UUID (8-4-4-4-12 hexadecimal digits)");
}

void check_range(const Request& r, double transcription_seconds) {
  if (r.end_seconds > transcription_seconds + kRangeSlackSeconds)
    throw Error("invalid_request",
                "end_seconds is past the end of the recording (" + std::to_string(transcription_seconds) + " s)",
                {{"field", "end_seconds"}, {"duration_seconds", transcription_seconds}});
}

money::Micros charge(double clip_seconds) {
  const auto minutes = static_cast<int64_t>(std::ceil(std::max(clip_seconds, 1e-9) / 60.0 - 1e-9));
  return std::max<int64_t>(1, minutes) * kMicrosPerStartedMinute;
}

int in_progress(const account::State& acc) {
  return static_cast<int>(std::count_if(acc.open_holds.begin(), acc.open_holds.end(),
                                        [](const auto& h) { return h.second.purpose == "clip"; }));
}

void check_admission(const account::State& acc, bool starts_video_download, TimePoint at) {
  if (in_progress(acc) >= limits::kClipsInProgressMax)
    throw rate_limited("clips_in_progress",
                       "more than " + std::to_string(limits::kClipsInProgressMax) +
                           " clips would be queued or rendering for this account; retry when one finishes",
                       30);
  if (!starts_video_download) return;
  const TimePoint since = at - std::chrono::hours(24);
  std::vector<TimePoint> recent;
  for (auto t : acc.video_downloads)
    if (t > since) recent.push_back(t);
  if (static_cast<int>(recent.size()) < limits::kSourceVideoDownloadsPerDay) return;
  std::sort(recent.begin(), recent.end());
  // A slot frees when the oldest download of the window leaves it.
  const auto wait = std::chrono::duration_cast<std::chrono::seconds>(recent.front() + std::chrono::hours(24) - at);
  throw rate_limited("source_video_daily_cap",
                     "more than " + std::to_string(limits::kSourceVideoDownloadsPerDay) +
                         " new source-video downloads in 24 hours for this account",
                     std::max<int64_t>(1, wait.count() + 1));
}

eventstore::NewEvent accepted(int64_t account_id, int64_t clip_id, int64_t transcription_id, bool video_download,
                              TimePoint at) {
  return {events::kClipAccepted,
          {{"account_id", account_id},
           {"clip_id", clip_id},
           {"transcription_id", transcription_id},
           {"video_download", video_download},
           {"accepted_at", to_iso8601(at)}}};
}

eventstore::NewEvent requested(int64_t clip_id, int64_t account_id, std::optional<int64_t> key_id, const Request& r,
                               money::Micros charge, bool video_download, TimePoint at) {
  return {events::kClipRequested,
          {{"clip_id", clip_id},
           {"account_id", account_id},
           {"transcription_id", r.transcription_id},
           {"key_id", key_id ? Json(*key_id) : Json(nullptr)},
           {"start_seconds", r.start_seconds},
           {"end_seconds", r.end_seconds},
           {"aspect", r.aspect},
           {"style", r.style},
           {"output", r.output},
           {"caption_position", r.caption_position},
           {"words_per_line", r.words_per_line},
           {"highlight_color", r.highlight_color},
           {"framing", r.framing},
           {"rights_affirmed", r.rights_affirmed},
           {"title", opt(r.title)},
           // Kept canonical: the nonce a later request is compared with.
           {"client_nonce",
            r.client_nonce ? Json(canonical_uuid(*r.client_nonce).value_or(*r.client_nonce)) : Json(nullptr)},
           {"callback_url", opt(r.callback_url)},
           {"charge_micros", charge},
           {"hold_id", hold_id(clip_id)},
           {"video_download", video_download},
           {"requested_at", to_iso8601(at)}}};
}

namespace {

// The stored view of a just-requested clip (see to_json()).
Json initial_view(const Json& d) {
  Json v = Json::object();
  for (const char* k :
       {"transcription_id", "start_seconds", "end_seconds", "aspect", "style", "output", "caption_position",
        "words_per_line", "highlight_color", "framing", "rights_affirmed", "title", "charge_micros"})
    v[k] = d.contains(k) ? d.at(k) : Json(nullptr);
  v["status"] = kQueued;
  v["duration_seconds"] = nullptr;
  v["file"] = nullptr;
  v["error"] = nullptr;
  v["created_at"] = d.value("requested_at", "");
  v["completed_at"] = nullptr;
  return v;
}

}  // namespace

void apply(State& s, const std::string& type, const Json& d) {
  if (type == events::kClipRequested) {
    s.exists = true;
    s.id = d.at("clip_id").get<int64_t>();
    s.account_id = d.at("account_id").get<int64_t>();
    if (d.contains("key_id") && !d.at("key_id").is_null()) s.key_id = d.at("key_id").get<int64_t>();
    s.status = kQueued;
    s.hold = d.at("hold_id").get<std::string>();
    s.charge = d.at("charge_micros").get<int64_t>();
    s.requested = d;
  } else if (type == events::kClipCompleted) {
    s.status = kCompleted;
    s.charge = d.at("charge_micros").get<int64_t>();
  } else if (type == events::kClipFailed) {
    s.status = kFailed;
    s.charge = 0;
  }
}

State fold(const std::vector<eventstore::RecordedEvent>& events) {
  State s;
  for (const auto& e : events) {
    apply(s, e.type, e.data);
    s.version = e.version;
  }
  return s;
}

namespace {

eventstore::NewEvent outcome(const State& s, const char* type, Json view, Json extra) {
  const Json& q = s.requested;
  Json d = {{"clip_id", s.id},
            {"account_id", s.account_id},
            {"transcription_id", q.at("transcription_id")},
            {"key_id", s.key_id ? Json(*s.key_id) : Json(nullptr)},
            {"callback_url", q.value("callback_url", Json(nullptr))},
            {"clip", std::move(view)}};
  for (auto& [k, v] : extra.items()) d[k] = v;
  return {type, std::move(d)};
}

}  // namespace

std::optional<eventstore::NewEvent> completed(const State& s, const Rendered& r, money::Micros charged, TimePoint at) {
  if (!s.exists || s.status != kQueued) return std::nullopt;
  Json view = initial_view(s.requested);
  view["status"] = kCompleted;
  view["duration_seconds"] = std::round(r.duration_seconds * 1000.0) / 1000.0;
  view["charge_micros"] = charged;
  view["file"] = {{"name", r.file_name},
                  {"content_type", r.content_type},
                  {"bytes", r.bytes},
                  {"key", r.file_key},
                  {"srt_key", r.srt_key}};
  view["completed_at"] = to_iso8601(at);
  return outcome(s, events::kClipCompleted, std::move(view), {{"charge_micros", charged}});
}

std::optional<eventstore::NewEvent> failed(const State& s, const std::string& code, const std::string& message,
                                           TimePoint at) {
  if (!s.exists || s.status != kQueued) return std::nullopt;
  Json view = initial_view(s.requested);
  view["status"] = kFailed;
  view["charge_micros"] = 0;
  view["error"] = {{"code", code}, {"message", message}};
  view["completed_at"] = to_iso8601(at);
  return outcome(s, events::kClipFailed, std::move(view), {{"error", view["error"]}, {"charge_micros", 0}});
}

Json requested_view(const Json& requested_event_data) { return initial_view(requested_event_data); }

std::string source_audio_key(int64_t transcription_id) {
  return transcript::transcription_prefix(transcription_id) + "source/audio.mka";
}
std::string audio_key(int64_t transcription_id, const std::optional<std::string>& upload_id) {
  return upload_id ? "uploads/" + *upload_id : source_audio_key(transcription_id);
}
std::string source_video_key(int64_t transcription_id) {
  return transcript::transcription_prefix(transcription_id) + "source/video";
}
std::string file_key(int64_t transcription_id, int64_t clip_id, const std::string& name) {
  return transcript::transcription_prefix(transcription_id) + "clips/" + std::to_string(clip_id) + "/" + name;
}

namespace {
std::string link_scope(int64_t clip_id, const std::string& name) {
  return "clip-file:" + std::to_string(clip_id) + ":" + name;
}
}  // namespace

std::string link_signature(const std::string& secret, int64_t clip_id, const std::string& name, int64_t expires_unix) {
  return signed_link::signature(secret, link_scope(clip_id, name), expires_unix);
}

bool verify_link(const std::string& secret, int64_t clip_id, const std::string& name, int64_t expires_unix,
                 const std::string& signature, int64_t now_unix) {
  return signed_link::verify(secret, link_scope(clip_id, name), expires_unix, signature, now_unix);
}

Json to_json(const Json& view, int64_t clip_id, const std::string& public_url, const std::string& link_secret,
             TimePoint now) {
  Json out = {{"id", clip_id}};
  for (const char* k :
       {"transcription_id", "status", "start_seconds", "end_seconds", "duration_seconds", "aspect", "style", "output",
        "title", "caption_position", "words_per_line", "highlight_color", "framing", "rights_affirmed"})
    out[k] = view.contains(k) ? view.at(k) : Json(nullptr);
  out["charge_usd"] = money::to_usd(view.value("charge_micros", int64_t{0}));
  out["file_url"] = nullptr;
  out["file_content_type"] = nullptr;
  out["srt_url"] = nullptr;
  out["mp4_url"] = nullptr;
  out["mp4_url_expires_at"] = nullptr;
  const Json& file = view.contains("file") ? view.at("file") : Json(nullptr);
  if (view.value("status", "") == kCompleted && file.is_object()) {
    const int64_t expires = to_unix_micros(now) / 1'000'000 + limits::kClipLinkTtlSeconds;
    auto link = [&](const std::string& name) {
      return public_url + "/clips/files/" + std::to_string(clip_id) + "/" + name +
             "?expires=" + std::to_string(expires) +
             "&signature=" + link_signature(link_secret, clip_id, name, expires);
    };
    const std::string name = file.value("name", "");
    const std::string type = file.value("content_type", "");
    out["file_url"] = link(name);
    out["file_content_type"] = type;
    out["srt_url"] = link("clip.srt");
    if (type == "video/mp4") {
      out["mp4_url"] = out["file_url"];
      out["mp4_url_expires_at"] = to_iso8601(from_unix_micros(expires * 1'000'000));
    }
  }
  out["error"] = view.contains("error") ? view.at("error") : Json(nullptr);
  out["created_at"] = view.value("created_at", Json(nullptr));
  out["completed_at"] = view.contains("completed_at") ? view.at("completed_at") : Json(nullptr);
  return out;
}

}  // namespace scribe::clip
