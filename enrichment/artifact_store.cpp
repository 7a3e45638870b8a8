#include "enrichment/artifact_store.h"

#include "common/crypto.h"
#include "common/object_store.h"
#include "enrichment/enricher.h"

namespace scribe::enrichment {
namespace {

Json put(const std::string& key, const std::string& bytes, const std::string& digest) {
  object_store().put(key, bytes);
  return {{"key", key}, {"sha256", digest}};
}

}  // namespace

EnrichmentArtifact enrich_transcript(const transcript::TranscriptArtifact& t) {
  EnrichmentArtifact a = enrich(t);
  for (auto& s : a.sections)
    if (s.first_segment_index >= 0 && static_cast<size_t>(s.first_segment_index) < t.segments.size())
      s.first_segment_id = t.segments[s.first_segment_index].id;
  return a;
}

Json store_artifact(int64_t transcription_id, int attempt, const EnrichmentArtifact& a) {
  const std::string bytes = to_json(a).dump();
  const std::string digest = crypto::sha256_hex(bytes);
  Json ref = put(artifact_key(transcription_id, attempt, digest), bytes, digest);
  ref["method"] = a.method;
  ref["sections"] = a.sections.size();
  ref["chapters"] = a.chapters.size();
  ref["acts"] = a.acts.size();
  ref["qna"] = a.qna.size();
  return ref;
}

Json store_posting(int64_t transcription_id, const PostingChapters& p) {
  const std::string bytes = to_json(p).dump();
  const std::string digest = crypto::sha256_hex(bytes);
  return put(posting_key(transcription_id, digest), bytes, digest);
}

}  // namespace scribe::enrichment
