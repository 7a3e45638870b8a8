#include "media/audio_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <vector>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
}

namespace scribe::media {
namespace {

// The sink sees chunks of at most this many samples (a quarter of a second):
// large enough that the per-call cost vanishes, small enough to keep memory flat.
constexpr size_t kChunkSamples = 4096;

// Isolated corrupt packets are skipped, as the ffmpeg command does; a file whose
// packets fail more often than this is reported as damaged rather than
// transcribed with holes.
constexpr double kMaxBadPacketShare = 0.05;
constexpr int64_t kMinBadPacketsForDamage = 3;

// Decoded audio this much shorter than the container declares means the file
// was cut off (both conditions must hold: short by a share and by time, so that
// encoder delay and padding never trigger it).
constexpr double kTruncatedShare = 0.90;
constexpr double kTruncatedSeconds = 1.0;

struct FormatCloser {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
struct CodecFreer {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFreer {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFreer {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwrFreer {
  void operator()(SwrContext* s) const { swr_free(&s); }
};
using FormatPtr = std::unique_ptr<AVFormatContext, FormatCloser>;
using CodecPtr = std::unique_ptr<AVCodecContext, CodecFreer>;
using FramePtr = std::unique_ptr<AVFrame, FrameFreer>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFreer>;
using SwrPtr = std::unique_ptr<SwrContext, SwrFreer>;

// AVChannelLayout owns memory for custom layouts, so a copy must be released.
struct ChannelLayout {
  AVChannelLayout layout{};
  ChannelLayout() = default;
  ChannelLayout(const ChannelLayout&) = delete;
  ChannelLayout& operator=(const ChannelLayout&) = delete;
  ~ChannelLayout() { av_channel_layout_uninit(&layout); }
};

std::string av_error_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

void silence_ffmpeg_logging() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_level(AV_LOG_QUIET); });
}

std::optional<std::string> metadata_title(const AVDictionary* dict) {
  if (!dict) return std::nullopt;
  const AVDictionaryEntry* e = av_dict_get(dict, "title", nullptr, 0);
  if (!e || !e->value || !*e->value) return std::nullopt;
  return std::string(e->value);
}

// Resamples whatever the decoder produces to 16 kHz mono S16 and hands the
// result to the sink in chunks. The resampler is rebuilt when the input format
// changes mid-stream (some streams switch sample rate or channel count).
class Resampler {
 public:
  explicit Resampler(const PcmSink& sink) : sink_(sink) { pending_.reserve(kChunkSamples); }

  void push(const AVFrame* frame) {
    ChannelLayout in;
    if (frame->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || frame->ch_layout.nb_channels <= 0) {
      av_channel_layout_default(&in.layout, std::max(1, frame->ch_layout.nb_channels));
    } else if (av_channel_layout_copy(&in.layout, &frame->ch_layout) < 0) {
      throw MediaError("media_undecodable", "unusable channel layout");
    }
    if (frame->sample_rate <= 0) throw MediaError("media_undecodable", "audio stream without a sample rate");
    if (!swr_ || frame->sample_rate != in_rate_ || frame->format != in_format_ ||
        av_channel_layout_compare(&in.layout, &in_layout_.layout) != 0) {
      if (swr_) drain();
      open(in.layout, static_cast<AVSampleFormat>(frame->format), frame->sample_rate);
    }
    convert(const_cast<const uint8_t**>(frame->extended_data), frame->nb_samples);
  }

  // Flushes the resampler's delay line and the last partial chunk.
  void finish() {
    if (swr_) drain();
    emit_pending();
  }

  int64_t samples() const { return samples_; }

 private:
  void open(AVChannelLayout& layout, AVSampleFormat format, int rate) {
    AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
    // FFmpeg 5.1 takes the layouts through non-const pointers but does not change them.
    SwrContext* raw = nullptr;
    if (swr_alloc_set_opts2(&raw, &mono, AV_SAMPLE_FMT_S16, kSampleRate, &layout, format, rate, 0, nullptr) < 0 ||
        !raw) {
      swr_free(&raw);
      throw MediaError("media_undecodable", "cannot set up resampling");
    }
    SwrPtr swr(raw);
    if (swr_init(swr.get()) < 0) throw MediaError("media_undecodable", "cannot set up resampling");
    swr_ = std::move(swr);
    av_channel_layout_uninit(&in_layout_.layout);
    av_channel_layout_copy(&in_layout_.layout, &layout);
    in_format_ = format;
    in_rate_ = rate;
  }

