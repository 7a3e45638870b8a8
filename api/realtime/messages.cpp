#include "api/realtime/messages.h"

#include <algorithm>
#include <cmath>

#include "common/time.h"
#include "domain/transcript_text.h"

namespace scribe::api::realtime {
namespace {

BadMessage bad(std::string field, std::string message) { return BadMessage{std::move(field), std::move(message)}; }

// An integer field in [lo, hi]; JSON numbers with a fraction are refused,
// as booleans are (nlohmann calls true a number otherwise).
std::optional<BadMessage> read_int(const Json& o, const char* key, int lo, int hi, std::optional<int>& out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() && !it->is_number_unsigned()) {
    if (it->is_number_float() && std::floor(it->get<double>()) == it->get<double>()) {
      double v = it->get<double>();
      if (v < lo || v > hi)
        return bad(key, std::string(key) + " must be an integer from " + std::to_string(lo) + " to " +
                            std::to_string(hi) + ".");
      out = static_cast<int>(v);
      return std::nullopt;
    }
    return bad(key, std::string(key) + " must be an integer.");
  }
  auto v = it->get<int64_t>();
  if (v < lo || v > hi)
    return bad(key,
               std::string(key) + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ".");
  out = static_cast<int>(v);
  return std::nullopt;
}

std::optional<BadMessage> read_bool(const Json& o, const char* key, std::optional<bool>& out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) return bad(key, std::string(key) + " must be a boolean.");
  out = it->get<bool>();
  return std::nullopt;
}

Json words_json(const std::vector<WireWord>& words, Dialect d) {
  Json a = Json::array();
  for (const auto& w : words) {
    Json j{{"text", w.text}, {"start", w.start_ms}, {"end", w.end_ms}, {"word_is_final", w.final}};
    // AssemblyAI's words always carry a number; a partial's guess has none
    // of ours, and 0 says "not known" without breaking a client's parser.
    j["confidence"] = w.confidence ? Json(transcript::shown_confidence(*w.confidence))
                                   : (d == Dialect::AssemblyAI ? Json(0.0) : Json(nullptr));
    a.push_back(std::move(j));
  }
  return a;
}

std::string iso_of_unix(int64_t t) { return to_iso8601(TimePoint{} + std::chrono::seconds(t)); }

}  // namespace

std::variant<ClientMessage, BadMessage> parse_client_message(std::string_view text, Dialect dialect) {
  Json o = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (o.is_discarded()) return bad("", "A text frame must be one JSON object.");
  if (!o.is_object()) return bad("", "A text frame must be one JSON object.");
  auto t = o.find("type");
  if (t == o.end() || !t->is_string()) return bad("type", "A control message needs a string type.");
  const auto type = t->get<std::string>();
  if (type == "Terminate") return ClientMessage{Terminate{}};
  if (type == "ForceEndpoint") return ClientMessage{ForceEndpoint{}};
  if (type == "KeepAlive") return ClientMessage{KeepAlive{}};
  if (type == "Configure" && dialect == Dialect::Native) {
    Configure c;
    if (auto e = read_int(o, "end_of_turn_silence_ms", 200, 5000, c.end_of_turn_silence_ms)) return *e;
    if (auto e = read_bool(o, "partials", c.partials)) return *e;
    return ClientMessage{c};
  }
  if (type == "UpdateConfiguration" && dialect == Dialect::AssemblyAI) {
    // AssemblyAI's two silence settings: the one used once the model is
    // confident, and the hard ceiling. An endpointer without a confidence
    // has one window: the confident one when given, else the ceiling.
    // The SDK (4.41.5) sends min_turn_silence for both of its spellings;
    // older clients send min_end_of_turn_silence_when_confident.
    Configure c;
    std::optional<int> confident, legacy, ceiling;
    if (auto e = read_int(o, "min_turn_silence", 0, 10000, confident)) return *e;
    if (auto e = read_int(o, "min_end_of_turn_silence_when_confident", 0, 10000, legacy)) return *e;
    if (auto e = read_int(o, "max_turn_silence", 0, 10000, ceiling)) return *e;
    if (!confident) confident = legacy;
    auto chosen = confident ? confident : ceiling;
    if (chosen) c.end_of_turn_silence_ms = std::clamp(*chosen, 200, 5000);
    return ClientMessage{c};
  }
  return bad("type", "Unknown control message type '" + type + "'.");
}

std::optional<BadMessage> check_audio_frame(std::size_t bytes) {
  if (bytes % 2 != 0) return bad("audio", "An audio frame must hold whole 16-bit samples (an even byte count).");
  if (bytes < kMinFrameBytes || bytes > kMaxFrameBytes)
    return bad("audio", "An audio frame must hold 20 to 1000 ms of 16 kHz 16-bit mono PCM (640 to 32000 bytes); got " +
                            std::to_string(bytes) + " bytes.");
  return std::nullopt;
}

