#include "speech/transcriber.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <random>
#include <thread>

#include "media/audio_decoder.h"
#include "speech/diarization.h"
#include "speech/vad.h"

namespace scribe::speech {
namespace {

// Decoded audio in a temporary file: 32 KB per second of audio on disk
// instead of in memory, read back piece by piece. The file is unlinked at once
// so that nothing is left behind, even by a killed process.
class PcmFile final : public PcmSource {
 public:
  explicit PcmFile(const std::string& dir) {
    std::filesystem::create_directories(dir);
    std::string path = (std::filesystem::path(dir) / "pcm-XXXXXX").string();
    fd_ = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("cannot create a temporary file in " + dir);
    ::unlink(path.c_str());
  }
  ~PcmFile() override { ::close(fd_); }
  PcmFile(const PcmFile&) = delete;
  PcmFile& operator=(const PcmFile&) = delete;

  void append(const int16_t* s, size_t n) {
    const char* p = reinterpret_cast<const char*>(s);
    size_t left = n * sizeof(int16_t);
    while (left > 0) {
      ssize_t w = ::write(fd_, p, left);
      if (w < 0) throw std::runtime_error("cannot write decoded audio (disk full?)");
      p += w;
      left -= static_cast<size_t>(w);
    }
    samples_ += static_cast<int64_t>(n);
  }
  int64_t total_samples() const override { return samples_; }
  std::vector<int16_t> read(int64_t start, int64_t count) const override {
    start = std::clamp<int64_t>(start, 0, samples_);
    count = std::clamp<int64_t>(count, 0, samples_ - start);
    std::vector<int16_t> out(static_cast<size_t>(count));
    size_t want = out.size() * sizeof(int16_t), got = 0;
    char* dst = reinterpret_cast<char*>(out.data());
    while (got < want) {
      ssize_t r = ::pread(fd_, dst + got, want - got, static_cast<off_t>(start * 2 + got));
      if (r <= 0) throw std::runtime_error("cannot read decoded audio back");
      got += static_cast<size_t>(r);
    }
    return out;
  }

