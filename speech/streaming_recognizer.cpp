#include "speech/streaming_recognizer.h"

#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/feat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "speech/speech_profile.h"

namespace scribe::speech {

// One PocketSphinx decoder with the model loaded, and the cepstral mean it
// started with: live CMN carries its estimate from utterance to utterance
// (which a stream wants: the second turn starts from the first turn's
// channel), and a decoder taken from the pool is set back to the initial one,
// so a session does not start from another speaker's channel and the same
// audio gives the same words whichever decoder decodes it.
struct PooledDecoder {
  cmd_ln_t* config = nullptr;
  ps_decoder_t* ps = nullptr;
  std::vector<mfcc_t> initial_cmn;

  explicit PooledDecoder(const PocketSphinxOptions& o) {
    auto d = make_sphinx_decoder(o);
    config = d.config;
    ps = d.decoder;
    if (cmn_t* c = cmn()) {
      initial_cmn.resize(size_t(c->veclen));
      cmn_live_get(c, initial_cmn.data());
    }
  }
  ~PooledDecoder() {
    SphinxDecoder d{config, ps};
    free_sphinx_decoder(d);
  }
  PooledDecoder(const PooledDecoder&) = delete;
  PooledDecoder& operator=(const PooledDecoder&) = delete;

  cmn_t* cmn() const {
    feat_t* f = ps_get_feat(ps);
    return f ? f->cmn_struct : nullptr;
  }
  void reset_channel() {
    if (cmn_t* c = cmn(); c && !initial_cmn.empty()) cmn_live_set(c, initial_cmn.data());
  }
};

struct StreamDecoderPool {
  PocketSphinxOptions options;
  size_t max_idle = 0;
  std::mutex mu;
  std::vector<std::unique_ptr<PooledDecoder>> idle;