  void convert(const uint8_t** in, int in_samples) {
    const int capacity = swr_get_out_samples(swr_.get(), in_samples);
    if (capacity <= 0) return;
    buffer_.resize(size_t(capacity));
    uint8_t* out = reinterpret_cast<uint8_t*>(buffer_.data());
    const int n = swr_convert(swr_.get(), &out, capacity, in, in_samples);
    if (n < 0) throw MediaError("media_undecodable", "resampling failed: " + av_error_text(n));
    append(buffer_.data(), size_t(n));
  }

  void drain() { convert(nullptr, 0); }

  void append(const int16_t* s, size_t n) {
    while (n > 0) {
      const size_t take = std::min(n, kChunkSamples - pending_.size());
      pending_.insert(pending_.end(), s, s + take);
      s += take;
      n -= take;
      if (pending_.size() == kChunkSamples) emit_pending();
    }
  }

  void emit_pending() {
    if (pending_.empty()) return;
    samples_ += int64_t(pending_.size());
    sink_(pending_.data(), pending_.size());
    pending_.clear();
  }

  const PcmSink& sink_;
  SwrPtr swr_;
  ChannelLayout in_layout_;
  int in_format_ = -1;
  int in_rate_ = 0;
  std::vector<int16_t> buffer_;
  std::vector<int16_t> pending_;
  int64_t samples_ = 0;
};

// What the container says about the audio stream's length, in seconds (0 when
// unknown). A duration FFmpeg only estimated from the bit rate is not trusted
// for truncation checks, because variable bit rate files make it wrong.
double stream_duration(const AVFormatContext* fmt, const AVStream* st, bool* trusted) {
  *trusted = fmt->duration_estimation_method != AVFMT_DURATION_FROM_BITRATE;
  if (st->duration != AV_NOPTS_VALUE && st->duration > 0) return double(st->duration) * av_q2d(st->time_base);
  if (fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0) return double(fmt->duration) / AV_TIME_BASE;
  return 0;
}

// FFmpeg's WAV reader clamps the length to the bytes present, which hides a
// cut-off file; the RIFF header still says how much audio was written, so it is
// read here. Returns seconds of audio the data chunk declares, 0 when unknown
// (streamed WAV files write 0 or 0xFFFFFFFF).
double wav_declared_seconds(const std::string& path, const AVStream* st) {
  const int block_align = st->codecpar->block_align;
  const int rate = st->codecpar->sample_rate;
  if (block_align <= 0 || rate <= 0) return 0;
  std::ifstream in(path, std::ios::binary);
  char riff[12];
  if (!in.read(riff, 12) || std::memcmp(riff, "RIFF", 4) != 0 || std::memcmp(riff + 8, "WAVE", 4) != 0) return 0;
  // Chunks other than "data" are skipped; a bounded number keeps a hostile
  // header from making this loop long.
  for (int i = 0; i < 64; ++i) {
    unsigned char head[8];
    if (!in.read(reinterpret_cast<char*>(head), 8)) return 0;
    const uint32_t size =
        uint32_t(head[4]) | uint32_t(head[5]) << 8 | uint32_t(head[6]) << 16 | uint32_t(head[7]) << 24;
    if (std::memcmp(head, "data", 4) == 0) {
      if (size == 0 || size == 0xFFFFFFFFu) return 0;
      return double(size) / block_align / rate;
    }
    in.seekg(std::streamoff(size) + (size & 1), std::ios::cur);
  }
  return 0;
}

}  // namespace

DecodedInfo decode_audio(const std::string& path, const PcmSink& sink) {
  silence_ffmpeg_logging();

  AVFormatContext* raw_fmt = nullptr;
  int err = avformat_open_input(&raw_fmt, path.c_str(), nullptr, nullptr);
  if (err < 0) throw MediaError("media_undecodable", "cannot open media: " + av_error_text(err));
  FormatPtr fmt(raw_fmt);
  err = avformat_find_stream_info(fmt.get(), nullptr);
  if (err < 0) throw MediaError("media_undecodable", "cannot read media streams: " + av_error_text(err));
  if (fmt->nb_streams == 0) throw MediaError("media_undecodable", "no streams in the file");

  const AVCodec* codec = nullptr;
  const int index = av_find_best_stream(fmt.get(), AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
  if (index == AVERROR_STREAM_NOT_FOUND) throw MediaError("media_no_audio", "the file has no audio stream");
  if (index < 0 || !codec) throw MediaError("media_undecodable", "no decoder for the audio stream");
  AVStream* stream = fmt->streams[index];

  // Only the chosen stream is demuxed further; the others are skipped cheaply.
  for (unsigned i = 0; i < fmt->nb_streams; ++i)
    if (int(i) != index) fmt->streams[i]->discard = AVDISCARD_ALL;

  CodecPtr dec(avcodec_alloc_context3(codec));
  if (!dec) throw std::bad_alloc();
  if (avcodec_parameters_to_context(dec.get(), stream->codecpar) < 0)
    throw MediaError("media_undecodable", "unusable audio stream parameters");
  dec->pkt_timebase = stream->time_base;
  err = avcodec_open2(dec.get(), codec, nullptr);
  if (err < 0) throw MediaError("media_undecodable", "cannot open the audio decoder: " + av_error_text(err));

  DecodedInfo info;
  info.title = metadata_title(fmt->metadata);
  if (!info.title) info.title = metadata_title(stream->metadata);
  if (fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0)
    info.container_duration = double(fmt->duration) / AV_TIME_BASE;
  bool duration_trusted = false;
  double declared = stream_duration(fmt.get(), stream, &duration_trusted);
  if (std::strcmp(fmt->iformat->name, "wav") == 0) {
    if (const double wav = wav_declared_seconds(path, stream); wav > declared) {
      declared = wav;
      duration_trusted = true;
    }
  }
  if (info.container_duration <= 0) info.container_duration = declared;

  PacketPtr packet(av_packet_alloc());
  FramePtr frame(av_frame_alloc());
  if (!packet || !frame) throw std::bad_alloc();
  Resampler resampler(sink);

  int64_t packets = 0;
  int64_t bad_packets = 0;
  bool last_packet_bad = false;  // the stream breaks off inside a frame
  bool read_failed = false;      // the demuxer hit damage rather than the end
  std::string read_error;

  // Returns false on a decode error (counted, and decoding goes on).
  auto receive_all = [&]() -> bool {
    for (;;) {
      const int r = avcodec_receive_frame(dec.get(), frame.get());
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return true;
      if (r < 0) return false;
      resampler.push(frame.get());
      av_frame_unref(frame.get());
    }
  };

  for (;;) {
    const int r = av_read_frame(fmt.get(), packet.get());
    if (r == AVERROR_EOF) break;
    if (r < 0) {
      read_failed = true;
      read_error = av_error_text(r);
      break;
    }
    if (packet->stream_index == index) {
      ++packets;
      const int s = avcodec_send_packet(dec.get(), packet.get());
      const bool ok = (s >= 0 || s == AVERROR(EAGAIN)) && receive_all();
      if (!ok) ++bad_packets;
      last_packet_bad = !ok;
    }
    av_packet_unref(packet.get());
  }
  // Flushing the decoder hands out the frames it still holds.
  if (avcodec_send_packet(dec.get(), nullptr) >= 0 && !receive_all()) {
    ++bad_packets;
    last_packet_bad = true;
  }
  resampler.finish();

  info.samples = resampler.samples();
  info.duration_seconds = double(info.samples) / kSampleRate;
  if (info.samples == 0) {
    if (read_failed) throw MediaError("media_undecodable", "cannot read the audio stream: " + read_error);
    throw MediaError("media_undecodable", "no audio could be decoded");
  }
  if (read_failed) throw MediaError("media_truncated", "the file breaks off: " + read_error);
  if (last_packet_bad) throw MediaError("media_truncated", "the audio stream ends inside a damaged frame");
  if (bad_packets >= kMinBadPacketsForDamage && double(bad_packets) > kMaxBadPacketShare * double(packets))
    throw MediaError("media_truncated", "too many damaged audio packets");
  if (duration_trusted && declared > 0 && info.duration_seconds < kTruncatedShare * declared &&
      declared - info.duration_seconds > kTruncatedSeconds)
    throw MediaError("media_truncated", "decoded audio is shorter than the file declares");
  return info;
}

}  // namespace scribe::media
