#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/time.h"
#include "domain/transcript_text.h"
#include "eventstore/event.h"

// Transcript revisions: a person's corrections of a completed transcription
// (text, cue times, splits and merges, speaker of a cue, display names of
// speakers) kept as a layer over the recognized transcript, which never
// changes. Each revision is a whole list of cues, saved on the stream
// `revisions-<transcription_id>`; the latest one still standing is what the
// spec calls the materialized cues (GET .../subtitles?source=materialized),
// and the transcript exports and search read it instead of the recognized
// segments. Undo (DELETE .../revisions/latest) withdraws the latest; the one
// before it, or the recognized transcript, is current again. Revision numbers
// are never reused: after an undo the next save takes a new number.
//
// Optimistic concurrency: a save names the revision it was edited from
// (`base_revision`, null for the recognized transcript) and is refused with
// 409 unless that is still the latest, so two editors never overwrite each
// other's work silently.
namespace scribe::revision {

std::string stream_id(int64_t transcription_id);

// One cue of a revision. `id` names the cue in search hits (`segment_id`):
// drawn from the segment id sequence when the revision is saved, so hits of
// revised text never collide with recognized segments.
struct Cue {
  int64_t id = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::string text;  // trimmed, one line (the preset breaks lines)
  std::optional<std::string> speaker;
};

using SpeakerNames = std::map<std::string, std::string>;

// A save request as the client sent it, validated.
struct Draft {
  std::optional<int64_t> base_revision;
  std::vector<Cue> cues;
  SpeakerNames speaker_names;
};

// What a draft is checked against: the recording's length and the speaker
// labels the recognized transcript uses (any SPEAKER_NN is accepted too, so
// an editor may introduce a speaker recognition missed).
struct Bounds {
  int64_t duration_ms = 0;
  std::set<std::string> known_speakers;
};

// Parses and validates a request body (a JSON object). Throws 400
// invalid_request naming the field by its path ("cues[3].end_ms",
// "speaker_names.SPEAKER_01") on the first rule broken:
//  - base_revision: present, null or an integer >= 1;
//  - cues: an array of 1..kRevisionMaxCues objects, in order of start_ms and
//    not overlapping (a cue starts at or after the previous one's end);
//  - start_ms, end_ms: integers, 0 <= start_ms < end_ms <= the duration;
//  - text: a string, 1..kRevisionCueTextMaxChars code points after trimming
//    blanks, valid UTF-8 without control characters; all texts together at
//    most kRevisionMaxTextBytes bytes;
//  - speaker: absent, null, a label SPEAKER_NN (two digits) or a label of
//    the recognized transcript;
//  - speaker_names: absent or an object of at most kRevisionMaxSpeakerNames
//    entries, each key a speaker as above, each value a name of
//    1..kSpeakerNameMaxChars code points after trimming, no control
//    characters.
// Unknown fields are ignored (a client may send back the cues it read).
Draft parse_draft(const Json& body, const Bounds& bounds);

bool is_speaker_label(const std::string& s);  // SPEAKER_ and two ASCII digits

// The stream folded: the revisions still standing, oldest first, and the
// highest number ever given.
struct State {
  std::vector<int64_t> standing;
  int64_t last_number = 0;
  int64_t version = 0;
  std::optional<int64_t> latest() const {
    return standing.empty() ? std::nullopt : std::optional<int64_t>(standing.back());
  }
};
void apply(State& s, const std::string& type, const Json& data);
State fold(const std::vector<eventstore::RecordedEvent>& events);

// The conflict rule: 409 invalid_request (reason revision_conflict, field
// base_revision, latest_revision) unless `base` is the latest standing
// revision (both absent counts as equal).
void check_base(const State& s, std::optional<int64_t> base);

// TranscriptRevisionSaved with the draft's cues (their ids already set) as
// revision last_number + 1. Checks the base first.
eventstore::NewEvent saved(const State& s, int64_t transcription_id, int64_t account_id, const Draft& d, TimePoint at);
// TranscriptRevisionUndone of the latest standing revision; 404 not_found
// when none stands.
eventstore::NewEvent undone(const State& s, int64_t transcription_id, int64_t account_id, TimePoint at);

// The event's fields as JSON and back (the projection stores them as read).
Json cues_to_json(const std::vector<Cue>& cues);
std::vector<Cue> cues_from_json(const Json& cues);
Json names_to_json(const SpeakerNames& names);
SpeakerNames names_from_json(const Json& names);

// Cues as the transcript exports read segments (segment id = cue id).
std::vector<transcript::Segment> as_segments(const std::vector<Cue>& cues);

// The words of revised cues, for the word-timed subtitle renderings
// (vtt-karaoke, json). Edited words have no recognizer confidence and, in
// general, no measured time. Decision: a cue whose start, end, text and
// speaker equal those of a recognized segment was not edited, and keeps that
// segment's recognized words (and their times); the words of any other cue
// are spread over the cue by character count, as sentence-mode subtitles
// time the words of a segment. `recognized_words` carry their segment's id.
std::vector<transcript::Word> cue_words(const std::vector<transcript::Segment>& cues,
                                        const std::vector<transcript::Segment>& recognized,
                                        const std::vector<transcript::Word>& recognized_words);

// Display names instead of recording labels, for exports that ask for them
// (speaker_names=true); a label without a name stays as it is.
void apply_names(std::vector<transcript::Segment>& segments, const SpeakerNames& names);
void apply_names(std::vector<transcript::Word>& words, const SpeakerNames& names);

}  // namespace scribe::revision
