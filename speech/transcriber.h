#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "domain/transcript_draft.h"
#include "speech/asr_engine.h"
#include "speech/sentences.h"
#include "speech/speech_types.h"

// One recording through the speech engine: decode (streaming, to a temporary
// PCM file), voice activity, recognition of the speech pieces in parallel,
// diarization, sentences. Pure of the database: the worker feeds it a local
// file and records what comes out.
namespace scribe::speech {

// A job that ends in `failed` with a documented code (api/openapi.yaml,
// "Failure codes"): media_undecodable, media_no_audio, media_truncated,
// no_speech, file_too_long, source_unavailable, processing_interrupted.
class JobFailure : public std::runtime_error {
 public:
  JobFailure(std::string code, const std::string& message) : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// The job was taken away (lease lost, deleted, retried): stop, record nothing.
class JobAborted : public std::runtime_error {
 public:
  JobAborted() : std::runtime_error("job aborted") {}
};

// Recognizer instances kept across jobs: loading PocketSphinx's model takes
// a while, so each decoding thread borrows one and gives it back.
class EnginePool {
 public:
  explicit EnginePool(std::shared_ptr<const AsrEngineFactory> factory) : factory_(std::move(factory)) {}
  std::unique_ptr<AsrEngine> take();
  void give(std::unique_ptr<AsrEngine> engine);
  const AsrEngineFactory& factory() const { return *factory_; }

 private:
  std::shared_ptr<const AsrEngineFactory> factory_;
  std::mutex mu_;
  std::vector<std::unique_ptr<AsrEngine>> idle_;
};

struct TranscribeRequest {
  std::string media_path;
  std::string language = "auto";
  std::optional<double> max_seconds;  // the plan's file-length cap
  std::string work_dir;               // for the temporary PCM file
  // Called once the recording is decoded and its length known, before any
  // recognition work; returning false stops the job (JobAborted). The
  // worker makes the wallet hold cover the measured length here.
  std::function<bool(double seconds)> on_measured{};
  // Called with the draft text of the pieces of speech as they are
  // recognized: in recording order, each piece once, a piece as soon as it
  // and every piece before it are done (draft::InOrder). Calls never overlap
  // but come from the recognition threads, which wait meanwhile: keep it
  // short. An exception fails the job. The worker records them for the
  // streams waiting for the transcription.
  std::function<void(const std::vector<draft::Piece>& pieces)> on_pieces{};
};

struct TranscribeResult {
  double duration_seconds = 0;
  std::optional<std::string> title;
  std::string language;
  int speakers = 0;
  std::vector<Sentence> sentences;
  size_t pieces = 0;
  double speech_seconds = 0;
  VoiceAdaptation voice;  // what the engine chose for this recording
  // What the recognizer almost heard, in time order (speech/confusion_network.h).
  std::vector<Alternate> alternates;
};

// Called when the pipeline enters a stage ("decoding", "transcribing",
// "diarizing", "enriching"); returning false aborts the job (JobAborted).
using StageCallback = std::function<bool(const std::string& stage)>;

// Throws JobFailure for bad media and JobAborted when asked to stop.
TranscribeResult transcribe(EnginePool& engines, const TranscribeRequest& request, const StageCallback& on_stage,
                            const std::atomic<bool>& cancelled);

}  // namespace scribe::speech
