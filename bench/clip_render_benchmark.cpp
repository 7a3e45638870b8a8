// Clip renders (media::render_clip, the FFmpeg command a clip job runs): wall
// time, FFmpeg's CPU seconds and peak resident memory (wait4 of the ffmpeg
// child) for 30 s and 60 s clips in each aspect (9:16, 1:1, 16:9), per output:
//   audiogram  waveform on a plain background, karaoke captions burned in
//   video      the source video with blur framing, karaoke captions burned in
//              (source: a 1280x720 30 fps testsrc2 video made here, H.264)
//   audio      the M4A cut (no aspect)
// Each case runs --runs times (3); the median and the best wall time are
// shown, CPU and memory of the median run. Target: a 30 s 9:16 audiogram with
// karaoke captions renders in under 15 s (median).
//
//   clip_render_benchmark            the whole table (14 cases x 3 runs: about 15 min on 2 cores)
//   clip_render_benchmark --quick    only the target case
//   clip_render_benchmark --runs N   timed runs per case
//
//   SCRIBE_BENCH_CLIP_SECONDS   clip lengths                       default 30,60
//   SCRIBE_BENCH_CLIP_ASPECTS   aspects                            default 9:16,1:1,16:9
//   SCRIBE_BENCH_CLIP_OUTPUTS   audiogram,video,audio              default all three
//   SCRIBE_BENCH_CLIP_THREADS   FFmpeg threads, 0 = its default    default 0
//   SCRIBE_BENCH_CLIP_PRESET    x264 preset                        default RenderRequest's
//   SCRIBE_BENCH_CLIP_X264      x264 settings over it, "none"      default RenderRequest's
//
// The recording is bench_lib.sh's three_voice_recording (about 70 s of flite
// voices); the captions' words are synthetic, evenly spaced at speaking rate,
// since caption load, not their text, is what costs. Same-run references,
// timed three times before the cases and once after: a plain FFmpeg decode of
// the recording's 30 s (mostly process start: what every render pays) and a
// fixed x264 encode, 10 s of 9:16 testsrc2 at plain veryfast (the bulk of
// a render's work: a figure to scale the table by on another machine). The
// machine line is printed at the start and at the end: on a machine shared
// with other work, wall times follow the load; CPU seconds move much less.
//
// Prints a table and one JSON line per case beginning {"bench":"clip_render".
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "common/json.h"
#include "domain/clip_captions.h"
#include "media/clip_render.h"

