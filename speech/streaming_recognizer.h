#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "speech/endpointer.h"
#include "speech/pocketsphinx_engine.h"

// Live recognition of one stream of 16 kHz s16le mono PCM (a realtime
// session, issue 32): audio is endpointed into turns as it arrives
// (endpointer.h) and each turn is decoded as it is spoken, piece by piece, so
// a final costs the end-of-turn silence plus the decoder's end of utterance,
// whatever the turn's length. No I/O and no threads: one instance per
// session, used by one thread at a time (the caller serializes).
namespace scribe::speech {

// The realtime path's speech profile (speech_profile.cpp): "live" is the
// fastest (one lexicon-tree pass, Gaussians on every second frame, no
// frequency warp, which would need a sample of the speaker before the first
// word), for many sessions per core.
inline constexpr const char* kRealtimeSpeechProfile = "live";
// And on top of it, for the live path only: at most 3000 HMMs evaluated a
// frame (PocketSphinx's default is 30000, and the profiles keep it or lift
// it). The start of every turn fans out to every word of the lexicon, and
// uncapped that cost 0.3-0.6 s of CPU for the first 100 ms piece of a turn;
// capped, the LibriVox test set (5 utterances, 71 words, streamed with 1 s
// gaps) cost 0.13-0.20 CPU s per speech second instead of 0.32-0.48, with
// 23-24 word errors where uncapped made 23 (one machine, 2 cores, loaded).
inline constexpr std::pair<const char*, const char*> kStreamingDecoderArgs[] = {{"-maxhmmpf", "3000"}};

struct StreamingOptions {
  // Non-speech that ends a turn. 600 ms: pauses inside a sentence (breaths,
  // commas) run 200-500 ms in read and conversational speech, so a shorter
  // window splits sentences, and a longer one adds to every final's latency
  // one for one. On the LibriVox set a final came 550-890 ms (audio time)
  // after its last word's end with 600 ms, 350-690 ms with 400 ms: the
  // endpointer hears a word's decay and breath as speech for 0-300 ms more,
  // and the end of the turn then costs 20-90 ms of CPU. The p95 target
  // (600 ms) needs about 400 ms; callers choose per session.
  int end_of_turn_silence_ms = 600;
  bool partials = true;
  // A partial at most every this much new audio in a turn (250 ms: 4 a
  // second while speaking).
  int partial_interval_ms = 250;
  // Where this stream starts on the session's clock (a resumed session
  // continues it): every time in the events is offset by it.
  int64_t start_offset_samples = 0;
  // The first final's turn_order (a resumed session continues the count).
  int first_turn_order = 0;
  // A turn is ended (a final) after this much audio even while speech goes
  // on: it bounds the decoder's work per final and the lattice's size.
  int max_turn_ms = 30000;
  // Audio before the endpointer's onset handed to the decoder with the turn,
  // so a soft first sound is heard (the onset vote itself needs 60 ms).
  int pre_roll_ms = 250;
  // Of the non-speech after a turn's last speech frame, only this much is
  // decoded as it comes; the rest is held back from the decoder until speech
  // resumes, and dropped when the turn ends. The decoder needs a little of it
  // for soft word endings, but a whole silence window of room noise is where
  // it invents words (and decoding it is wasted work).
  int tail_ms = 300;
};

// A word with absolute session times in milliseconds. Finals: times from the
// decoder's best path after the turn ended and confidence its lattice
// posterior in [0, 1]. Partials: times from the search's current best path
// (they may still move) and no confidence.
struct StreamWord {
  std::string text;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<double> confidence;
};

// SpeechStarted: time_ms is the turn's first speech on the session clock;
// turn_order is the order its final will have. Partial and Final: time_ms is
// the audio received so far (the session clock at the event). A partial is
// sent every partial_interval_ms of the turn's audio while the hypothesis
// has words, changed or not (a steady cadence tells the client the turn is
// alive; a caller that wants only changes compares the words). A turn whose
// decoder heard no word and sent no partial with words gives no final and
// uses no turn_order (a cough or a knock).
struct StreamEvent {
  enum class Kind { SpeechStarted, Partial, Final } kind = Kind::SpeechStarted;
  int turn_order = 0;
  int64_t time_ms = 0;
  std::vector<StreamWord> words;
};

class StreamingRecognizerFactory;
struct PooledDecoder;      // streaming_recognizer.cpp
struct StreamDecoderPool;  // streaming_recognizer.cpp

class StreamingRecognizer {
 public:
  ~StreamingRecognizer();
  StreamingRecognizer(const StreamingRecognizer&) = delete;
  StreamingRecognizer& operator=(const StreamingRecognizer&) = delete;

