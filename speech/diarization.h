#pragma once
#include <vector>

#include "speech/speech_types.h"

// Speaker diarization from acoustic features: MFCCs computed here, summarized
// over short windows inside the speech pieces, clustered per recording. The
// number of speakers is estimated (not fixed); labels are numbered in order of
// first appearance, so 0 is the first voice heard.
namespace scribe::speech {

struct DiarizationOptions {
  double window_seconds = 1.5;
  double hop_seconds = 0.75;
  int max_speakers = 8;
  // Clustering stops when merging two clusters would cost (Ward's criterion,
  // cluster sizes capped at 16 windows) more than this many times the
  // within-voice noise of one window, estimated per recording; higher values
  // find fewer speakers. On synthetic voices, merges within one voice cost
  // up to ~13; merges of different voices cost 35 or more in long
  // recordings but only 15-20 in a 20-second exchange of four turns (few
  // windows per cluster), hence 15 rather than the middle of the gap.
  double merge_threshold = 15.0;
  // Clusters holding less than this share of the speech windows are treated
  // as outliers and folded into the nearest speaker.
  double min_speaker_share = 0.04;
};

// Returns spans covering the speech pieces (sorted, non-overlapping); a span
// whose speaker could not be decided with confidence has speaker nullopt.
std::vector<SpeakerSpan> diarize(const PcmSource& pcm, const std::vector<SpeechPiece>& pieces,
                                 DiarizationOptions options = {});

// The speaker of the time stretch [start, end): the label covering most of
// it, or nullopt when no span overlaps it or the covering spans disagree
// without a clear majority.
std::optional<int> speaker_at(const std::vector<SpeakerSpan>& spans, double start, double end);

}  // namespace scribe::speech
