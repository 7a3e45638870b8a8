#pragma once
#include <cstdint>
#include <pqxx/pqxx>
#include <vector>

#include "domain/transcript_text.h"

// The transcript read models (`segments`, `words`) of one transcription as
// the plain values the exports render, in spoken order. Shared by the
// export handlers and bench/exports_benchmark.cpp; the caller has already
// checked that the transcription is the caller's.
namespace scribe::api {

std::vector<transcript::Segment> load_segments(pqxx::transaction_base& txn, int64_t transcription_id);
std::vector<transcript::Word> load_words(pqxx::transaction_base& txn, int64_t transcription_id);

}  // namespace scribe::api