 private:
  int fd_ = -1;
  int64_t samples_ = 0;
};

void enter(const StageCallback& on_stage, const std::atomic<bool>& cancelled, const char* stage) {
  if (cancelled.load() || (on_stage && !on_stage(stage))) throw JobAborted();
}

// A piece's words as sentences (cased and punctuated, no speakers yet): its
// draft text, read before the whole recording is done.
std::string draft_text(std::vector<RecognizedWord> words) {
  std::stable_sort(words.begin(), words.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  std::vector<AttributedWord> attributed;
  attributed.reserve(words.size());
  for (auto& w : words) attributed.push_back({std::move(w), std::nullopt});
  std::string out;
  for (const auto& s : build_sentences(attributed)) {
    if (!out.empty()) out += ' ';
    out += s.text;
  }
  return out;
}

// Recognizes every piece on the engine's parallelism, in piece order, and
// hands each piece's draft text to `on_pieces` in order as they finish.
std::vector<RecognizedWord> recognize_pieces(EnginePool& engines, const PcmSource& pcm,
                                             const std::vector<SpeechPiece>& pieces, const std::string& language,
                                             const VoiceAdaptation& voice, const std::atomic<bool>& cancelled,
                                             const TranscribeRequest& req, std::string& detected,
                                             std::vector<Alternate>& alternates) {
  std::vector<Recognition> results(pieces.size());
  std::atomic<size_t> next{0};
  std::mutex err_mu;
  std::exception_ptr error;
  std::mutex publish_mu;  // one report at a time, so released pieces reach on_pieces in order
  draft::InOrder order(pieces.size());
  auto run = [&] {
    std::unique_ptr<AsrEngine> engine;
    try {
      engine = engines.take();
      for (size_t i; (i = next.fetch_add(1)) < pieces.size();) {
        if (cancelled.load()) break;
        const auto& p = pieces[i];
        auto audio = pcm.read(p.start_sample, p.end_sample - p.start_sample);
        results[i] = engine->recognize(audio.data(), audio.size(), language, voice);
        for (auto& w : results[i].words) {
          w.start += p.start_seconds();
          w.end += p.start_seconds();
        }
        for (auto& a : results[i].alternates) {
          a.start += p.start_seconds();
          a.end += p.start_seconds();
        }
        if (!req.on_pieces) continue;
        draft::Piece done{static_cast<int>(i), p.start_seconds(), p.end_seconds(), draft_text(results[i].words)};
        std::lock_guard lock(publish_mu);
        if (auto ready = order.done(std::move(done)); !ready.empty()) req.on_pieces(ready);
      }
    } catch (...) {
      std::lock_guard lock(err_mu);
      if (!error) error = std::current_exception();
      next = pieces.size();
    }
    if (engine) engines.give(std::move(engine));
  };
  const size_t threads = std::min<size_t>(std::max(1, engines.factory().parallelism()), pieces.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  if (cancelled.load()) throw JobAborted();

  std::vector<RecognizedWord> words;
  std::map<std::string, int> votes;
  for (auto& r : results) {
    if (r.language && !r.words.empty()) votes[*r.language] += static_cast<int>(r.words.size());
    for (auto& w : r.words) words.push_back(std::move(w));
    for (auto& a : r.alternates) alternates.push_back(std::move(a));
  }
  std::stable_sort(words.begin(), words.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  for (const auto& [lang, n] : votes)
    if (detected.empty() || n > votes[detected]) detected = lang;
  return words;
}

// The speech the engine studies before decoding (AsrEngineFactory::adapt):
// at most kAdaptSampleSeconds. A longer recording gives at most
// kAdaptPieceSeconds from each of pieces spread evenly over it, so that a
// voice heard only later still counts.
constexpr double kAdaptSampleSeconds = 30.0;
constexpr double kAdaptPieceSeconds = 5.0;

std::vector<int16_t> adaptation_sample(const PcmSource& pcm, const std::vector<SpeechPiece>& pieces) {
  int64_t total = 0;
  for (const auto& p : pieces) total += p.end_sample - p.start_sample;
  const auto budget = static_cast<int64_t>(kAdaptSampleSeconds * kSampleRate);
  const bool spread = total > budget;
  const auto per_piece = spread ? static_cast<int64_t>(kAdaptPieceSeconds * kSampleRate) : budget;
  // Enough pieces to fill the budget at per_piece each, spread evenly.
  const size_t wanted = static_cast<size_t>((budget + per_piece - 1) / per_piece);
  const size_t stride = spread ? std::max<size_t>(1, pieces.size() / wanted) : 1;
  std::vector<int16_t> sample;
  for (size_t i = 0; i < pieces.size() && static_cast<int64_t>(sample.size()) < budget; i += stride) {
    const auto& p = pieces[i];
    const int64_t take =
        std::min({p.end_sample - p.start_sample, per_piece, budget - static_cast<int64_t>(sample.size())});
    auto audio = pcm.read(p.start_sample, take);
    sample.insert(sample.end(), audio.begin(), audio.end());
  }
  return sample;
}

}  // namespace

std::unique_ptr<AsrEngine> EnginePool::take() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto e = std::move(idle_.back());
      idle_.pop_back();
      return e;
    }
  }
  return factory_->make();
}

void EnginePool::give(std::unique_ptr<AsrEngine> engine) {
  std::lock_guard lock(mu_);
  if (static_cast<int>(idle_.size()) < std::max(1, factory_->parallelism())) idle_.push_back(std::move(engine));
}

TranscribeResult transcribe(EnginePool& engines, const TranscribeRequest& req, const StageCallback& on_stage,
                            const std::atomic<bool>& cancelled) {
  TranscribeResult out;
  enter(on_stage, cancelled, "decoding");
  PcmFile pcm(req.work_dir);
  VoiceActivityDetector vad;
  const int64_t max_samples =
      req.max_seconds ? static_cast<int64_t>((*req.max_seconds + 1.0) * kSampleRate) : INT64_MAX;
  media::DecodedInfo info;
  try {
    info = media::decode_audio(req.media_path, [&](const int16_t* s, size_t n) {
      pcm.append(s, n);
      vad.feed(s, n);
      if (pcm.total_samples() > max_samples)
        throw JobFailure("file_too_long", "the recording is longer than the plan's limit of " +
                                              std::to_string(static_cast<int>(*req.max_seconds / 60)) + " minutes");
      if (cancelled.load()) throw JobAborted();
    });
  } catch (const media::MediaError& e) {
    throw JobFailure(e.code(), e.what());
  }
  out.duration_seconds = info.duration_seconds;
  out.title = info.title;
  if (req.on_measured && !req.on_measured(out.duration_seconds)) throw JobAborted();
  auto speech = vad.finish();
  auto pieces = cut_pieces(speech, pcm.total_samples(), vad.frame_energy());
  out.pieces = pieces.size();
  for (const auto& p : pieces) out.speech_seconds += p.end_seconds() - p.start_seconds();
  if (pieces.empty()) throw JobFailure("no_speech", "no speech was found in the recording");

  enter(on_stage, cancelled, "transcribing");
  out.voice = engines.factory().adapt(adaptation_sample(pcm, pieces));
  std::string detected;
  auto words =
      recognize_pieces(engines, pcm, pieces, req.language, out.voice, cancelled, req, detected, out.alternates);
  if (words.empty()) throw JobFailure("no_speech", "no words were recognized in the recording");
  out.language = detected.empty() ? (req.language == "auto" ? "en" : req.language) : detected;

  enter(on_stage, cancelled, "diarizing");
  auto spans = diarize(pcm, pieces);
  std::vector<AttributedWord> attributed;
  attributed.reserve(words.size());
  for (auto& w : words) {
    auto who = speaker_at(spans, w.start, w.end);
    attributed.push_back({std::move(w), who});
  }

  enter(on_stage, cancelled, "enriching");
  out.sentences = build_sentences(attributed);
  // Labels are recording-local and numbered by first appearance in the
  // transcript, so SPEAKER_00 is the first voice heard saying words.
  std::map<int, int> relabel;
  for (auto& s : out.sentences) {
    if (!s.speaker) continue;
    auto [it, fresh] = relabel.emplace(*s.speaker, static_cast<int>(relabel.size()));
    s.speaker = it->second;
  }
  out.speakers = static_cast<int>(relabel.size());
  return out;
}

}  // namespace scribe::speech
