#pragma once
#include <cstdint>

#include "common/json.h"
#include "domain/enrichment_artifact.h"
#include "domain/transcript_artifact.h"

// Where enrichment meets the object store: the worker enriches a finished
// transcript and stores the artifact its completion event references; a
// regeneration stores a new posting-chapters cache. The store functions
// return the reference an event carries ({key, sha256, ...}).
namespace scribe::enrichment {

// enrich() (enricher.h) with each section's first_segment_id filled from
// `t`, so the section's id is known to every reader.
EnrichmentArtifact enrich_transcript(const transcript::TranscriptArtifact& t);

// Stores `a` as the enrichment artifact of attempt `attempt`.
Json store_artifact(int64_t transcription_id, int attempt, const EnrichmentArtifact& a);
// Stores a regenerated posting-chapters cache.
Json store_posting(int64_t transcription_id, const PostingChapters& p);

}  // namespace scribe::enrichment
