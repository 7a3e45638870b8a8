#include "domain/ask.h"

#include <algorithm>

#include "common/error.h"
#include "domain/events.h"

namespace scribe::ask {
namespace {

std::optional<int64_t> optional_id(const Json& d, const char* key) {
  if (!d.contains(key) || d.at(key).is_null()) return std::nullopt;
  return d.at(key).get<int64_t>();
}

Json id_or_null(const std::optional<int64_t>& id) { return id ? Json(*id) : Json(nullptr); }

TimePoint window_start(TimePoint at) { return at - std::chrono::seconds(kWindowSeconds); }

}  // namespace

std::string allowance_stream_id(int64_t account_id) { return "asks-" + std::to_string(account_id); }
std::string entry_stream_id(int64_t qna_id) { return "qna-" + std::to_string(qna_id); }

Allowance allowance_of(plans::Tier tier) {
  switch (tier) {
    case plans::Tier::Free:
      return {10, 3};
    case plans::Tier::Starter:
      return {100, std::nullopt};
    case plans::Tier::Pro:
      return {200, std::nullopt};
    case plans::Tier::Business:
      return {1000, std::nullopt};
    case plans::Tier::Enterprise:
      // Our decision (OpenAPI): enterprise contracts carry no Q&A cap.
      return {std::nullopt, std::nullopt};
  }
  return {10, 3};
}

int State::asked_since(TimePoint since) const {
  // `asked` is in time order: count from the first inside the window.
  auto first = std::partition_point(asked.begin(), asked.end(), [&](const Asked& a) { return a.at <= since; });
  return static_cast<int>(asked.end() - first);
}

int State::asked_about(int64_t transcription_id) const {
  return static_cast<int>(std::count_if(asked.begin(), asked.end(),
                                        [&](const Asked& a) { return a.transcription_id == transcription_id; }));
}

int64_t State::window_from(TimePoint at) const {
  const TimePoint since = window_start(at);
  auto first = std::partition_point(asked.begin(), asked.end(), [&](const Asked& a) { return a.at <= since; });
  return first == asked.end() ? version + 1 : first->version;
}

void apply(State& s, const std::string& type, const Json& data, int64_t version) {
  if (type != events::kQuestionAsked) return;
  Asked a;
  a.version = version;
  a.at = parse_iso8601(data.at("asked_at").get<std::string>()).value_or(TimePoint{});
  a.transcription_id = optional_id(data, "transcription_id");
  a.qna_id = data.at("qna_id").get<int64_t>();
  // Appends decide at the time they are made, so the stream is in time order;
  // keep it so even if clocks stepped back.
  auto pos =
      std::upper_bound(s.asked.begin(), s.asked.end(), a.at, [](TimePoint t, const Asked& x) { return t < x.at; });
  s.asked.insert(pos, a);
}

State fold(const std::vector<eventstore::RecordedEvent>& events) {
  State s;
  for (const auto& e : events) {
    apply(s, e.type, e.data, e.version);
    s.version = e.version;
  }
  return s;
}

void check(const State& s, const Allowance& a, std::optional<int64_t> transcription_id, TimePoint at) {
  if (transcription_id && a.per_transcript && s.asked_about(*transcription_id) >= *a.per_transcript)
    throw Error("qna_quota_exceeded",
                "this plan allows " + std::to_string(*a.per_transcript) +
                    " questions per transcription and this one has had them all; upgrade the plan to ask more",
                {{"scope", "transcript"}, {"limit", *a.per_transcript}});
  if (!a.per_day) return;
  const TimePoint since = window_start(at);
  if (s.asked_since(since) < *a.per_day) return;
  // The ask that frees a slot is the one that makes the window hold one less
  // than the limit: the (count - limit + 1)-th oldest inside it.
  const int in_window = s.asked_since(since);
  const auto& freeing = s.asked[s.asked.size() - in_window + (in_window - *a.per_day)];
  const auto wait = std::chrono::duration_cast<std::chrono::seconds>(freeing.at + std::chrono::seconds(kWindowSeconds) -
                                                                     at + std::chrono::microseconds(999'999));
  const int64_t retry_after = std::max<int64_t>(1, wait.count());
  throw Error("qna_quota_exceeded",
              "the Q&A allowance of " + std::to_string(*a.per_day) +
                  " questions per 24 hours is used up; the next one frees in " + std::to_string(retry_after) + " s",
              {{"scope", "day"}, {"limit", *a.per_day}, {"retry_after", retry_after}});
}

Remaining remaining_after(const State& s, const Allowance& a, std::optional<int64_t> transcription_id, TimePoint at) {
  Remaining r;
  if (a.per_day) r.per_day = std::max(0, *a.per_day - s.asked_since(window_start(at)) - 1);
  if (transcription_id && a.per_transcript)
    r.per_transcript = std::max(0, *a.per_transcript - s.asked_about(*transcription_id) - 1);
  return r;
}

eventstore::NewEvent asked(const State& s, const Allowance& a, int64_t account_id, int64_t qna_id,
                           std::optional<int64_t> transcription_id, std::optional<int64_t> key_id, TimePoint at) {
  check(s, a, transcription_id, at);
  return {events::kQuestionAsked,
          {{"account_id", account_id},
           {"qna_id", qna_id},
           {"transcription_id", id_or_null(transcription_id)},
           {"key_id", id_or_null(key_id)},
           {"asked_at", to_iso8601(at)},
           {"window_from", s.window_from(at)}}};
}

eventstore::NewEvent answered(const Entry& e) {
  return {events::kQuestionAnswered,
          {{"qna_id", e.qna_id},
           {"account_id", e.account_id},
           {"transcription_id", id_or_null(e.transcription_id)},
           {"key_id", id_or_null(e.key_id)},
           {"question", e.question},
           {"answer", e.answer},
           {"citations", e.citations},
           {"model", e.model},
           {"asked_at", to_iso8601(e.asked_at)}}};
}

eventstore::NewEvent redacted(const Entry& e) {
  return {events::kQuestionRedacted,
          {{"qna_id", e.qna_id}, {"account_id", e.account_id}, {"transcription_id", id_or_null(e.transcription_id)}}};
}

Json redacted_data(const Json& data) {
  Json out = Json::object();
  for (const char* k : {"qna_id", "account_id", "transcription_id", "key_id", "asked_at"})
    if (data.contains(k)) out[k] = data.at(k);
  out["redacted"] = true;
  return out;
}

std::optional<EntryState> fold_entry(const std::vector<eventstore::RecordedEvent>& events) {
  if (events.empty()) return std::nullopt;
  EntryState s;
  for (const auto& ev : events) {
    const Json& d = ev.data;
    s.version = ev.version;
    if (ev.type == events::kQuestionAnswered) {
      s.entry.qna_id = d.at("qna_id").get<int64_t>();
      s.entry.account_id = d.at("account_id").get<int64_t>();
      s.entry.transcription_id = optional_id(d, "transcription_id");
      s.entry.key_id = optional_id(d, "key_id");
      s.entry.question = d.value("question", "");
      s.entry.answer = d.value("answer", "");
      s.entry.citations = d.value("citations", Json::array());
      s.entry.model = d.value("model", "");
      if (d.contains("asked_at"))
        s.entry.asked_at = parse_iso8601(d["asked_at"].get<std::string>()).value_or(TimePoint{});
      if (d.value("redacted", false)) s.redacted = true;
    } else if (ev.type == events::kQuestionRedacted) {
      s.redacted = true;
    }
  }
  return s;
}

Json redacted_answer(const Json& body) {
  Json out = Json::object();
  for (const char* k :
       {"no_answer", "qna_id", "remaining_per_transcript", "remaining_per_day", "remaining_today", "saved", "model"})
    if (body.is_object() && body.contains(k)) out[k] = body.at(k);
  out["answer"] = "";
  out["citations"] = Json::array();
  out["redacted"] = true;
  return out;
}

}  // namespace scribe::ask
