// `scribe transcribe FILE`: the speech engine on a local file, without the
// database or the HTTP API. For operators checking a model or a recording,
// and for debugging the pipeline.
#include <filesystem>
#include <iostream>

#include "app/cli.h"
#include "speech/pocketsphinx_engine.h"
#include "speech/transcriber.h"
#include "domain/transcript_artifact.h"

namespace scribe::app {

int transcribe(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {"language", "text"});
  if (args.help || args.positional.size() != 1) {
    std::cout << "usage: scribe transcribe FILE [--language auto|en] [--text]\n\n"
                 "Runs the speech pipeline (decode, voice activity, PocketSphinx, diarization,\n"
                 "sentences) on FILE and prints the transcript artifact as JSON, or with --text\n"
                 "one line per sentence. Uses SCRIBE_ASR_THREADS and SCRIBE_POCKETSPHINX_* like\n"
                 "the workers.\n";
    return args.help ? 0 : 2;
  }
  const auto settings = load_settings(args).settings;
  speech::EnginePool engines(std::make_shared<speech::PocketSphinxFactory>(settings.pocketsphinx));
  std::atomic<bool> cancelled{false};
  const auto work = std::filesystem::temp_directory_path() / "scribe-transcribe";
  auto r = speech::transcribe(engines,
                              {args.positional[0], args.get("language").value_or("auto"), std::nullopt, work.string()},
                              nullptr, cancelled);
  if (args.flag("text")) {
    for (const auto& s : r.sentences)
      std::cout << "[" << s.start << "-" << s.end << "] "
                << (s.speaker ? transcript::speaker_label(*s.speaker) : std::string("Unknown")) << ": " << s.text
                << "\n";
    std::cerr << r.duration_seconds << " s, " << r.pieces << " pieces, " << r.speech_seconds << " s of speech, "
              << r.speakers << " speakers, frequency warp " << r.voice.frequency_warp << "\n";
    return 0;
  }
  transcript::TranscriptArtifact a;
  a.duration_seconds = r.duration_seconds;
  a.language = r.language;
  a.engine = "standard";
  a.speakers = r.speakers;
  for (const auto& s : r.sentences) {
    transcript::ArtifactSegment seg{0, s.start, s.end, std::nullopt, s.text, {}};
    if (s.speaker) seg.speaker = transcript::speaker_label(*s.speaker);
    for (const auto& w : s.words) seg.words.push_back({w.text, w.start, w.end, w.confidence, w.punctuation});
    a.segments.push_back(std::move(seg));
  }
  std::cout << transcript::to_json(a).dump(2) << "\n";
  return 0;
}

}  // namespace scribe::app
