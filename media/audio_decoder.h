#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

// Decodes the first audio stream of any container FFmpeg reads (mp3, wav,
// m4a/mp4/aac, ogg/opus, webm, flac, mov, avi) to 16 kHz mono int16,
// streaming: samples are handed to the sink in chunks as they are decoded, so
// memory does not grow with the file's length.
namespace scribe::media {

// Everything after the decoder works on 16 kHz mono signed 16-bit PCM.
inline constexpr int kSampleRate = 16000;

// A media file the pipeline cannot use. `code` is the failure code recorded
// on the transcription (documented in api/openapi.yaml):
//   media_undecodable  not a media file FFmpeg can open or decode
//   media_no_audio     a media file without an audio stream
//   media_truncated    the stream ends early or breaks off with errors after
//                      some audio was decoded
class MediaError : public std::runtime_error {
 public:
  MediaError(std::string code, const std::string& message) : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

struct DecodedInfo {
  int64_t samples = 0;               // 16 kHz samples handed to the sink
  double duration_seconds = 0;       // samples / 16000
  double container_duration = 0;     // what the container declares (0 if unknown)
  std::optional<std::string> title;  // container metadata "title", if any
};

using PcmSink = std::function<void(const int16_t* samples, size_t count)>;

// Throws MediaError. The sink may throw to abort decoding (the exception
// propagates unchanged).
DecodedInfo decode_audio(const std::string& path, const PcmSink& sink);

}  // namespace scribe::media
