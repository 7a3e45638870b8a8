#include "domain/transcript_revision.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "common/text.h"
#include "domain/events.h"
#include "domain/limits.h"

namespace scribe::revision {
namespace {

std::string path(const std::string& prefix, std::size_t i, const char* field) {
  return prefix + "[" + std::to_string(i) + "]." + field;
}

int64_t integer_at(const Json& obj, const std::string& field_path, const char* key) {
  if (!obj.contains(key)) throw Error::invalid(field_path, field_path + " is required");
  const Json& v = obj.at(key);
  if (!v.is_number_integer()) throw Error::invalid(field_path, field_path + " must be an integer (milliseconds)");
  return v.get<int64_t>();
}

// Trimmed one-line text of 1..max_chars code points.
std::string text_at(const Json& v, const std::string& field_path, std::size_t max_chars) {
  if (!v.is_string()) throw Error::invalid(field_path, field_path + " must be a string");
  const std::string& raw = v.get_ref<const std::string&>();
  if (!is_valid_utf8(raw)) throw Error::invalid(field_path, field_path + " is not valid UTF-8");
  std::string t(trim(raw));
  if (t.empty()) throw Error::invalid(field_path, field_path + " must not be empty");
  if (has_control_chars(t))
    throw Error::invalid(field_path, field_path + " must be one line without control characters");
  if (utf8_length(t) > max_chars)
    throw Error::invalid(field_path, field_path + " is longer than " + std::to_string(max_chars) + " characters");
  return t;
}

void check_speaker(const std::string& s, const Bounds& b, const std::string& field_path) {
  if (!is_speaker_label(s) && !b.known_speakers.contains(s))
    throw Error::invalid(field_path,
                         field_path + " must be a speaker label SPEAKER_NN or one of the transcript's speakers");
}

bool is_stop_char(char c) { return c == '.' || c == ',' || c == '?' || c == '!' || c == ';' || c == ':'; }

}  // namespace

std::string stream_id(int64_t transcription_id) { return "revisions-" + std::to_string(transcription_id); }

bool is_speaker_label(const std::string& s) {
  return s.size() == 10 && s.starts_with("SPEAKER_") && std::isdigit(static_cast<unsigned char>(s[8])) &&
         std::isdigit(static_cast<unsigned char>(s[9]));
}

Draft parse_draft(const Json& body, const Bounds& bounds) {
  if (!body.is_object()) throw Error::invalid("body", "the body must be a JSON object");
  Draft d;
  if (!body.contains("base_revision"))
    throw Error::invalid("base_revision",
                         "base_revision is required: the revision these cues were edited from, or null for the "
                         "recognized transcript");
  const Json& base = body.at("base_revision");
  if (!base.is_null()) {
    if (!base.is_number_integer() || base.get<int64_t>() < 1)
      throw Error::invalid("base_revision", "base_revision must be null or an integer >= 1");
    d.base_revision = base.get<int64_t>();
  }
  if (!body.contains("cues") || !body.at("cues").is_array())
    throw Error::invalid("cues", "cues must be an array of {start_ms, end_ms, text, speaker}");
  const Json& cues = body.at("cues");
  if (cues.empty()) throw Error::invalid("cues", "cues must hold at least one cue");
  if (cues.size() > static_cast<std::size_t>(limits::kRevisionMaxCues))
    throw Error::invalid("cues", "cues holds " + std::to_string(cues.size()) + " cues; at most " +
                                     std::to_string(limits::kRevisionMaxCues) + " are accepted");
  std::size_t text_bytes = 0;
  d.cues.reserve(cues.size());
  for (std::size_t i = 0; i < cues.size(); ++i) {
    const Json& c = cues[i];
    const std::string at = "cues[" + std::to_string(i) + "]";
    if (!c.is_object()) throw Error::invalid(at, at + " must be an object");
    Cue cue;
    cue.start_ms = integer_at(c, path("cues", i, "start_ms"), "start_ms");
    cue.end_ms = integer_at(c, path("cues", i, "end_ms"), "end_ms");
    if (cue.start_ms < 0) throw Error::invalid(path("cues", i, "start_ms"), at + ".start_ms must be >= 0");
    if (cue.end_ms <= cue.start_ms)
      throw Error::invalid(path("cues", i, "end_ms"), at + ".end_ms must be greater than its start_ms");
    if (cue.end_ms > bounds.duration_ms)
      throw Error::invalid(path("cues", i, "end_ms"), at + ".end_ms is past the end of the recording (" +
                                                          std::to_string(bounds.duration_ms) + " ms)");
    if (i > 0 && cue.start_ms < d.cues.back().end_ms)
      throw Error::invalid(path("cues", i, "start_ms"),
                           at + " starts before the previous cue ends: cues must be in order and must not overlap");
    if (!c.contains("text")) throw Error::invalid(path("cues", i, "text"), at + ".text is required");
    cue.text = text_at(c.at("text"), path("cues", i, "text"), limits::kRevisionCueTextMaxChars);
    text_bytes += cue.text.size();
    if (text_bytes > limits::kRevisionMaxTextBytes)
      throw Error::invalid(
          "cues", "the cues' text together is over " + std::to_string(limits::kRevisionMaxTextBytes) + " bytes");
    if (c.contains("speaker") && !c.at("speaker").is_null()) {
      const std::string sp_path = path("cues", i, "speaker");
      if (!c.at("speaker").is_string()) throw Error::invalid(sp_path, sp_path + " must be a string or null");
      cue.speaker = c.at("speaker").get<std::string>();
      check_speaker(*cue.speaker, bounds, sp_path);
    }
    d.cues.push_back(std::move(cue));
  }
  if (body.contains("speaker_names") && !body.at("speaker_names").is_null()) {
    const Json& names = body.at("speaker_names");
    if (!names.is_object())
      throw Error::invalid("speaker_names", "speaker_names must be an object of speaker label to display name");
    if (names.size() > static_cast<std::size_t>(limits::kRevisionMaxSpeakerNames))
      throw Error::invalid("speaker_names", "speaker_names has more than " +
                                                std::to_string(limits::kRevisionMaxSpeakerNames) + " names");
    for (const auto& [label, name] : names.items()) {
      const std::string at = "speaker_names." + label;
      check_speaker(label, bounds, at);
      d.speaker_names[label] = text_at(name, at, limits::kSpeakerNameMaxChars);
    }
  }
  return d;
}

void apply(State& s, const std::string& type, const Json& data) {
  if (type == events::kTranscriptRevisionSaved) {
    const int64_t n = data.at("revision").get<int64_t>();
    s.standing.push_back(n);
    s.last_number = std::max(s.last_number, n);
  } else if (type == events::kTranscriptRevisionUndone) {
    const int64_t n = data.at("revision").get<int64_t>();
    std::erase(s.standing, n);
  }
}

State fold(const std::vector<eventstore::RecordedEvent>& events) {
  return eventstore::fold<State>(events, [](State& s, const std::string& t, const Json& d) { apply(s, t, d); });
}

void check_base(const State& s, std::optional<int64_t> base) {
  const auto latest = s.latest();
  if (base == latest) return;
  const std::string now_is = latest ? "revision " + std::to_string(*latest) : "the recognized transcript (null)";
  throw Error("invalid_request",
              "base_revision is not the latest revision: the transcript was changed since it was read; the latest "
              "is " +
                  now_is + ". Read it, apply your edits to it and save again",
              {{"reason", "revision_conflict"},
               {"field", "base_revision"},
               {"latest_revision", latest ? Json(*latest) : Json(nullptr)}},
              409);
}

eventstore::NewEvent saved(const State& s, int64_t transcription_id, int64_t account_id, const Draft& d, TimePoint at) {
  check_base(s, d.base_revision);
  return {events::kTranscriptRevisionSaved,
          {{"transcription_id", transcription_id},
           {"account_id", account_id},
           {"revision", s.last_number + 1},
           {"base_revision", d.base_revision ? Json(*d.base_revision) : Json(nullptr)},
           {"cues", cues_to_json(d.cues)},
           {"speaker_names", names_to_json(d.speaker_names)},
           {"created_at", to_iso8601(at)}}};
}

eventstore::NewEvent undone(const State& s, int64_t transcription_id, int64_t account_id, TimePoint at) {
  const auto latest = s.latest();
  if (!latest) throw Error("not_found", "this transcription has no revision to undo");
  const auto current =
      s.standing.size() > 1 ? Json(s.standing[s.standing.size() - 2]) : Json(nullptr);  // what is current after
  return {events::kTranscriptRevisionUndone,
          {{"transcription_id", transcription_id},
           {"account_id", account_id},
           {"revision", *latest},
           {"current_revision", current},
           {"undone_at", to_iso8601(at)}}};
}

Json cues_to_json(const std::vector<Cue>& cues) {
  Json out = Json::array();
  for (const auto& c : cues)
    out.push_back({{"id", c.id},
                   {"start_ms", c.start_ms},
                   {"end_ms", c.end_ms},
                   {"text", c.text},
                   {"speaker", c.speaker ? Json(*c.speaker) : Json(nullptr)}});
  return out;
}

std::vector<Cue> cues_from_json(const Json& cues) {
  std::vector<Cue> out;
  out.reserve(cues.size());
  for (const auto& c : cues) {
    Cue cue;
    cue.id = c.value("id", int64_t{0});
    cue.start_ms = c.at("start_ms").get<int64_t>();
    cue.end_ms = c.at("end_ms").get<int64_t>();
    cue.text = c.at("text").get<std::string>();
    if (c.contains("speaker") && c["speaker"].is_string()) cue.speaker = c["speaker"].get<std::string>();
    out.push_back(std::move(cue));
  }
  return out;
}

Json names_to_json(const SpeakerNames& names) {
  Json out = Json::object();
  for (const auto& [k, v] : names) out[k] = v;
  return out;
}

SpeakerNames names_from_json(const Json& names) {
  SpeakerNames out;
  if (names.is_object())
    for (const auto& [k, v] : names.items())
      if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

std::vector<transcript::Segment> as_segments(const std::vector<Cue>& cues) {
  std::vector<transcript::Segment> out;
  out.reserve(cues.size());
  for (const auto& c : cues) out.push_back({c.id, c.start_ms, c.end_ms, c.speaker, c.text});
  return out;
}

std::vector<transcript::Word> cue_words(const std::vector<transcript::Segment>& cues,
                                        const std::vector<transcript::Segment>& recognized,
                                        const std::vector<transcript::Word>& recognized_words) {
  // Recognized words by segment id, in order.
  std::map<int64_t, std::pair<std::size_t, std::size_t>> span;  // segment id -> [first, end) into words
  for (std::size_t k = 0; k < recognized_words.size(); ++k) {
    auto [it, fresh] = span.try_emplace(recognized_words[k].segment_id, k, k + 1);
    if (!fresh) it->second.second = k + 1;
  }
  std::map<std::tuple<int64_t, int64_t, std::string, std::optional<std::string>>, int64_t> unedited;
  for (const auto& s : recognized) unedited.emplace(std::make_tuple(s.start_ms, s.end_ms, s.text, s.speaker), s.id);

  std::vector<transcript::Word> out;
  for (const auto& cue : cues) {
    const auto same = unedited.find(std::make_tuple(cue.start_ms, cue.end_ms, cue.text, cue.speaker));
    if (same != unedited.end()) {
      if (const auto words = span.find(same->second); words != span.end()) {
        for (std::size_t k = words->second.first; k < words->second.second; ++k) {
          transcript::Word w = recognized_words[k];
          w.segment_id = cue.id;
          w.speaker = cue.speaker;
          out.push_back(std::move(w));
        }
        continue;
      }
    }
    // Edited: the cue's words, trailing punctuation apart, spread by characters.
    std::vector<transcript::Word> words;
    std::size_t pos = 0;
    const std::string& t = cue.text;
    while (pos < t.size()) {
      while (pos < t.size() && std::isspace(static_cast<unsigned char>(t[pos]))) ++pos;
      std::size_t end = pos;
      while (end < t.size() && !std::isspace(static_cast<unsigned char>(t[end]))) ++end;
      if (end == pos) break;
      std::string piece = t.substr(pos, end - pos);
      std::size_t cut = piece.size();
      while (cut > 0 && is_stop_char(piece[cut - 1])) --cut;
      transcript::Word w;
      if (cut < piece.size()) w.punctuation = piece.substr(cut);
      w.text = piece.substr(0, cut);
      w.speaker = cue.speaker;
      w.segment_id = cue.id;
      words.push_back(std::move(w));
      pos = end;
    }
    int64_t total = 0;
    for (const auto& w : words)
      total +=
          static_cast<int64_t>(transcript::display_length(w.text) + (w.punctuation ? w.punctuation->size() : 0)) + 1;
    const int64_t span_ms = cue.end_ms - cue.start_ms;
    int64_t cum = 0;
    for (auto& w : words) {
      w.start_ms = cue.start_ms + span_ms * cum / std::max<int64_t>(1, total);
      cum += static_cast<int64_t>(transcript::display_length(w.text) + (w.punctuation ? w.punctuation->size() : 0));
      w.end_ms = cue.start_ms + span_ms * cum / std::max<int64_t>(1, total);
      cum += 1;
      out.push_back(std::move(w));
    }
  }
  return out;
}

void apply_names(std::vector<transcript::Segment>& segments, const SpeakerNames& names) {
  if (names.empty()) return;
  for (auto& s : segments)
    if (s.speaker)
      if (auto it = names.find(*s.speaker); it != names.end()) s.speaker = it->second;
}

void apply_names(std::vector<transcript::Word>& words, const SpeakerNames& names) {
  if (names.empty()) return;
  for (auto& w : words)
    if (w.speaker)
      if (auto it = names.find(*w.speaker); it != names.end()) w.speaker = it->second;
}

}  // namespace scribe::revision
