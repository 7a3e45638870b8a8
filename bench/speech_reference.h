// The same-run speech reference of issue 23: Debian's `pocketsphinx_continuous`
// with its own defaults (en-us acoustic model, en-us.lm.bin, cmudict-en-us;
// `pocketsphinx_continuous -infile x.wav` needs no other argument with Debian's
// package) run as a child process on the same audio a benchmark part
// transcribes. A speed figure is only comparable across machines as a ratio to
// something run on the same machine at the same moment: the pipeline's CPU
// seconds per audio second divided by the reference's.
//
// CPU time, not wall time, is the fair comparison: the pipeline decodes on
// every core, the reference on one. The reference's CPU comes from wait4's
// rusage (user + system) of each child; files are converted to 16 kHz mono
// 16-bit WAV with a plain 44-byte header first (the tool checks the header and
// reads raw samples after it), and the conversion is not timed.
//
//   SCRIBE_BENCH_REFERENCE  0 skips the reference (the fields are then null)
#pragma once
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "common/json.h"

namespace scribe::bench {

struct SpeechReference {
  bool ran = false;
  std::string why_not;  // when !ran
  size_t files = 0, failures = 0;
  double cpu_seconds = 0, wall_seconds = 0;
  double startup_cpu_seconds = 0;  // one run on 1 s of silence: loading the model, per child
};

inline bool speech_reference_enabled() { return env_or("SCRIBE_BENCH_REFERENCE", "1") != "0"; }

namespace detail {
inline void convert_to_reference_wav(const std::string& in, const std::string& out) {
  // -bitexact keeps ffmpeg from writing a LIST chunk, so the header is 44 bytes.
  const std::string cmd = "ffmpeg -nostdin -y -loglevel error -i '" + in +
                          "' -ar 16000 -ac 1 -c:a pcm_s16le -map_metadata -1 -fflags +bitexact -flags:a +bitexact '" +
                          out + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("reference: cannot convert " + in);
}

inline ChildRun run_reference_once(const std::string& wav) {
  return run_child({"pocketsphinx_continuous", "-infile", wav});
}

// The model load every child pays, measured once per process: the tuning
// part's reference is dozens of children on clips of a few seconds, where it
// is a large share of the reference's CPU.
inline double reference_startup_cpu(const std::string& dir) {
  static double cached = -1;
  if (cached >= 0) return cached;
  const std::string silence = dir + "/silence.wav";
  const std::string cmd = "sox -n -r 16000 -c 1 -b 16 '" + silence + "' trim 0 1";
  if (std::system(cmd.c_str()) != 0) return 0;
  cached = run_reference_once(silence).cpu_seconds;
  return cached;
}
}  // namespace detail

// Runs the reference on each of `files`, one child per file, in order, and
// sums their CPU and wall time.
inline SpeechReference run_speech_reference(const std::vector<std::string>& files, const std::string& work) {
  SpeechReference r;
  if (!speech_reference_enabled()) {
    r.why_not = "SCRIBE_BENCH_REFERENCE=0";
    return r;
  }
  if (std::system("command -v pocketsphinx_continuous >/dev/null 2>&1") != 0) {
    r.why_not = "pocketsphinx_continuous not installed (apt install pocketsphinx)";
    return r;
  }
  const std::string dir = work + "/reference";
  std::filesystem::create_directories(dir);
  r.startup_cpu_seconds = detail::reference_startup_cpu(dir);
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string wav = dir + "/" + std::to_string(i) + ".wav";
    detail::convert_to_reference_wav(files[i], wav);
    const auto run = detail::run_reference_once(wav);
    r.cpu_seconds += run.cpu_seconds;
    r.wall_seconds += run.wall_seconds;
    if (run.status != 0) ++r.failures;
    std::filesystem::remove(wav);
  }
  r.files = files.size();
  r.ran = true;
  return r;
}

// Prints a part's speed line, the ratio to the reference first, and returns
// the JSON fields to add to the part's line: cpu_seconds, cpu_per_audio_second,
// reference_cpu_per_audio_second, reference_rtf, reference_startup_cpu_seconds,
// cpu_ratio_to_reference (null when the reference did not run).
inline Json report_speed(std::ostream& out, double audio_seconds, double pipeline_cpu, double wall,
                         const SpeechReference& ref) {
  const double audio = std::max(audio_seconds, 1e-9);
  const double cpu_per = pipeline_cpu / audio;
  Json j{{"cpu_seconds", pipeline_cpu},
         {"cpu_per_audio_second", cpu_per},
         {"reference_cpu_per_audio_second", nullptr},
         {"reference_rtf", nullptr},
         {"reference_startup_cpu_seconds", nullptr},
         {"cpu_ratio_to_reference", nullptr}};
  out << std::fixed;
  if (ref.ran && ref.cpu_seconds > 0) {
    const double ref_per = ref.cpu_seconds / audio;
    const double ratio = pipeline_cpu / ref.cpu_seconds;
    out << "  CPU " << std::setprecision(2) << ratio << "x the reference's (pipeline " << std::setprecision(3)
        << cpu_per << " CPU s per audio s, wall RTF " << wall / audio << "; pocketsphinx_continuous " << ref_per
        << " CPU s per audio s, wall RTF " << ref.wall_seconds / audio << ", " << ref.files << " file(s), "
        << std::setprecision(2) << ref.startup_cpu_seconds << " CPU s model load per file";
    if (ref.failures) out << ", " << ref.failures << " FAILED";
    out << ")\n";
    j["reference_cpu_per_audio_second"] = ref_per;
    j["reference_rtf"] = ref.wall_seconds / audio;
    j["reference_startup_cpu_seconds"] = ref.startup_cpu_seconds;
    j["cpu_ratio_to_reference"] = ratio;
    j["reference_failures"] = ref.failures;
  } else {
    out << "  CPU vs reference: not run (" << (ref.why_not.empty() ? "no CPU measured" : ref.why_not) << "); pipeline "
        << std::setprecision(3) << cpu_per << " CPU s per audio s, wall RTF " << wall / audio << "\n";
  }
  return j;
}

// Process CPU (all threads plus waited-for helpers such as ffprobe) between
// construction and seconds().
class CpuMeter {
 public:
  CpuMeter() : self_(process_cpu_seconds()), children_(children_cpu_seconds()) {}
  double seconds() const { return process_cpu_seconds() - self_ + children_cpu_seconds() - children_; }

 private:
  double self_, children_;
};

}  // namespace scribe::bench