  // Takes the next piece of the stream (any length; the wire sends 20 ms-1 s).
  // Throws std::runtime_error on decoder failure.
  std::vector<StreamEvent> feed(const int16_t* pcm, size_t n);
  // Ends the turn in progress now (its final), if any.
  std::vector<StreamEvent> force_endpoint();
  // The end of the stream: the turn in progress is decoded to its final
  // (a last piece shorter than 10 ms is counted on the clock but not
  // decoded). feed() may be called again afterwards (the clock goes on).
  std::vector<StreamEvent> finish();
  void set_end_of_turn_silence_ms(int ms);
  void set_partials(bool on) { options_.partials = on; }

  // Samples received, start offset included (the session clock).
  int64_t clock_samples() const { return options_.start_offset_samples + received_ + int64_t(carry_.size()); }
  // The turn_order the next final will have.
  int next_turn_order() const { return next_turn_order_; }
  bool in_turn() const { return utterance_open_; }

 private:
  friend class StreamingRecognizerFactory;
  StreamingRecognizer(std::shared_ptr<StreamDecoderPool> pool, std::unique_ptr<PooledDecoder> decoder,
                      const StreamingOptions& options);
  void process_frame(const int16_t* frame, std::vector<StreamEvent>& out);
  void start_turn(std::vector<StreamEvent>& out);
  void decode_pending();
  void emit_partial(std::vector<StreamEvent>& out);
  void end_turn(std::vector<StreamEvent>& out);
  int64_t to_ms(int64_t stream_sample) const;

  std::shared_ptr<StreamDecoderPool> pool_;
  std::unique_ptr<PooledDecoder> decoder_;
  StreamingOptions options_;
  Endpointer endpointer_;
  int next_turn_order_ = 0;
  int64_t received_ = 0;           // samples fed, from this stream's start
  std::vector<int16_t> carry_;     // an incomplete 10 ms frame
  std::vector<int16_t> pre_roll_;  // recent samples outside a turn (bounded by pre_roll_ms + onset)
  int64_t pre_roll_start_ = 0;     // stream sample of pre_roll_'s first sample
  bool utterance_open_ = false;
  int64_t utterance_start_ = 0;    // stream sample of the decoder's frame 0
  int64_t utterance_samples_ = 0;  // samples given to the decoder this turn
  std::vector<int16_t> pending_;   // turn samples not yet handed to the decoder (under one feed)
  int64_t silence_decoded_ = 0;    // non-speech samples decoded since the turn's last speech frame
  std::vector<int16_t> held_;      // non-speech since the turn's last speech frame (bounded by the silence window)
  int64_t since_partial_ = 0;      // turn samples since the last partial
  bool partial_had_words_ = false;
};

// Makes recognizers from one model configuration (one per server process).
// Decoders are costly to make (the model is loaded from disk, about a
// second, and about 90 MB each: the model is not shared between decoders):
// finished recognizers give theirs back to a small pool that the next
// session takes from. Thread-safe.
class StreamingRecognizerFactory {
 public:
  // `model` gives the model files and the operator's extra decoder
  // arguments; `profile` replaces its speech profile, and
  // kStreamingDecoderArgs are added unless the operator's arguments name them.
  explicit StreamingRecognizerFactory(PocketSphinxOptions model, std::string profile = kRealtimeSpeechProfile,
                                      size_t max_idle_decoders = 2);
  ~StreamingRecognizerFactory();
  std::unique_ptr<StreamingRecognizer> make(const StreamingOptions& options) const;
  const PocketSphinxOptions& options() const { return options_; }
  // Idle decoders held for the next session.
  size_t idle_decoders() const;

 private:
  PocketSphinxOptions options_;
  std::shared_ptr<StreamDecoderPool> pool_;
};

}  // namespace scribe::speech
