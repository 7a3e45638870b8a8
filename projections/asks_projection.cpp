// Writes the `asks` table: the saved Q&A entries of POST .../ask and
// POST /api/v1/ask. Inline, so an entry is in /result the moment its ask
// answers. A redaction removes the row; so does the deletion of the
// transcription asked about (whose command redacts the entries' streams, so
// a rebuild finds no text to write back: a redacted QuestionAnswered has no
// question and is skipped).
#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{"asks.insert",
                            "insert into asks(id, account_id, transcription_id, question, answer, citations, model, "
                            "asked_at) values ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::timestamptz) "
                            "on conflict (id) do nothing"};
const db::Statement kDelete{"asks.delete", "delete from asks where id = $1"};
// What was asked about a deleted transcription, and library entries citing it
// (the deletion redacts their streams: commands/ask_commands.h).
const db::Statement kDeleteAbout{
    "asks.delete_about",
    "delete from asks where account_id = $2 and (transcription_id = $1 or (transcription_id is null and "
    "citations @> jsonb_build_array(jsonb_build_object('transcription_id', $1::bigint))))"};

class AsksProjection final : public Projection {
 public:
  std::string name() const override { return "asks"; }
  std::vector<std::string> tables() const override { return {"asks"}; }
  bool is_inline() const override { return true; }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const Json& d = e.data;
    if (e.type == events::kQuestionAnswered) {
      if (!d.contains("question")) return;  // redacted
      std::optional<int64_t> about;
      if (d.contains("transcription_id") && !d["transcription_id"].is_null())
        about = d["transcription_id"].get<int64_t>();
      txn.exec_prepared(kInsert.name, d.at("qna_id").get<int64_t>(), d.at("account_id").get<int64_t>(), about,
                        d.at("question").get<std::string>(), d.at("answer").get<std::string>(),
                        d.at("citations").dump(), d.value("model", ""), d.at("asked_at").get<std::string>());
    } else if (e.type == events::kQuestionRedacted) {
      txn.exec_prepared(kDelete.name, d.at("qna_id").get<int64_t>());
    } else if (e.type == events::kTranscriptionDeleted) {
      txn.exec_prepared(kDeleteAbout.name, d.at("transcription_id").get<int64_t>(), d.at("account_id").get<int64_t>());
    }
  }
};

}  // namespace

Projection& asks_projection() {
  static AsksProjection p;
  return p;
}

}  // namespace scribe::projections
