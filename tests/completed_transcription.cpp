#include "tests/completed_transcription.h"

#include <stdexcept>

#include "common/crypto.h"
#include "common/object_store.h"
#include "enrichment/artifact_store.h"
#include "enrichment/enricher.h"
#include "tests/pg_fixture.h"

namespace scribe::testing {

using namespace commands;

transcript::TranscriptArtifact topical_transcript(pqxx::connection& conn) {
  const std::vector<std::vector<std::string>> topics = {
      {"The bees gather nectar from the clover fields every morning.",
       "A healthy hive keeps its queen warm through the winter.", "Beekeepers smoke the hive to calm the bees.",
       "Honey is harvested from the frames at the end of summer.", "The bees build wax combs in a hexagonal pattern."},
      {"The volcano erupted and sent ash across the valley.", "Magma rises through cracks in the crust of the earth.",
       "Lava flows cooled into black basalt rock near the volcano.",
       "Scientists measure the gas coming out of the volcano crater.",
       "An eruption can change the weather for a whole year."},
      {"The chess player opened with the queen's gambit.", "Each chess piece moves in its own pattern on the board.",
       "A good chess player controls the center of the board early.",
       "The knight jumped over the pawns to attack the rook.", "Checkmate ended the chess game after forty moves."},
      {"The bread dough must rise for two hours in a warm kitchen.",
       "Sourdough bread uses a starter of flour and water.", "Knead the dough until the bread feels smooth.",
       "Bake the bread in a hot oven until the crust is brown.", "Fresh bread smells wonderful in the morning."}};
  transcript::TranscriptArtifact t;
  t.language = "en";
  t.engine = "test";
  double at = 0;
  pqxx::work txn(conn);
  for (const auto& topic : topics)
    for (const auto& sentence : topic) {
      transcript::ArtifactSegment s;
      s.id = txn.exec("select nextval('segment_ids')")[0][0].as<int64_t>();
      s.start = at;
      s.end = at + 5.5;
      s.speaker = "SPEAKER_00";
      s.text = sentence;
      // Its words evenly over the sentence's 5.5 s, trailing punctuation apart
      // as the recognizer reports it.
      std::vector<std::string> words;
      for (std::size_t i = 0, j; i < sentence.size(); i = j + 1) {
        j = sentence.find(' ', i);
        if (j == std::string::npos) j = sentence.size();
        words.push_back(sentence.substr(i, j - i));
      }
      const double step = 5.5 / static_cast<double>(words.size());
      for (std::size_t k = 0; k < words.size(); ++k) {
        transcript::ArtifactWord w;
        w.text = words[k];
        if (!w.text.empty() && (w.text.back() == '.' || w.text.back() == ',')) {
          w.punctuation = std::string(1, w.text.back());
          w.text.pop_back();
        }
        w.start = at + step * static_cast<double>(k);
        w.end = w.start + step * 0.9;
        w.confidence = 0.9;
        s.words.push_back(std::move(w));
      }
      t.segments.push_back(std::move(s));
      at += 6;
    }
  txn.commit();
  t.duration_seconds = at;
  return t;
}

Completed completed_transcription(pqxx::connection& conn, const std::string& kind, plans::Tier plan) {
  auto& store = PgTest::store();

  Completed c;
  const int64_t account = open_account(store, conn, PgTest::unique("enrich") + "@example.com", plan, {"test", ""});
  deposit(store, conn, account, 10'000'000, "test", {"test", ""});
  c.caller = Caller{account, std::nullopt, std::nullopt, {"test", ""}};
  transcription::Request r;
  r.source = "upload";
  r.upload_id = "upl_" + PgTest::unique("e");
  r.original_filename = "talk.wav";
  r.duration_seconds = 120;
  c.id = create(store, conn, c.caller, r).transcription_id;
  c.transcript = topical_transcript(conn);
  const std::string bytes = transcript::to_json(c.transcript).dump();
  const std::string digest = crypto::sha256_hex(bytes);
  const std::string key = transcript::artifact_key(c.id, 1, digest);
  object_store().put(key, bytes);
  Completion done;
  done.duration_seconds = c.transcript.duration_seconds;
  done.artifacts = {{"transcript", {{"key", key}, {"sha256", digest}}}};
  if (kind == "real") {
    c.enrichment = enrichment::enrich_transcript(c.transcript);
    done.artifacts["enrichment"] = enrichment::store_artifact(c.id, 1, c.enrichment);
  } else if (kind == "failed") {
    done.artifacts["enrichment"] = {{"error", "enrichment_failed"}};
  } else {
    done.artifacts["enrichment"] = {{"key", transcript::transcription_prefix(c.id) + "gone.json"}, {"sha256", "00"}};
  }
  if (!complete_attempt(store, conn, c.id, 1, done, {"worker", ""}))
    throw std::runtime_error("the test transcription did not complete");
  return c;
}

}  // namespace scribe::testing
