#include "media/clip_render.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/json.h"
#include "media/process.h"

namespace scribe::media {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string fixed(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string hex(clips::Rgb c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02X%02X%02X", c.r, c.g, c.b);
  return buf;
}

int even(double v) { return std::max(2, static_cast<int>(std::lround(v / 2)) * 2); }

// The video chain from the source video [0:v] to [v], captions excluded.
// Crop: cut to the aspect at the source's size, then scale (scaling first
// would enlarge the part that is thrown away). Blur: the source scaled into
// the frame over a blurred copy of itself, cropped to fill it; the copy is
// made at a tenth of the frame size and scaled up with the fastest scaler,
// since blurred it shows no difference and costs a fraction of a full-size one.
std::string video_chain(const RenderRequest& q, clips::FrameSize f) {
  const std::string w = std::to_string(f.width), h = std::to_string(f.height);
  const std::string fps = "fps=" + std::to_string(kClipFps);
  if (q.framing == Framing::Crop) {
    return "[0:v]" + fps + ",crop=w=min(iw\\,ih*" + w + "/" + h + "):h=min(ih\\,iw*" + h + "/" + w + "),scale=" + w +
           ":" + h + ",setsar=1[v]";
  }
  const std::string small = std::to_string(even(f.width / 10.0)) + ":" + std::to_string(even(f.height / 10.0));
  return "[0:v]" + fps + ",split=2[bgsrc][fgsrc];[bgsrc]scale=" + small +
         ":force_original_aspect_ratio=increase:flags=fast_bilinear,crop=" + small + ",boxblur=8:2,scale=" + w + ":" +
         h + ":flags=fast_bilinear,setsar=1[bg];[fgsrc]scale=" + w + ":" + h +
         ":force_original_aspect_ratio=decrease:force_divisible_by=2,setsar=1[fg];[bg][fg]overlay=(W-w)/2:(H-h)/2[v]";
}

// The audiogram's chain to [v]: the background with the visual over a band of
// the frame that the captions leave free.
std::string audiogram_chain(const RenderRequest& q, clips::FrameSize f, double duration) {
  const bool portrait = f.height > f.width;
  const int band_w = even(f.width * 0.88);
  const int band_h = even(f.height * (portrait ? 0.2 : 0.3));
  // The band's centre: mid-frame, between the title and lower captions; low
  // when the captions take the middle.
  const double centre = q.caption_position == clips::Position::Middle  ? 0.74
                        : q.caption_position == clips::Position::Upper ? 0.62
                                                                       : 0.5;
  const int x = (f.width - band_w) / 2;
  const int y = static_cast<int>(std::lround(f.height * centre)) - band_h / 2;
  const std::string band = std::to_string(band_w) + "x" + std::to_string(band_h);
  const std::string rate = std::to_string(kClipFps);
  std::string visual;
  if (q.visual == AudiogramVisual::Spectrum) {
    // showfreqs steps at most half its 2048-sample window per frame (16 a
    // second at 16 kHz): at 30720 Hz, rate=30 is a step of exactly 1024. Not
    // `fps`: after showfreqs it repeats frames without end at the stream's end
    // (FFmpeg 5.1), and memory grows until the process is killed.
    visual = "aresample=" + std::to_string(1024 * kClipFps) + ",showfreqs=s=" + band +
             ":mode=bar:ascale=sqrt:fscale=log:win_size=2048:rate=" + rate + ":colors=" + hex(q.wave_color);
  } else {
    // showwaves draws one sample per column and so makes sample_rate / width
    // frames a second (about 17 for 16 kHz speech): resampled to width x 30 Hz
    // it makes exactly 30. sqrt: speech rarely comes near full scale, and a
    // linear wave would be a thin line through most of it. Drawn at half the
    // band's size and scaled up: the wave is a filled shape, which looks the
    // same (smoother at its edges), and the encoder then has less fine detail
    // to spend bits and time on (a 30 s 9:16 audiogram: 4.7 MB instead of 6.8
    // with the same x264 settings, some 5% less CPU).
    const int wave_w = even(band_w / 2.0), wave_h = even(band_h / 2.0);
    visual = "aresample=" + std::to_string(wave_w * kClipFps) + ",showwaves=s=" + std::to_string(wave_w) + "x" +
             std::to_string(wave_h) + ":mode=cline:scale=sqrt:n=1:colors=" + hex(q.wave_color) +
             ",format=yuva420p,scale=" + std::to_string(band_w) + ":" + std::to_string(band_h) + ":flags=fast_bilinear";
  }
  // Every full-size frame stays in yuv420p, the encoder's format: left to
  // negotiation, the RGBA of the visual spreads to the whole chain and a
  // full-frame conversion per frame costs more than the rest of the filters.
  return "color=c=" + hex(q.background) + ":s=" + std::to_string(f.width) + "x" + std::to_string(f.height) +
         ":r=" + rate + ":d=" + fixed(duration) + ",format=yuv420p[bg];[0:a]aformat=channel_layouts=mono," + visual +
         ",format=yuva420p[wave];[bg][wave]overlay=x=" + std::to_string(x) + ":y=" + std::to_string(y) +
         ":eof_action=pass:format=yuv420[v]";
}

struct OutputCheck {
  bool ok = false;
  double duration = 0;
  std::string error;
};

// ffprobe of the output: the streams it must have, and every stream (and the
// file) lasting the range within kDurationTolerance. A source shorter than the
// range gives a short stream, which fails here rather than reaching a listener.
OutputCheck check_output(const RenderRequest& q, const std::string& path, double expected) {
  OutputCheck c;
  const std::vector<std::string> argv = {
      q.ffprobe, "-v",   "error",       "-show_entries", "format=duration:stream=codec_type,codec_name,duration",
      "-of",     "json", "file:" + path};
  const ProcessResult r = run_process(argv, std::chrono::seconds(60));
  if (!r.ok()) {
    c.error = "checking the output: " + describe_failure(q.ffprobe, r, std::chrono::seconds(60));
    return c;
  }
  const Json j = Json::parse(r.out, nullptr, false);
  auto number = [](const Json& o, const char* key) {
    if (!o.is_object() || !o.contains(key) || !o[key].is_string()) return -1.0;
    return std::atof(o[key].get<std::string>().c_str());
  };
  if (j.is_discarded() || !j.is_object()) {
    c.error = "checking the output: unreadable ffprobe output";
    return c;
  }
  c.duration = number(j.value("format", Json::object()), "duration");
  bool audio = false, video = false;
  std::string lengths = "file " + fixed(c.duration);
  bool off = std::fabs(c.duration - expected) > kDurationTolerance;
  for (const auto& s : j.value("streams", Json::array())) {
    const std::string type = s.value("codec_type", "");
    audio = audio || type == "audio";
    video = video || type == "video";
    const double d = number(s, "duration");
    if (d < 0) continue;
    lengths += ", " + type + " " + fixed(d);
    off = off || std::fabs(d - expected) > kDurationTolerance;
  }
  if (!audio || (q.output != ClipOutput::Audio && !video)) {
    c.error = "the output lacks its " + std::string(audio ? "video" : "audio") + " stream";
  } else if (off) {
    c.error = "the output does not last the clip's " + fixed(expected) + " s (" + lengths +
              "); does the source end before the range?";
  } else {
    c.ok = true;
  }
  return c;
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

std::optional<ClipOutput> parse_clip_output(std::string_view s) {
  if (s == "audiogram") return ClipOutput::Audiogram;
  if (s == "video") return ClipOutput::Video;
  if (s == "audio") return ClipOutput::Audio;
  return std::nullopt;
}

std::optional<Framing> parse_framing(std::string_view s) {
  if (s == "blur") return Framing::Blur;
  if (s == "crop") return Framing::Crop;
  return std::nullopt;
}

std::string escape_filter_value(std::string_view value) {
  auto escape = [](std::string_view s, std::string_view special) {
    std::string out;
    for (char c : s) {
      if (special.find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
    return out;
  };
  return escape(escape(value, "\\':"), "\\'[],;");
}

std::vector<std::string> ffmpeg_arguments(const RenderRequest& q, const std::string& ass_file,
                                          const std::string& output_file) {
  const double duration = q.clip_end - q.clip_start;
  const std::string ss = fixed(q.clip_start), t = fixed(duration);
  std::vector<std::string> a = {q.ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y"};
  if (q.threads > 0) a.insert(a.end(), {"-filter_complex_threads", std::to_string(q.threads)});
  // Seeking before each input: fast, and exact since the streams are
  // re-encoded (FFmpeg decodes from the keyframe before and drops the rest).
  auto input = [&](const std::string& path) { a.insert(a.end(), {"-ss", ss, "-t", t, "-i", "file:" + path}); };
  const bool own_audio = q.output == ClipOutput::Video && q.audio_path.empty();
  if (q.output == ClipOutput::Video) input(q.video_path.value_or(""));
  if (!own_audio) input(q.audio_path);
  const std::string audio_map = q.output == ClipOutput::Video && !own_audio ? "1:a:0" : "0:a:0";

  if (q.output == ClipOutput::Audio) {
    a.insert(a.end(), {"-map", "0:a:0", "-vn"});
  } else {
    const clips::FrameSize f = clips::frame_size(q.aspect);
    std::string graph = q.output == ClipOutput::Video ? video_chain(q, f) : audiogram_chain(q, f, duration);
    // The captions go on last, over everything, in the encoder's pixel format.
    std::string finish = "format=yuv420p";
    if (!ass_file.empty()) finish = "ass=filename=" + escape_filter_value(ass_file) + "," + finish;
    graph.replace(graph.size() - 3, 3, "[pre];[pre]" + finish + "[v]");
    a.insert(a.end(), {"-filter_complex", graph, "-map", "[v]", "-map", audio_map, "-c:v", "libx264", "-preset",
                       q.x264_preset, "-crf", "23", "-pix_fmt", "yuv420p", "-r", std::to_string(kClipFps)});
    if (!q.x264_params.empty()) a.insert(a.end(), {"-x264-params", q.x264_params});
    if (q.threads > 0) a.insert(a.end(), {"-threads", std::to_string(q.threads)});
  }
  // The source's tags (and chapters) are not the clip's.
  a.insert(a.end(), {"-map_metadata", "-1", "-map_chapters", "-1", "-c:a", "aac", "-b:a", "128k"});
  if (!q.title.empty()) a.insert(a.end(), {"-metadata", "title=" + q.title});
  a.insert(a.end(), {"-t", t, "-movflags", "+faststart", "-f", "mp4", "file:" + output_file});
  return a;
}

RenderResult render_clip(const RenderRequest& q) {
  const auto t0 = Clock::now();
  RenderResult res;
  res.content_type = q.output == ClipOutput::Audio ? "audio/mp4" : "video/mp4";
  auto fail = [&](std::string message) {
    res.ok = false;
    res.error = std::move(message);
    res.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return res;
  };

  const double duration = q.clip_end - q.clip_start;
  if (!(q.clip_start >= 0) || !(duration > 0)) {
    return fail("the clip's range " + fixed(q.clip_start) + "-" + fixed(q.clip_end) + " s is empty or negative");
  }
  std::error_code ec;
  const bool own_audio = q.output == ClipOutput::Video && q.audio_path.empty();
  if (q.output == ClipOutput::Video && (!q.video_path || !fs::is_regular_file(*q.video_path, ec))) {
    return fail("a video clip needs its source video, and there is no file at '" + q.video_path.value_or("") + "'");
  }
  if (!own_audio && !fs::is_regular_file(q.audio_path, ec)) return fail("no audio file at '" + q.audio_path + "'");
  if (q.work_dir.empty()) return fail("no work directory given");
  fs::create_directories(q.work_dir, ec);
  if (ec) return fail("cannot create the work directory '" + q.work_dir + "': " + ec.message());

  res.output_path = !q.output_path.empty()
                        ? q.output_path
                        : (fs::path(q.work_dir) / (q.output == ClipOutput::Audio ? "clip.m4a" : "clip.mp4")).string();
  const std::string suffix = unique_suffix();
  // FFmpeg writes beside the output and the file is renamed into place only
  // once checked, so a failed render never leaves a file that looks finished.
  const std::string partial = res.output_path + ".part-" + suffix;
  std::string ass_file = q.output == ClipOutput::Audio ? "" : q.ass_path;
  std::string written_ass;
  if (q.output != ClipOutput::Audio && ass_file.empty() && !q.ass_text.empty()) {
    written_ass = (fs::path(q.work_dir) / ("captions-" + suffix + ".ass")).string();
    std::ofstream out(written_ass, std::ios::binary);
    out << q.ass_text;
    out.close();
    if (!out) return fail("cannot write the captions to '" + written_ass + "'");
    ass_file = written_ass;
  }
  auto cleanup = [&] {
    if (!written_ass.empty()) fs::remove(written_ass, ec);
    fs::remove(partial, ec);
  };

  res.command = ffmpeg_arguments(q, ass_file, partial);
  const ProcessResult r = run_process(res.command, q.timeout,
                                      {.max_address_space = uint64_t(q.memory_limit_mib) << 20, .cancel = q.cancel});
  res.cpu_seconds = r.cpu_seconds;
  res.peak_rss_mib = r.peak_rss_mib;
  res.cancelled = r.cancelled;
  if (!r.ok()) {
    cleanup();
    return fail(describe_failure(q.ffmpeg, r, q.timeout));
  }
  const OutputCheck check = check_output(q, partial, duration);
  if (!check.ok) {
    cleanup();
    return fail(check.error);
  }
  fs::rename(partial, res.output_path, ec);
  if (ec) {
    cleanup();
    return fail("cannot move the output to '" + res.output_path + "': " + ec.message());
  }
  cleanup();
  res.ok = true;
  res.duration_seconds = check.duration;
  res.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

}  // namespace scribe::media
