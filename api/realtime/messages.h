#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/json.h"

// The realtime stream's messages (docs/realtime_protocol.md): what a client
// may send, parsed strictly, and what the server sends, in two dialects. The
// native one is ours; the AssemblyAI one is Universal-Streaming v3's wire
// (docs/realtime_assemblyai_wire.md) for the /v3/ws alias. Both carry the
// same events, so the session code never knows which it speaks.
namespace scribe::api::realtime {

enum class Dialect { Native, AssemblyAI };

// Client control messages (text frames).
struct Configure {
  std::optional<int> end_of_turn_silence_ms;
  std::optional<bool> partials;
};
struct ForceEndpoint {};
struct KeepAlive {};
struct Terminate {};
using ClientMessage = std::variant<Configure, ForceEndpoint, KeepAlive, Terminate>;

// Why a client frame was refused: the in-band Error's code and field.
struct BadMessage {
  std::string field;
  std::string message;
};

// Parses one text frame; a BadMessage for anything the protocol does not
// allow (not JSON, not an object, unknown type, wrong field type or range).
// The AssemblyAI dialect also takes its own spellings (UpdateConfiguration
// with min_end_of_turn_silence_when_confident / max_turn_silence).
std::variant<ClientMessage, BadMessage> parse_client_message(std::string_view text, Dialect dialect);

// Bounds of an audio frame, in bytes of 16 kHz s16le mono: 20 ms to 1 s.
inline constexpr std::size_t kMinFrameBytes = 640;
inline constexpr std::size_t kMaxFrameBytes = 32000;
// A BadMessage when a binary frame is not a whole number of samples within
// the bounds. The AssemblyAI dialect takes 50-1000 ms as that service does,
// but we accept down to 20 ms there too (what a browser worklet sends).
std::optional<BadMessage> check_audio_frame(std::size_t bytes);

// One word of a Turn. `start_ms`/`end_ms` are session times.
struct WireWord {
  std::string text;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<double> confidence;
  bool final = false;
};

struct BeginInfo {
  std::string session_id;
  int64_t transcription_id = 0;
  int64_t expires_at_unix = 0;
  int cap_minutes = 0;
  double remaining_cap_seconds = 0;
  bool resumed = false;
  std::optional<int> last_turn_order;
  double audio_received_seconds = 0;
  int end_of_turn_silence_ms = 0;
  bool partials = true;
};

struct TerminationInfo {
  std::string reason;  // terminated | deleted | cap_reached | idle
  double audio_seconds = 0;
  double session_seconds = 0;
  int64_t billed_seconds = 0;
  double charge_usd = 0;
};

std::string begin_message(const BeginInfo& b, Dialect d);
std::string speech_started_message(int64_t timestamp_ms, Dialect d);
// A partial (end_of_turn false) or the final of a turn.
std::string turn_message(int turn_order, bool end_of_turn, const std::vector<WireWord>& words, Dialect d);
std::string warning_message(const std::string& code, const std::string& message, Dialect d);
// `close_code` is the native close that follows (AssemblyAI's frame carries
// its own number for it: dialect_close_code).
std::string error_message(const std::string& code, const std::string& message, bool resumable, Dialect d,
                          const std::string& field = "", int close_code = 0);
// The close code a dialect uses for one of ours (domain/realtime.h's table):
// AssemblyAI's SDK reads 4000-4999 as that service's old codes, so the alias
// sends its v3 ones (1008 refused credential, 3005 server error, 3006 bad
// message, 3007 audio too fast, 3008 session limit).
int dialect_close_code(int native, Dialect d);
std::string termination_message(const TerminationInfo& t, Dialect d);

// The transcript of a turn: its words joined by single spaces.
std::string join_words(const std::vector<WireWord>& words);

}  // namespace scribe::api::realtime