  std::unique_ptr<PooledDecoder> take() {
    std::unique_ptr<PooledDecoder> d;
    {
      std::lock_guard lock(mu);
      if (!idle.empty()) {
        d = std::move(idle.back());
        idle.pop_back();
      }
    }
    if (!d) d = std::make_unique<PooledDecoder>(options);
    d->reset_channel();
    return d;
  }
  void give(std::unique_ptr<PooledDecoder> d) {
    std::unique_lock lock(mu);
    if (idle.size() < max_idle) idle.push_back(std::move(d));
    lock.unlock();
    // Freed here, outside the pool's lock, when the pool is full.
  }
};

namespace {

constexpr int64_t kSamplesPerMs = kSampleRate / 1000;

int64_t ms_to_samples(int ms) { return int64_t(std::max(0, ms)) * kSamplesPerMs; }

EndpointerOptions endpointer_options(const StreamingOptions& o) {
  EndpointerOptions e;
  e.end_of_turn_silence_ms = o.end_of_turn_silence_ms;
  return e;
}

}  // namespace

StreamingRecognizer::StreamingRecognizer(std::shared_ptr<StreamDecoderPool> pool,
                                         std::unique_ptr<PooledDecoder> decoder, const StreamingOptions& options)
    : pool_(std::move(pool)),
      decoder_(std::move(decoder)),
      options_(options),
      endpointer_(endpointer_options(options)),
      next_turn_order_(options.first_turn_order) {}

StreamingRecognizer::~StreamingRecognizer() {
  if (!decoder_) return;
  if (utterance_open_) ps_end_utt(decoder_->ps);
  pool_->give(std::move(decoder_));
}

void StreamingRecognizer::set_end_of_turn_silence_ms(int ms) {
  options_.end_of_turn_silence_ms = ms;
  endpointer_.set_end_of_turn_silence_ms(ms);
}

int64_t StreamingRecognizer::to_ms(int64_t stream_sample) const {
  return (options_.start_offset_samples + stream_sample) / kSamplesPerMs;
}

std::vector<StreamEvent> StreamingRecognizer::feed(const int16_t* pcm, size_t n) {
  std::vector<StreamEvent> out;
  if (!carry_.empty()) {
    const size_t take = std::min(n, size_t(kFrameSamples) - carry_.size());
    carry_.insert(carry_.end(), pcm, pcm + take);
    pcm += take;
    n -= take;
    if (carry_.size() < size_t(kFrameSamples)) return out;
    process_frame(carry_.data(), out);
    carry_.clear();
  }
  for (; n >= size_t(kFrameSamples); pcm += kFrameSamples, n -= kFrameSamples) process_frame(pcm, out);
  carry_.assign(pcm, pcm + n);
  // What the turn heard is decoded now, with the piece that brought it.
  decode_pending();
  return out;
}

void StreamingRecognizer::process_frame(const int16_t* frame, std::vector<StreamEvent>& out) {
  received_ += kFrameSamples;
  const EndpointEvent event = endpointer_.frame(frame);
  if (!utterance_open_) {
    pre_roll_.insert(pre_roll_.end(), frame, frame + kFrameSamples);
    // Enough to reach pre_roll_ms before the onset vote's first frame.
    const int64_t keep = ms_to_samples(options_.pre_roll_ms) + ms_to_samples(EndpointerOptions{}.onset_window_ms);
    if (int64_t(pre_roll_.size()) > keep) {
      const int64_t drop = int64_t(pre_roll_.size()) - keep;
      pre_roll_.erase(pre_roll_.begin(), pre_roll_.begin() + drop);
      pre_roll_start_ += drop;
    }
    if (event == EndpointEvent::TurnStarted) start_turn(out);
    return;
  }
  if (endpointer_.last_frame_speech()) {
    // Speech again: the pause before it is part of the turn after all.
    pending_.insert(pending_.end(), held_.begin(), held_.end());
    held_.clear();
    pending_.insert(pending_.end(), frame, frame + kFrameSamples);
    silence_decoded_ = 0;
  } else if (silence_decoded_ < ms_to_samples(options_.tail_ms)) {
    // The tail is decoded as it comes, so the end of the turn has little
    // left to do.
    pending_.insert(pending_.end(), frame, frame + kFrameSamples);
    silence_decoded_ += kFrameSamples;
  } else {
    held_.insert(held_.end(), frame, frame + kFrameSamples);
  }
  utterance_samples_ += kFrameSamples;
  since_partial_ += kFrameSamples;
  if (event == EndpointEvent::TurnEnded) {
    end_turn(out);
  } else if (utterance_samples_ >= ms_to_samples(options_.max_turn_ms)) {
    endpointer_.end_turn();
    end_turn(out);
  } else if (options_.partials && since_partial_ >= ms_to_samples(options_.partial_interval_ms)) {
    emit_partial(out);
  }
}

void StreamingRecognizer::start_turn(std::vector<StreamEvent>& out) {
  const int64_t onset = endpointer_.turn_start_frame() * kFrameSamples;
  const int64_t from = std::clamp(onset - ms_to_samples(options_.pre_roll_ms), pre_roll_start_, received_);
  // A new stream per turn: the decoder's frames (and so its word times) count
  // from the turn's first sample, and the front end's noise estimate starts
  // afresh; the cepstral mean carries over (PooledDecoder).
  if (ps_start_stream(decoder_->ps) < 0 || ps_start_utt(decoder_->ps) < 0)
    throw std::runtime_error("PocketSphinx could not start an utterance");
  utterance_open_ = true;
  utterance_start_ = from;
  pending_.assign(pre_roll_.begin() + (from - pre_roll_start_), pre_roll_.end());
  held_.clear();
  silence_decoded_ = 0;
  utterance_samples_ = int64_t(pending_.size());
  since_partial_ = 0;
  partial_had_words_ = false;
  pre_roll_.clear();
  pre_roll_start_ = received_;
  out.push_back({StreamEvent::Kind::SpeechStarted, next_turn_order_, to_ms(onset), {}});
}

void StreamingRecognizer::decode_pending() {
  if (!utterance_open_ || pending_.empty()) return;
  const int r = ps_process_raw(decoder_->ps, pending_.data(), pending_.size(), FALSE, FALSE);
  pending_.clear();
  if (r < 0) throw std::runtime_error("PocketSphinx failed to process audio");
}

void StreamingRecognizer::emit_partial(std::vector<StreamEvent>& out) {
  decode_pending();
  since_partial_ = 0;
  // Mid-utterance the segment iterator walks the search's current best path
  // back from its best word exit (a few pointer steps a word): words with
  // frames, no posterior (that needs the lattice, made at the end).
  int32 score = 0;
  const char* hyp = ps_get_hyp(decoder_->ps, &score);
  if (!hyp || !*hyp) return;
  StreamEvent e{StreamEvent::Kind::Partial, next_turn_order_, to_ms(received_), {}};
  for (ps_seg_t* seg = ps_seg_iter(decoder_->ps); seg; seg = ps_seg_next(seg)) {
    std::string word = display_word(ps_seg_word(seg));
    if (word.empty()) continue;
    int sf = 0, ef = 0;
    ps_seg_frames(seg, &sf, &ef);
    e.words.push_back({std::move(word), to_ms(utterance_start_ + int64_t(sf) * kFrameSamples),
                       to_ms(utterance_start_ + int64_t(ef + 1) * kFrameSamples), std::nullopt});
  }
  if (e.words.empty()) return;
  partial_had_words_ = true;
  out.push_back(std::move(e));
}

void StreamingRecognizer::end_turn(std::vector<StreamEvent>& out) {
  held_.clear();
  decode_pending();
  utterance_open_ = false;
  pre_roll_.clear();
  pre_roll_start_ = received_;
  if (ps_end_utt(decoder_->ps) < 0) throw std::runtime_error("PocketSphinx could not end the utterance");
  // After the end, with -bestpath yes (PocketSphinx's default, which no
  // profile changes), the iterator walks the lattice's best path and each
  // word's probability is its posterior in the lattice.
  StreamEvent e{StreamEvent::Kind::Final, next_turn_order_, to_ms(received_), {}};
  logmath_t* lmath = ps_get_logmath(decoder_->ps);
  for (ps_seg_t* seg = ps_seg_iter(decoder_->ps); seg; seg = ps_seg_next(seg)) {
    std::string word = display_word(ps_seg_word(seg));
    if (word.empty()) continue;
    int sf = 0, ef = 0;
    ps_seg_frames(seg, &sf, &ef);
    int32 ascr = 0, lscr = 0, lback = 0;
    double conf = logmath_exp(lmath, ps_seg_prob(seg, &ascr, &lscr, &lback));
    conf = std::isfinite(conf) ? std::clamp(conf, 0.0, 1.0) : 0.0;
    e.words.push_back({std::move(word), to_ms(utterance_start_ + int64_t(sf) * kFrameSamples),
                       to_ms(utterance_start_ + int64_t(ef + 1) * kFrameSamples), conf});
  }
  // Words of a turn may not run backwards or overlap (a path's words follow
  // one another; this only guards rounding).
  for (size_t i = 1; i < e.words.size(); ++i)
    e.words[i].start_ms = std::max(e.words[i].start_ms, e.words[i - 1].end_ms);
  if (e.words.empty() && !partial_had_words_) return;  // a cough: no turn
  ++next_turn_order_;
  out.push_back(std::move(e));
}

std::vector<StreamEvent> StreamingRecognizer::force_endpoint() {
  std::vector<StreamEvent> out;
  if (utterance_open_) {
    endpointer_.end_turn();
    end_turn(out);
  }
  return out;
}

std::vector<StreamEvent> StreamingRecognizer::finish() { return force_endpoint(); }

StreamingRecognizerFactory::StreamingRecognizerFactory(PocketSphinxOptions model, std::string profile,
                                                       size_t max_idle_decoders)
    : options_(std::move(model)), pool_(std::make_shared<StreamDecoderPool>()) {
  if (!find_speech_profile(profile))
    throw std::invalid_argument("unknown speech profile " + profile + "; use one of " + speech_profile_names());
  options_.profile = std::move(profile);
  for (const auto& [name, value] : kStreamingDecoderArgs)
    if (std::find(options_.extra_args.begin(), options_.extra_args.end(), name) == options_.extra_args.end())
      options_.extra_args.insert(options_.extra_args.end(), {name, value});
  options_.vtln = false;
  pool_->options = options_;
  pool_->max_idle = max_idle_decoders;
}

StreamingRecognizerFactory::~StreamingRecognizerFactory() = default;

std::unique_ptr<StreamingRecognizer> StreamingRecognizerFactory::make(const StreamingOptions& options) const {
  auto decoder = pool_->take();
  return std::unique_ptr<StreamingRecognizer>(new StreamingRecognizer(pool_, std::move(decoder), options));
}

size_t StreamingRecognizerFactory::idle_decoders() const {
  std::lock_guard lock(pool_->mu);
  return pool_->idle.size();
}

}  // namespace scribe::speech
