#include "speech/diarization.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "speech/mfcc.h"

// How it works, and why:
//  1. Each speech piece is read on its own (in chunks of at most a minute, so
//     even a runaway piece never holds much audio) and turned into MFCCs.
//     Only per-window sums survive a piece, so memory is a few hundred bytes
//     per window however long the recording is.
//  2. Cepstra c1.. (c0 and energy say how loud, not who) are normalized with
//     the recording's mean and deviation, and each window becomes an
//     embedding: the mean of its voiced frames plus their log spread.
//  3. The noise of a window embedding within one voice is estimated from
//     pairs of nearby, non-overlapping windows of the same piece (nearly
//     always one speaker), so the stopping threshold is relative to this
//     recording rather than an absolute number tuned for one microphone.
//  4. Consecutive similar windows are chained into segments (linear time),
//     segments are merged bottom-up by Ward's criterion until merging would
//     join clearly different voices, tiny clusters are dissolved, and the
//     windows are finally re-assigned to the nearest cluster centroid with a
//     short median filter. This estimates the number of speakers instead of
//     asking for it, and stays fast on hours of audio because the quadratic
//     step only sees segments.
namespace scribe::speech {
namespace {

constexpr int kFirstCepstrum = 1;
constexpr int kLastCepstrum = 19;  // inclusive
constexpr int kDims = kLastCepstrum - kFirstCepstrum + 1;
constexpr int kEmbeddingDims = 2 * kDims;
// Frames quieter than this below the loud frames of their chunk are pauses
// or breath; they describe the room more than the voice.
constexpr float kVoicedRangeNats = 9.0f;
// Digital silence and near-silence are never speech.
constexpr float kAbsoluteEnergyFloor = 9.0f;
constexpr int kMinVoicedFrames = 25;
constexpr int64_t kMaxChunkSamples = int64_t(60) * kSampleRate;
// Weight of the log-spread half of the embedding relative to the means.
constexpr double kSpreadWeight = 0.7;
// Chaining joins a window to the running segment when the Ward cost is below
// this many times the within-voice noise; stricter than the clustering
// threshold because a wrong chain is only undone by the refinement.
constexpr double kChainThreshold = 1.5;
constexpr double kMaxSegmentWindows = 20;
// The quadratic clustering step sees at most this many segments.
constexpr size_t kMaxAgglomerated = 2000;
constexpr int kMinSpeakerWindows = 4;
constexpr int kRefinementRounds = 3;
// A window whose two nearest voices are closer than this (in units of the
// within-voice noise) is not attributed unless its neighbours agree.
constexpr double kAmbiguityMargin = 0.15;

struct Window {
  double start = 0;
  double end = 0;
  int chunk = 0;  // windows of one chunk are contiguous and ordered
  int voiced = 0;
  int label = -1;  // cluster index while clustering, then the speaker
  bool ambiguous = false;
};

struct WindowStats {
  std::vector<Window> windows;
  std::vector<double> sums;     // windows x kDims, over voiced frames
  std::vector<double> squares;  // windows x kDims
  std::vector<double> total_sum = std::vector<double>(kDims, 0.0);
  std::vector<double> total_square = std::vector<double>(kDims, 0.0);
  int64_t total_frames = 0;
  std::vector<std::pair<double, double>> chunks;  // [start, end) seconds
};

void collect_chunk(const MfccExtractor& mfcc, const std::vector<int16_t>& samples, double chunk_start,
                   int window_frames, int hop_frames, WindowStats& stats) {
  const int chunk = int(stats.chunks.size());
  const double chunk_end = chunk_start + double(samples.size()) / kSampleRate;
  stats.chunks.emplace_back(chunk_start, chunk_end);
  const int dim = mfcc.dimension();
  const std::vector<float> features = mfcc.compute(samples);
  const int frames = int(features.size() / size_t(dim));

  std::vector<uint8_t> voiced(frames, 0);
  if (frames > 0) {
    std::vector<float> energy(frames);
    for (int f = 0; f < frames; ++f) energy[f] = features[size_t(f) * dim + dim - 1];
    std::vector<float> sorted = energy;
    const size_t loud = size_t(0.95 * double(frames - 1));
    std::nth_element(sorted.begin(), sorted.begin() + loud, sorted.end());
    const float threshold = std::max(sorted[loud] - kVoicedRangeNats, kAbsoluteEnergyFloor);
    for (int f = 0; f < frames; ++f) voiced[f] = energy[f] >= threshold;
  }

  // Window starts spread evenly so the last window ends at the last frame;
  // a chunk shorter than one window is a single window.
  int count = 1;
  if (frames > window_frames) count = 1 + (frames - window_frames + hop_frames - 1) / hop_frames;
  const int span = std::min(frames, window_frames);
  for (int i = 0; i < count; ++i) {
    const int first = count == 1 ? 0 : int(std::lround(double(i) * (frames - span) / (count - 1)));
    const int last = first + span;  // exclusive
    Window window;
    window.chunk = chunk;
    window.start = i == 0 ? chunk_start : chunk_start + first * kFrameSeconds;
    window.end = i == count - 1 ? chunk_end : std::min(chunk_end, chunk_start + (last - 1) * kFrameSeconds + 0.025);
    std::vector<double> sum(kDims, 0.0), square(kDims, 0.0);
    for (int f = first; f < last; ++f) {
      if (!voiced[f]) continue;
      ++window.voiced;
      const float* row = features.data() + size_t(f) * dim + kFirstCepstrum;
      for (int d = 0; d < kDims; ++d) {
        sum[d] += row[d];
        square[d] += double(row[d]) * row[d];
      }
    }
    stats.windows.push_back(window);
    stats.sums.insert(stats.sums.end(), sum.begin(), sum.end());
    stats.squares.insert(stats.squares.end(), square.begin(), square.end());
  }
  // Recording-wide statistics count each voiced frame once, not once per
  // overlapping window.
  for (int f = 0; f < frames; ++f) {
    if (!voiced[f]) continue;
    ++stats.total_frames;
    const float* row = features.data() + size_t(f) * dim + kFirstCepstrum;
    for (int d = 0; d < kDims; ++d) {
      stats.total_sum[d] += row[d];
      stats.total_square[d] += double(row[d]) * row[d];
    }
  }
}

double squared_distance(const double* a, const double* b) {
  double sum = 0;
  for (int d = 0; d < kEmbeddingDims; ++d) {
    const double diff = a[d] - b[d];
    sum += diff * diff;
  }
  return sum;
}

// Clusters as running sums of member embeddings; Ward's cost of merging two
// is the growth of the within-cluster scatter. Sizes are capped so that two
// large clusters of one voice that differ slightly (another day, another
// mood) are not kept apart only because they are large.
struct Clusters {
  std::vector<double> sums;  // clusters x kEmbeddingDims
  std::vector<double> sizes;
  std::vector<bool> alive;
  std::vector<int> parent;  // the cluster a merged-away cluster went into
  double size_cap = 16;