namespace {

namespace fs = std::filesystem;
namespace bench = scribe::bench;
namespace clips = scribe::clips;
namespace media = scribe::media;
using scribe::Json;

constexpr double kClipStart = 2.0;  // clips start here in the recording
constexpr double kWordPitch = 0.4;  // a word every 0.4 s: 150 words a minute
const char* kWords[] = {"good",  "evening", "and", "welcome", "to",   "the",   "program", "tonight", "we",     "talk",
                        "about", "gardens", "in",  "the",     "city", "thank", "you",     "for",     "having", "me"};

void sh(const std::string& dir, const std::string& command) {
  if (std::system(("cd '" + dir + "' && " + command + " >/dev/null 2>&1").c_str()) != 0) {
    throw std::runtime_error("failed: " + command);
  }
}

// speech.wav in `dir`, made by bench_lib.sh (beside this file).
void make_recording(const std::string& dir) {
  const fs::path lib = fs::path(__FILE__).parent_path() / "bench_lib.sh";
  if (!fs::exists(lib)) throw std::runtime_error("cannot find " + lib.string());
  sh(dir, "bash -c '. \"" + lib.string() + "\" && three_voice_recording . speech.wav'");
}

std::vector<clips::ClipWord> synthetic_words(double seconds) {
  std::vector<clips::ClipWord> words;
  for (int i = 0; i * kWordPitch < seconds; ++i)
    words.push_back({kWords[i % std::size(kWords)], i * kWordPitch, i * kWordPitch + kWordPitch * 0.8});
  return words;
}

double ffprobe_duration(const std::string& path) {
  FILE* p = ::popen(("ffprobe -v error -show_entries format=duration -of csv=p=0 '" + path + "'").c_str(), "r");
  double d = 0;
  if (p) {
    if (std::fscanf(p, "%lf", &d) != 1) d = 0;
    ::pclose(p);
  }
  return d;
}

struct Case {
  std::string output;  // audiogram, video, audio
  clips::Aspect aspect;
  double seconds;
};

struct Reference {
  std::string name;
  std::vector<std::string> argv;
  double wall = 0, cpu = 0, rss = 0;  // of the median run
};

// Runs a reference `runs` times and keeps the median run (by wall time).
void time_reference(Reference& r, int runs, const std::string& when) {
  std::vector<bench::ChildRun> t;
  for (int i = 0; i < runs; ++i) {
    t.push_back(bench::run_child(r.argv));
    if (t.back().status != 0) throw std::runtime_error("reference " + r.name + " failed");
  }
  std::sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.wall_seconds < b.wall_seconds; });
  const auto& m = t[t.size() / 2];
  r.wall = m.wall_seconds, r.cpu = m.cpu_seconds, r.rss = m.max_rss_mib;
  std::cout << "reference (" << when << ") " << r.name << ": " << std::fixed << std::setprecision(2) << m.wall_seconds
            << " s wall (best " << t.front().wall_seconds << "), " << m.cpu_seconds << " CPU s, "
            << std::setprecision(0) << m.max_rss_mib << " MiB\n";
  std::cout << Json{{"bench", "clip_render_reference"},
                    {"when", when},
                    {"reference", r.name},
                    {"wall_seconds", m.wall_seconds},
                    {"best_wall_seconds", t.front().wall_seconds},
                    {"cpu_seconds", m.cpu_seconds},
                    {"peak_rss_mib", m.max_rss_mib}}
                   .dump()
            << "\n"
            << std::flush;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::cerr << "usage: clip_render_benchmark [--quick] [--runs N]\n";
      return 2;
    }
  }
  bench::machine_info();
  const fs::path dir = fs::temp_directory_path() / ("scribe_clip_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string d = dir.string();
  int status = 0;
  try {
    const int threads = static_cast<int>(bench::env_double("SCRIBE_BENCH_CLIP_THREADS", 0));
    const std::string preset = bench::env_or("SCRIBE_BENCH_CLIP_PRESET", media::RenderRequest{}.x264_preset);
    std::string x264_params = bench::env_or("SCRIBE_BENCH_CLIP_X264", media::RenderRequest{}.x264_params);
    if (x264_params == "none") x264_params.clear();
    std::vector<Case> cases;
    if (quick) {
      cases.push_back({"audiogram", clips::Aspect::Portrait, 30});
    } else {
      for (const int seconds : bench::env_int_list("SCRIBE_BENCH_CLIP_SECONDS", "30,60"))
        for (const auto& output : bench::env_list("SCRIBE_BENCH_CLIP_OUTPUTS", "audiogram,video,audio")) {
          if (output == "audio") {
            cases.push_back({output, clips::Aspect::Portrait, double(seconds)});
            continue;
          }
          for (const auto& a : bench::env_list("SCRIBE_BENCH_CLIP_ASPECTS", "9:16,1:1,16:9")) {
            const auto aspect = clips::parse_aspect(a);
            if (!aspect) throw std::runtime_error("unknown aspect " + a);
            cases.push_back({output, *aspect, double(seconds)});
          }
        }
    }
    for (const auto& c : cases)
      if (c.output != "audiogram" && c.output != "video" && c.output != "audio")
        throw std::runtime_error("unknown output " + c.output);

    make_recording(d);
    const double speech_seconds = ffprobe_duration(d + "/speech.wav");
    const auto words = synthetic_words(speech_seconds);
    std::cout << "recording: " << std::fixed << std::setprecision(1) << speech_seconds << " s, " << words.size()
              << " synthetic words; x264 preset " << preset << ", settings '" << x264_params << "', threads " << threads
              << ", runs " << runs << "\n";
    if (std::any_of(cases.begin(), cases.end(), [](const Case& c) { return c.output == "video"; })) {
      // A phone-like source: 1 s keyframe interval, veryfast rather than
      // ultrafast so that decoding it costs what decoding real H.264 costs.
      sh(d,
         "ffmpeg -nostdin -y -loglevel error -f lavfi -i testsrc2=size=1280x720:rate=30 -i speech.wav -shortest "
         "-c:v libx264 -preset veryfast -g 30 -pix_fmt yuv420p -c:a aac source.mp4");
    }

    std::vector<Reference> refs = {
        {"decode", {"ffmpeg", "-nostdin", "-ss", "2", "-t", "30", "-i", d + "/speech.wav", "-f", "null", "-"}},
        {"x264",
         {"ffmpeg", "-nostdin", "-f", "lavfi", "-i", "testsrc2=size=1080x1920:rate=30:duration=10", "-c:v", "libx264",
          "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p", "-f", "null", "-"}}};
    for (auto& r : refs) time_reference(r, 3, "before");

    auto request = [&](const Case& c) {
      media::RenderRequest q;
      q.audio_path = d + "/speech.wav";
      q.clip_start = kClipStart;
      q.clip_end = kClipStart + c.seconds;
      q.aspect = c.aspect;
      q.work_dir = d + "/work";
      q.output_path = d + "/out" + (c.output == "audio" ? ".m4a" : ".mp4");
      q.threads = threads;
      q.x264_preset = preset;
      q.x264_params = x264_params;
      q.title = "Clip benchmark";
      q.output = c.output == "audio"   ? media::ClipOutput::Audio
                 : c.output == "video" ? media::ClipOutput::Video
                                       : media::ClipOutput::Audiogram;
      if (q.output == media::ClipOutput::Video) {
        q.video_path = d + "/source.mp4";
        q.audio_path.clear();  // the video's own soundtrack
        q.framing = media::Framing::Blur;
      }
      if (q.output != media::ClipOutput::Audio) {
        clips::CaptionOptions o;
        o.frame = clips::frame_size(c.aspect);
        o.style = clips::Style::Karaoke;
        o.title = "Gardens in the city";
        q.ass_text = clips::render_ass(words, q.clip_start, q.clip_end, o);
      }
      return q;
    };
    // Untimed: the first libass run may build fontconfig's cache.
    {
      const media::RenderResult warm = media::render_clip(request({"audiogram", clips::Aspect::Portrait, 2}));
      if (!warm.ok) throw std::runtime_error("warm-up render failed: " + warm.error);
    }

    std::cout << std::left << std::setw(6) << "clip" << std::setw(7) << "aspect" << std::setw(11) << "output"
              << std::right << std::setw(10) << "median s" << std::setw(8) << "best s" << std::setw(8) << "CPU s"
              << std::setw(10) << "peak MiB" << std::setw(8) << "x real" << std::setw(8) << "MB"
              << "\n";
    double target_median = -1, target_best = -1;
    for (const auto& c : cases) {
      const media::RenderRequest q = request(c);
      std::vector<media::RenderResult> timed;
      for (int i = 0; i < runs; ++i) {
        timed.push_back(media::render_clip(q));
        if (!timed.back().ok) throw std::runtime_error(c.output + " render failed: " + timed.back().error);
      }
      std::sort(timed.begin(), timed.end(),
                [](const auto& a, const auto& b) { return a.wall_seconds < b.wall_seconds; });
      const media::RenderResult& r = timed[timed.size() / 2];
      const double mb = double(fs::file_size(r.output_path)) / 1e6;
      const std::string aspect(c.output == "audio" ? "-" : clips::aspect_name(c.aspect));
      const std::string label = c.output == "audiogram" ? "audiogram" : c.output == "video" ? "video blur" : "audio";
      std::cout << std::left << std::fixed << std::setprecision(0) << std::setw(6) << c.seconds << std::setw(7)
                << aspect << std::setw(11) << label << std::right << std::setprecision(2) << std::setw(10)
                << r.wall_seconds << std::setw(8) << timed.front().wall_seconds << std::setw(8) << r.cpu_seconds
                << std::setprecision(0) << std::setw(10) << r.peak_rss_mib << std::setprecision(1) << std::setw(8)
                << c.seconds / r.wall_seconds << std::setw(8) << mb << "\n";
      std::cout << Json{{"bench", "clip_render"},
                        {"output", c.output},
                        {"aspect", aspect},
                        {"captions", c.output == "audio" ? "none" : "karaoke"},
                        {"framing", c.output == "video" ? "blur" : "-"},
                        {"clip_seconds", c.seconds},
                        {"runs", runs},
                        {"wall_seconds", r.wall_seconds},
                        {"best_wall_seconds", timed.front().wall_seconds},
                        {"cpu_seconds", r.cpu_seconds},
                        {"peak_rss_mib", r.peak_rss_mib},
                        {"x_real_time", c.seconds / r.wall_seconds},
                        {"output_bytes", fs::file_size(r.output_path)},
                        {"x264_preset", preset},
                        {"x264_params", x264_params},
                        {"threads", threads}}
                       .dump()
                << "\n"
                << std::flush;
      if (c.output == "audiogram" && c.aspect == clips::Aspect::Portrait && c.seconds == 30) {
        target_median = r.wall_seconds;
        target_best = timed.front().wall_seconds;
      }
    }
    for (auto& r : refs) time_reference(r, 1, "after");
    bench::machine_info();
    if (target_median >= 0) {
      std::cout << "target: 30 s 9:16 audiogram with karaoke captions under 15 s: median " << std::setprecision(2)
                << target_median << " s, best " << target_best << " s, " << (target_median < 15 ? "met" : "missed")
                << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "clip_render_benchmark: " << e.what() << "\n";
    status = 1;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return status;
}
