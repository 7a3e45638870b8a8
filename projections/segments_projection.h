#pragma once
#include <cstdint>
#include <pqxx/pqxx>

#include "domain/transcript_artifact.h"

namespace scribe::projections {

// Writes the `words` rows and then the `segments` rows (with their packed
// words) of one transcript artifact; the segments projection's apply() calls
// it for a completion, after clearing the transcription's old rows.
// bench/exports_benchmark.cpp loads its synthetic transcript through it, so
// the benchmark reads rows written the way the service writes them.
void write_transcript_rows(pqxx::work& txn, int64_t transcription_id, const transcript::TranscriptArtifact& artifact);

}  // namespace scribe::projections
