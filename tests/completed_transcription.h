#pragma once
#include <pqxx/pqxx>
#include <string>

#include "commands/transcription_commands.h"
#include "domain/enrichment_artifact.h"
#include "domain/transcript_artifact.h"

// A completed transcription for database tests, made through the commands
// with a real transcript artifact and (by default) its real enrichment, so
// the inline projections write every read model of it as in scribe.
namespace scribe::testing {

// Four clearly different topics (bees, volcanoes, chess, bread), five
// sentences each, a sentence every 6 s; segment ids drawn from the sequence.
transcript::TranscriptArtifact topical_transcript(pqxx::connection& conn);

struct Completed {
  int64_t id = 0;
  commands::Caller caller;
  transcript::TranscriptArtifact transcript;
  enrichment::EnrichmentArtifact enrichment;
};

// A new free account with 10 USD and a completed transcription of
// topical_transcript() whose completion carries `kind` of enrichment: the
// real one ("real"), none ("failed"), or one naming an object that is not
// there ("missing"). `plan` is the new account's.
Completed completed_transcription(pqxx::connection& conn, const std::string& kind = "real",
                                  plans::Tier plan = plans::Tier::Free);

}  // namespace scribe::testing