  int add(const double* embedding, double size) {
    sums.insert(sums.end(), embedding, embedding + kEmbeddingDims);
    for (int d = 0; d < kEmbeddingDims; ++d) sums[sums.size() - kEmbeddingDims + d] *= size;
    sizes.push_back(size);
    alive.push_back(true);
    parent.push_back(int(sizes.size()) - 1);
    return int(sizes.size()) - 1;
  }
  void absorb(int into, int from) {
    double* target = sums.data() + size_t(into) * kEmbeddingDims;
    const double* source = sums.data() + size_t(from) * kEmbeddingDims;
    for (int d = 0; d < kEmbeddingDims; ++d) target[d] += source[d];
    sizes[into] += sizes[from];
    alive[from] = false;
    parent[from] = into;
  }
  int root(int id) {
    while (parent[id] != id) {
      parent[id] = parent[parent[id]];
      id = parent[id];
    }
    return id;
  }
  double cost(int a, int b) const {
    const double* sa = sums.data() + size_t(a) * kEmbeddingDims;
    const double* sb = sums.data() + size_t(b) * kEmbeddingDims;
    double distance = 0;
    for (int d = 0; d < kEmbeddingDims; ++d) {
      const double diff = sa[d] / sizes[a] - sb[d] / sizes[b];
      distance += diff * diff;
    }
    const double na = std::min(sizes[a], size_cap), nb = std::min(sizes[b], size_cap);
    return na * nb / (na + nb) * distance;
  }
};

// Bottom-up merging of the clusters in `ids` while the cheapest merge costs
// less than `threshold` or more than `max_clusters` remain. Nearest
// neighbours are cached per cluster, so a merge costs one row, not a matrix.
std::vector<int> agglomerate(Clusters& clusters, std::vector<int> ids, double threshold, size_t max_clusters) {
  const size_t n = ids.size();
  std::vector<int> nearest(n, -1);
  std::vector<double> nearest_cost(n, std::numeric_limits<double>::infinity());
  std::vector<bool> active(n, true);
  auto rescan = [&](size_t i) {
    nearest[i] = -1;
    nearest_cost[i] = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < n; ++j) {
      if (j == i || !active[j]) continue;
      const double c = clusters.cost(ids[i], ids[j]);
      if (c < nearest_cost[i]) {
        nearest_cost[i] = c;
        nearest[i] = int(j);
      }
    }
  };
  for (size_t i = 0; i < n; ++i) rescan(i);
  size_t remaining = n;
  while (remaining > 1) {
    size_t best = n;
    for (size_t i = 0; i < n; ++i) {
      if (active[i] && nearest[i] >= 0 && (best == n || nearest_cost[i] < nearest_cost[best])) best = i;
    }
    if (best == n) break;
    if (nearest_cost[best] >= threshold && remaining <= max_clusters) break;
    const size_t other = size_t(nearest[best]);
    clusters.absorb(ids[best], ids[other]);
    active[other] = false;
    --remaining;
    for (size_t i = 0; i < n; ++i) {
      if (!active[i] || i == best) continue;
      if (nearest[i] == int(best) || nearest[i] == int(other)) {
        rescan(i);
      } else {
        const double c = clusters.cost(ids[i], ids[best]);
        if (c < nearest_cost[i]) {
          nearest_cost[i] = c;
          nearest[i] = int(best);
        }
      }
    }
    rescan(best);
  }
  std::vector<int> kept;
  for (size_t i = 0; i < n; ++i) {
    if (active[i]) kept.push_back(ids[i]);
  }
  return kept;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  return values[mid];
}

}  // namespace