std::string join_words(const std::vector<WireWord>& words) {
  std::string s;
  for (const auto& w : words) {
    if (w.text.empty()) continue;
    if (!s.empty()) s += ' ';
    s += w.text;
  }
  return s;
}

std::string begin_message(const BeginInfo& b, Dialect d) {
  if (d == Dialect::AssemblyAI)
    return Json{{"type", "Begin"}, {"id", b.session_id}, {"expires_at", b.expires_at_unix}}.dump();
  Json j{{"type", "Begin"},
         {"session_id", b.session_id},
         {"transcription_id", b.transcription_id},
         {"expires_at", iso_of_unix(b.expires_at_unix)},
         {"cap_minutes", b.cap_minutes},
         {"remaining_cap_seconds", std::round(b.remaining_cap_seconds * 1000) / 1000},
         {"resumed", b.resumed},
         {"audio_received_seconds", std::round(b.audio_received_seconds * 1000) / 1000},
         {"sample_rate", 16000},
         {"end_of_turn_silence_ms", b.end_of_turn_silence_ms},
         {"partials", b.partials}};
  j["last_turn_order"] = b.last_turn_order ? Json(*b.last_turn_order) : Json(nullptr);
  return j.dump();
}

std::string speech_started_message(int64_t timestamp_ms, Dialect) {
  return Json{{"type", "SpeechStarted"}, {"timestamp", timestamp_ms}}.dump();
}

std::string turn_message(int turn_order, bool end_of_turn, const std::vector<WireWord>& words, Dialect d) {
  Json j{{"type", "Turn"},
         {"turn_order", turn_order},
         {"end_of_turn", end_of_turn},
         {"transcript", join_words(words)},
         {"words", words_json(words, d)}};
  if (d == Dialect::AssemblyAI) {
    // Unformatted turns only: the SDK's formatTurns asks for a second,
    // punctuated final that this recognizer does not produce.
    j["turn_is_formatted"] = false;
    j["end_of_turn_confidence"] = end_of_turn ? 1.0 : 0.0;
    j["utterance"] = end_of_turn ? j["transcript"] : Json("");
  }
  return j.dump();
}

std::string warning_message(const std::string& code, const std::string& message, Dialect d) {
  if (d == Dialect::AssemblyAI) {
    // Its warning_code is an integer (the SDK's types, its Python models)
    // and no values are documented: ours carry the close code each warning
    // foretells (3008 session limit, 3007 audio too fast).
    int number = code == "cap_soon" ? 3008 : code == "slow_down" ? 3007 : 3005;
    return Json{{"type", "Warning"}, {"warning_code", number}, {"warning", message}}.dump();
  }
  return Json{{"type", "Warning"}, {"code", code}, {"message", message}}.dump();
}

int dialect_close_code(int native, Dialect d) {
  if (d == Dialect::Native) return native;
  switch (native) {
    case 1000:
    case 1001:
      return native;
    case 4001:  // invalid or expired ticket
    case 4002:  // ticket used
    case 4003:  // not allowed
    case 4004:  // session ended
    case 4012:  // superseded
      return 1008;
    case 4008:  // bad message
      return 3006;
    case 4009:  // too fast
      return 3007;
    case 4010:  // cap reached
    case 4011:  // idle
      return 3008;
    default:
      return 3005;
  }
}

std::string error_message(const std::string& code, const std::string& message, bool resumable, Dialect d,
                          const std::string& field, int close_code) {
  if (d == Dialect::AssemblyAI)
    return Json{{"type", "Error"}, {"error_code", dialect_close_code(close_code, d)}, {"error", message}}.dump();
  Json j{{"type", "Error"}, {"code", code}, {"message", message}, {"resumable", resumable}};
  if (!field.empty()) j["field"] = field;
  return j.dump();
}

std::string termination_message(const TerminationInfo& t, Dialect d) {
  if (d == Dialect::AssemblyAI)
    return Json{{"type", "Termination"},
                {"audio_duration_seconds", static_cast<int64_t>(std::llround(t.audio_seconds))},
                {"session_duration_seconds", static_cast<int64_t>(std::llround(t.session_seconds))}}
        .dump();
  return Json{{"type", "Termination"},
              {"reason", t.reason},
              {"audio_duration_seconds", std::round(t.audio_seconds * 1000) / 1000},
              {"session_duration_seconds", std::round(t.session_seconds * 1000) / 1000},
              {"billed_seconds", t.billed_seconds},
              {"charge_usd", t.charge_usd}}
      .dump();
}

}  // namespace scribe::api::realtime
