#include "api/export_rows.h"

#include "common/db.h"

namespace scribe::api {
namespace {

const db::Statement kSegments{"exports.segments",
                              "select id, start_ms, end_ms, speaker, text from segments "
                              "where transcription_id = $1 order by segment_index"};
const db::Statement kWords{"exports.words",
                           "select text, punctuation, start_ms, end_ms, speaker, segment_id from words "
                           "where transcription_id = $1 order by word_index"};

std::optional<std::string> opt_text(const pqxx::field& f) {
  return f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str());
}

}  // namespace

std::vector<transcript::Segment> load_segments(pqxx::transaction_base& txn, int64_t transcription_id) {
  std::vector<transcript::Segment> out;
  auto res = txn.exec_prepared(kSegments.name, transcription_id);
  out.reserve(res.size());
  for (const auto& r : res)
    out.push_back({r[0].as<int64_t>(), r[1].as<int64_t>(), r[2].as<int64_t>(), opt_text(r[3]), r[4].c_str()});
  return out;
}

std::vector<transcript::Word> load_words(pqxx::transaction_base& txn, int64_t transcription_id) {
  std::vector<transcript::Word> out;
  auto res = txn.exec_prepared(kWords.name, transcription_id);
  out.reserve(res.size());
  for (const auto& r : res)
    out.push_back({r[0].c_str(), opt_text(r[1]), r[2].as<int64_t>(), r[3].as<int64_t>(), opt_text(r[4]),
                   r[5].as<int64_t>()});
  return out;
}

}  // namespace scribe::api