std::vector<SpeakerSpan> diarize(const PcmSource& pcm, const std::vector<SpeechPiece>& pieces,
                                 DiarizationOptions options) {
  // Pieces sorted, clipped to the recording and to each other, so the spans
  // built from them come out sorted and non-overlapping.
  std::vector<SpeechPiece> sorted = pieces;
  std::sort(sorted.begin(), sorted.end(),
            [](const SpeechPiece& a, const SpeechPiece& b) { return a.start_sample < b.start_sample; });
  const int64_t total = pcm.total_samples();
  const MfccExtractor mfcc;
  const int window_frames = std::max(1, int(std::lround(options.window_seconds / kFrameSeconds)));
  const int hop_frames = std::clamp(int(std::lround(options.hop_seconds / kFrameSeconds)), 1, window_frames);
  WindowStats stats;
  int64_t previous_end = 0;
  for (const SpeechPiece& piece : sorted) {
    const int64_t start = std::max({piece.start_sample, previous_end, int64_t(0)});
    const int64_t end = std::min(piece.end_sample, total);
    if (end <= start) continue;
    previous_end = end;
    // A short remainder is folded into the chunk before it rather than left
    // as a sliver too short to describe a voice.
    for (int64_t pos = start; pos < end;) {
      int64_t count = std::min(kMaxChunkSamples, end - pos);
      if (end - pos - count < 10 * kSampleRate) count = end - pos;
      const std::vector<int16_t> samples = pcm.read(pos, count);
      collect_chunk(mfcc, samples, double(pos) / kSampleRate, window_frames, hop_frames, stats);
      pos += count;
    }
  }
  std::vector<Window>& windows = stats.windows;
  const size_t n = windows.size();

  // Embeddings of windows with enough voiced frames to describe a voice.
  std::vector<double> mean(kDims, 0.0), deviation(kDims, 1.0);
  if (stats.total_frames > 1) {
    for (int d = 0; d < kDims; ++d) {
      mean[d] = stats.total_sum[d] / double(stats.total_frames);
      const double variance = stats.total_square[d] / double(stats.total_frames) - mean[d] * mean[d];
      deviation[d] = std::sqrt(std::max(variance, 1e-6));
    }
  }
  std::vector<double> embeddings(n * kEmbeddingDims, 0.0);
  std::vector<size_t> usable;
  for (size_t i = 0; i < n; ++i) {
    if (windows[i].voiced < kMinVoicedFrames) continue;
    usable.push_back(i);
    const double count = windows[i].voiced;
    for (int d = 0; d < kDims; ++d) {
      const double m = stats.sums[i * kDims + d] / count;
      const double variance = std::max(stats.squares[i * kDims + d] / count - m * m, 1e-6);
      embeddings[i * kEmbeddingDims + d] = (m - mean[d]) / deviation[d];
      embeddings[i * kEmbeddingDims + kDims + d] = kSpreadWeight * std::log(std::sqrt(variance) / deviation[d]);
    }
  }
  const double* emb = embeddings.data();
  auto embedding = [&](size_t i) { return emb + i * kEmbeddingDims; };

  // Within-voice noise of a window embedding, from nearby windows of one
  // piece that share no frames; half the median squared distance is the
  // expected Ward cost of merging two windows of the same voice.
  std::vector<double> pair_distances;
  for (size_t a = 0; a < usable.size(); ++a) {
    for (size_t b = a + 1; b < usable.size(); ++b) {
      const Window& wa = windows[usable[a]];
      const Window& wb = windows[usable[b]];
      if (wb.chunk != wa.chunk) break;
      if (wb.start + 1e-9 < wa.end) continue;
      pair_distances.push_back(squared_distance(embedding(usable[a]), embedding(usable[b])));
      break;
    }
  }
  if (pair_distances.size() < 8) {
    pair_distances.clear();
    for (size_t a = 0; a + 1 < usable.size(); ++a) {
      pair_distances.push_back(squared_distance(embedding(usable[a]), embedding(usable[a + 1])));
    }
  }
  const double noise = std::max(median(pair_distances) / 2, 1e-6);

  // Linear chaining of consecutive similar windows into segments.
  Clusters clusters;
  std::vector<int> segment_of(n, -1);
  int current = -1;
  for (size_t k = 0; k < usable.size(); ++k) {
    const size_t i = usable[k];
    bool join = false;
    if (current >= 0 && windows[usable[k - 1]].chunk == windows[i].chunk &&
        clusters.sizes[current] < kMaxSegmentWindows) {
      const double size = clusters.sizes[current];
      double distance = 0;
      for (int d = 0; d < kEmbeddingDims; ++d) {
        const double diff = clusters.sums[size_t(current) * kEmbeddingDims + d] / size - embedding(i)[d];
        distance += diff * diff;
      }
      join = size / (size + 1) * distance < kChainThreshold * noise;
    }
    if (join) {
      for (int d = 0; d < kEmbeddingDims; ++d) clusters.sums[size_t(current) * kEmbeddingDims + d] += embedding(i)[d];
      clusters.sizes[current] += 1;
    } else {
      current = clusters.add(embedding(i), 1.0);
    }
    segment_of[i] = current;
  }

  // Agglomerative clustering of the segments (the largest ones when there
  // are very many; the rest find their cluster in the refinement below).
  std::vector<int> ids(clusters.sizes.size());
  std::iota(ids.begin(), ids.end(), 0);
  if (ids.size() > kMaxAgglomerated) {
    std::nth_element(ids.begin(), ids.begin() + kMaxAgglomerated, ids.end(),
                     [&](int a, int b) { return clusters.sizes[a] > clusters.sizes[b]; });
    ids.resize(kMaxAgglomerated);
  }
  std::vector<int> kept =
      agglomerate(clusters, ids, options.merge_threshold * noise, std::numeric_limits<size_t>::max());
  // Clusters too small to be a speaker are outliers (a laugh, a cough, a
  // window straddling a turn); their windows go to the nearest real voice.
  const double min_size = std::max(double(kMinSpeakerWindows), options.min_speaker_share * double(usable.size()));
  std::vector<int> speakers;
  for (int id : kept) {
    if (clusters.sizes[id] >= min_size) speakers.push_back(id);
  }
  if (speakers.empty() && !kept.empty()) {
    speakers.push_back(*std::max_element(kept.begin(), kept.end(),
                                         [&](int a, int b) { return clusters.sizes[a] < clusters.sizes[b]; }));
  }
  const size_t max_speakers = size_t(std::max(1, options.max_speakers));
  if (speakers.size() > max_speakers) speakers = agglomerate(clusters, speakers, 0.0, max_speakers);

  // Refinement: windows re-assigned to the nearest centroid a few times.
  size_t k_count = speakers.size();
  std::vector<double> centroids(k_count * kEmbeddingDims);
  for (size_t c = 0; c < k_count; ++c) {
    for (int d = 0; d < kEmbeddingDims; ++d) {
      centroids[c * kEmbeddingDims + d] =
          clusters.sums[size_t(speakers[c]) * kEmbeddingDims + d] / clusters.sizes[speakers[c]];
    }
  }
  std::vector<double> margin(n, 0.0);
  for (int iteration = 0; iteration < kRefinementRounds && k_count > 0; ++iteration) {
    std::vector<double> sums(k_count * kEmbeddingDims, 0.0);
    std::vector<double> counts(k_count, 0.0);
    for (size_t i : usable) {
      double best = std::numeric_limits<double>::infinity(), second = best;
      int label = 0;
      for (size_t c = 0; c < k_count; ++c) {
        const double distance = squared_distance(embedding(i), centroids.data() + c * kEmbeddingDims);
        if (distance < best) {
          second = best;
          best = distance;
          label = int(c);
        } else if (distance < second) {
          second = distance;
        }
      }
      windows[i].label = label;
      margin[i] = second - best;
      counts[label] += 1;
      for (int d = 0; d < kEmbeddingDims; ++d) sums[size_t(label) * kEmbeddingDims + d] += embedding(i)[d];
    }
    for (size_t c = 0; c < k_count; ++c) {
      if (counts[c] == 0) continue;
      for (int d = 0; d < kEmbeddingDims; ++d)
        centroids[c * kEmbeddingDims + d] = sums[c * kEmbeddingDims + d] / counts[c];
    }
  }
  for (size_t i : usable) windows[i].ambiguous = k_count > 1 && margin[i] < kAmbiguityMargin * noise;

  // Smoothing inside each chunk: a lone window between two agreeing
  // neighbours takes their label; ambiguous and unusable windows take their
  // neighbours' label when that is clear, and stay unattributed otherwise.
  std::vector<int> labels(n, -1);
  for (size_t i = 0; i < n; ++i) labels[i] = windows[i].label;
  auto same_chunk = [&](size_t a, size_t b) { return windows[a].chunk == windows[b].chunk; };
  for (size_t i = 1; i + 1 < n; ++i) {
    if (!same_chunk(i - 1, i) || !same_chunk(i, i + 1)) continue;
    const int left = windows[i - 1].label, right = windows[i + 1].label;
    if (left >= 0 && left == right && (windows[i].label != left || windows[i].ambiguous)) {
      labels[i] = left;
      windows[i].ambiguous = false;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (windows[i].ambiguous) labels[i] = -1;
  }
  for (size_t i = 0; i < n; ++i) {
    if (windows[i].label >= 0 || windows[i].ambiguous) continue;
    // Unusable (too little voice): borrow the nearest usable neighbour's label.
    for (size_t step = 1; step < n; ++step) {
      if (i >= step && same_chunk(i - step, i) && labels[i - step] >= 0) {
        labels[i] = labels[i - step];
        break;
      }
      if (i + step < n && same_chunk(i + step, i) && labels[i + step] >= 0 && windows[i + step].label >= 0) {
        labels[i] = labels[i + step];
        break;
      }
      if ((i < step || !same_chunk(i - step, i)) && (i + step >= n || !same_chunk(i + step, i))) break;
    }
  }

  // Speakers numbered in order of first appearance.
  std::map<int, int> order;
  for (size_t i = 0; i < n; ++i) {
    if (labels[i] >= 0 && !order.count(labels[i])) order.emplace(labels[i], int(order.size()));
  }

  // Spans: each window owns the time up to the middle of its overlap with
  // the next; adjacent spans with the same speaker are merged.
  std::vector<SpeakerSpan> spans;
  for (size_t i = 0; i < n; ++i) {
    const Window& w = windows[i];
    const double start =
        (i > 0 && same_chunk(i - 1, i)) ? (windows[i - 1].end + w.start) / 2 : stats.chunks[w.chunk].first;
    const double end =
        (i + 1 < n && same_chunk(i, i + 1)) ? (w.end + windows[i + 1].start) / 2 : stats.chunks[w.chunk].second;
    if (end <= start) continue;
    std::optional<int> speaker;
    if (labels[i] >= 0) speaker = order.at(labels[i]);
    if (!spans.empty() && spans.back().speaker == speaker && std::abs(spans.back().end - start) < 1e-9) {
      spans.back().end = end;
    } else {
      spans.push_back(SpeakerSpan{start, end, speaker});
    }
  }
  return spans;
}

std::optional<int> speaker_at(const std::vector<SpeakerSpan>& spans, double start, double end) {
  // Spans are sorted and disjoint, so the first that can overlap is found by
  // binary search; words are looked up one by one over long transcripts.
  auto it = std::lower_bound(spans.begin(), spans.end(), start,
                             [](const SpeakerSpan& span, double t) { return span.end <= t; });
  if (end <= start) {
    if (it != spans.end() && it->start <= start && start < it->end) return it->speaker;
    return std::nullopt;
  }
  std::map<int, double> by_speaker;
  double covered = 0;
  for (; it != spans.end() && it->start < end; ++it) {
    const double overlap = std::min(end, it->end) - std::max(start, it->start);
    if (overlap <= 0) continue;
    covered += overlap;
    if (it->speaker) by_speaker[*it->speaker] += overlap;
  }
  for (const auto& [speaker, time] : by_speaker) {
    if (time > 0.5 * covered) return speaker;
  }
  return std::nullopt;
}

}  // namespace scribe::speech
