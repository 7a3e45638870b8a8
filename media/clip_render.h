#pragma once
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/clip_captions.h"

// Renders a clip (the spec's "Clips") with the FFmpeg command-line tools:
//   audiogram  MP4: a waveform (or spectrum) of the audio on a plain
//              background, with the captions (title included) burned in
//   video      MP4: the source video scaled into the aspect, over a blurred
//              copy of itself (blur) or cropped to fill it (crop), captions
//              burned in
//   audio      M4A: the range's audio alone
// H.264 (veryfast and x264_params, CRF 23, yuv420p, 30 fps) and AAC,
// +faststart so a player can start before the download ends. The captions are
// an ASS document from domain/clip_captions, burned in by the `ass` filter
// (libass, fonts through fontconfig). The output is checked with ffprobe:
// every stream must last the range within kDurationTolerance seconds.
namespace scribe::media {

enum class ClipOutput { Audiogram, Video, Audio };
enum class Framing { Blur, Crop };
enum class AudiogramVisual { Waves, Spectrum };

// The spec's spellings ("audiogram", "video", "audio"; "blur", "crop").
std::optional<ClipOutput> parse_clip_output(std::string_view s);
std::optional<Framing> parse_framing(std::string_view s);

inline constexpr double kDurationTolerance = 0.1;  // seconds
inline constexpr int kClipFps = 30;

struct RenderRequest {
  std::string audio_path;                 // any file FFmpeg reads; for video, empty takes the video's own audio
  std::optional<std::string> video_path;  // required for ClipOutput::Video
  double clip_start = 0;                  // seconds in the recording
  double clip_end = 0;
  ClipOutput output = ClipOutput::Audiogram;
  clips::Aspect aspect = clips::Aspect::Portrait;
  Framing framing = Framing::Blur;
  // The captions: a file, or the document itself (written into work_dir for
  // the render and removed after). Neither: no captions. Audio ignores both.
  std::string ass_path;
  std::string ass_text;
  // Where the captions sit, so that the audiogram's waveform keeps clear of
  // them (the title is drawn by the ASS document, not here).
  clips::Position caption_position = clips::Position::Lower;
  std::string title;  // the container's "title" tag when not empty
  AudiogramVisual visual = AudiogramVisual::Waves;
  clips::Rgb background{0x14, 0x1B, 0x2D};
  clips::Rgb wave_color{0x7D, 0xD3, 0xFC};
  std::string work_dir;     // created if missing
  std::string output_path;  // default: work_dir/clip.mp4 or clip.m4a
  std::chrono::seconds timeout{300};
  std::string ffmpeg = "ffmpeg";  // binary name (looked up on PATH) or path
  std::string ffprobe = "ffprobe";
  // FFmpeg's threads (encoder and filters); 0 leaves FFmpeg's default, one
  // per core. A worker running several renders at once should set it.
  int threads = 0;
  // x264's preset. veryfast is the spec'd balance; on a 30 s 9:16 audiogram
  // superfast took about a fifth less CPU for a file two-thirds larger (it
  // also drops x264's macroblock tree, which is what keeps the bits of a
  // still background few).
  std::string x264_preset = "veryfast";
  // Settings over the preset (x264's own syntax; empty: the preset alone).
  // Without B-frames and with the cheapest motion search, a 30 s 9:16
  // audiogram took 30% less CPU (about 20.5 -> 14.5 s) at the same quality
  // (PSNR 47.0 -> 47.3 dB against a lossless render) for a file 16% larger,
  // and a blur-framed video 33% less for a third more bytes: frames that
  // hardly move gain little from B-frames or a finer search.
  std::string x264_params = "bframes=0:me=dia:subme=1";
  // FFmpeg's address space (RLIMIT_AS), so that a filter gone wrong fails the
  // render instead of drawing the host into the OOM killer; 0: no limit. A 9:16
  // render maps well under 1 GiB with a few threads; each thread adds some.
  int memory_limit_mib = 4096;
  // Set by another thread to stop the render (media/process.h); the result
  // then has `cancelled`. Null: runs to its end or its timeout.
  const std::atomic<bool>* cancel = nullptr;
};

struct RenderResult {
  bool ok = false;
  bool cancelled = false;  // stopped through RenderRequest::cancel
  std::string output_path;
  std::string content_type;  // "video/mp4" or "audio/mp4"
  double duration_seconds = 0;
  // When !ok: what went wrong, with the tail of FFmpeg's stderr when it ran.
  std::string error;
  double wall_seconds = 0;  // the whole call, ffprobe check included
  // FFmpeg's own cost, from wait4(): CPU (user + system) and peak resident set.
  double cpu_seconds = 0;
  double peak_rss_mib = 0;
  std::vector<std::string> command;  // the FFmpeg argv, for logs
};

// Never throws for a failed render (a bad input, FFmpeg missing, failing or
// timing out, an output of the wrong length): ok is false and error says why,
// and no output file is left behind.
RenderResult render_clip(const RenderRequest& request);

// The FFmpeg arguments for a request (argv[0] included), the captions read
// from `ass_file` ("" for none) and written to `output_file`. Exposed for tests
// and the benchmark.
std::vector<std::string> ffmpeg_arguments(const RenderRequest& request, const std::string& ass_file,
                                          const std::string& output_file);

// A value as an option of a filter inside a filtergraph: FFmpeg unescapes
// twice (the graph, then the filter's options), so ' : \ [ ] , ; are escaped
// for both.
std::string escape_filter_value(std::string_view value);

}  // namespace scribe::media
