// POST /api/v1/transcriptions/{id}/ask, POST /api/v1/ask and the two DELETEs
// of a saved entry: questions answered from the transcript with cited
// moments (retrieval in api/ask_retrieval.h, the answer in
// enrichment/answering.h), metered by the Q&A allowance (commands/ask_commands.h),
// never by the wallet.
#include <chrono>
#include <map>

#include "api/ask_retrieval.h"
#include "api/caller.h"
#include "api/enrichment_rows.h"
#include "api/handlers/handlers.h"
#include "api/idempotency.h"
#include "api/params.h"
#include "api/services.h"
#include "api/transcription_view.h"
#include "commands/ask_commands.h"
#include "common/error.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

// What answers: extractive, from the retrieved segments.
constexpr const char* kModel = "extractive-bm25";

struct AskRequest {
  std::string question;
  int top_k = limits::kAskTopKDefault;
  std::optional<std::vector<int64_t>> transcription_ids;
};

AskRequest parse_request(RequestContext& ctx, bool library) {
  auto b = JsonBody::parse(ctx.req);
  AskRequest r;
  r.question = *b.trimmed_text("question", true, 1, limits::kAskQuestionMaxChars);
  r.top_k = static_cast<int>(
      b.integer("top_k", false, {limits::kAskTopKMin, limits::kAskTopKMax}).value_or(limits::kAskTopKDefault));
  if (library) r.transcription_ids = b.id_array("transcription_ids", limits::kAskMaxTranscriptionIds);
  else if (b.has("transcription_ids"))
    throw Error::invalid("transcription_ids",
                         "transcription_ids belongs to POST /api/v1/ask; this ask is about one "
                         "transcription");
  return r;
}

Json nullable(const std::optional<int>& n) { return n ? Json(*n) : Json(nullptr); }

// Beyond the budget nothing is saved or counted (the spec's qna_timeout).
void check_budget(std::chrono::steady_clock::time_point started) {
  if (std::chrono::steady_clock::now() - started > std::chrono::seconds(limits::kAskBudgetSeconds))
    throw Error("internal_error",
                "qna_timeout: the answer took longer than the " + std::to_string(limits::kAskBudgetSeconds) +
                    " s budget; retry the question",
                {{"reason", "qna_timeout"}});
}

struct Answered {
  enrichment::Answer answer;
  Json citations = Json::array();  // the response's
  Json stored = Json::array();     // the entry's (times in ms, no URL)
};

// Retrieval, the answer, and its citations with sections, titles and links.
// `library`: a citation's title is its transcript's; otherwise its section's.
Answered answer(RequestContext& ctx, const AskScope& scope, const AskRequest& r, bool library) {
  Answered out;
  pqxx::read_transaction txn(ctx.db());
  const auto& config = ctx.services.config;
  const Retrieved found =
      retrieve(txn, scope, r.question, {config.ask_alternates, config.ask_sound_alikes, config.ask_meaning_alikes});
  enrichment::Cited moved;
  out.answer = enrichment::answer_question(
      found.terms, found.segments, found.collection, {r.top_k, 3},
      [&](const enrichment::AskSegment& s) { return next_segment(txn, s); }, &moved);
  if (out.answer.no_answer) return out;
  std::map<int64_t, Json> transcriptions;
  for (const auto& c : out.answer.citations) {
    const auto& seg = enrichment::cited_segment(found.segments, moved, c.segment);
    auto it = transcriptions.find(seg.transcription_id);
    if (it == transcriptions.end()) {
      auto body = load_transcription(txn, scope.account_id, seg.transcription_id);
      if (!body) throw Error("internal_error", "a cited transcription could not be read; retry");
      it = transcriptions.emplace(seg.transcription_id, std::move(*body)).first;
    }
    const LinkSource link = LinkSource::of(it->second, ctx.services.config.public_url);
    const auto section = section_at(txn, seg.transcription_id, seg.start_ms);
    std::string title;
    if (library)
      title = it->second.value("title", Json(nullptr)).is_string() ? it->second["title"].get<std::string>() : "";
    else if (section) title = section->title;
    const Json section_id = section ? Json(section->id) : Json(nullptr);
    out.citations.push_back({{"marker", c.marker},
                             {"section_id", section_id},
                             {"transcription_id", seg.transcription_id},
                             {"title", title},
                             {"start_seconds", seg.start_ms / 1000.0},
                             {"url", link.at(seg.start_ms)},
                             {"quote", c.quote}});
    out.stored.push_back({{"marker", c.marker},
                          {"section_id", section_id},
                          {"transcription_id", seg.transcription_id},
                          {"title", title},
                          {"start_ms", seg.start_ms},
                          {"quote", c.quote}});
  }
  return out;
}

int64_t qna_id_param(RequestContext& ctx) { return ctx.id_param("qnaId", "Q&A entry"); }

}  // namespace

namespace {

struct Outcome {
  Answered answered;
  std::optional<int64_t> qna_id;
  ask::Remaining remaining;  // after this ask
};

// The 200 body of one kind of ask.
using Render = Json (*)(const Outcome&);

// One ask, either kind: refused (404, 409, 429) before any work, answered,
// and, unless nothing relevant was found, saved and counted. A saved
// answer's response is stored for its Idempotency-Key, if any, in the
// transaction that saves the entry (naming the entry's stream), so the copy
// is redacted whenever the entry is (commands/ask_commands.h); any other
// response is stored by ApiApp::execute, as for every POST.
Response run_ask(RequestContext& ctx, std::optional<int64_t> transcription_id, const AskRequest& r, Render render) {
  const auto started = std::chrono::steady_clock::now();
  const commands::Caller caller = caller_of(ctx);
  // Decided again at the append (record_answer).
  const auto checked = commands::check_ask(ctx.db(), caller, transcription_id);
  Outcome out;
  const AskScope scope{caller.account_id, transcription_id, transcription_id ? std::nullopt : r.transcription_ids};
  out.answered = answer(ctx, scope, r, !transcription_id);
  check_budget(started);
  if (out.answered.answer.no_answer) {
    // Nothing counted: what is left is one more than after an ask.
    auto plus_one = [](std::optional<int> n) { return n ? std::optional<int>(*n + 1) : std::nullopt; };
    out.remaining = {plus_one(checked.remaining.per_day), plus_one(checked.remaining.per_transcript)};
    return Response::json(200, render(out));
  }
  ask::Entry entry;
  entry.transcription_id = transcription_id;
  entry.question = r.question;
  entry.answer = out.answered.answer.answer;
  entry.citations = out.answered.stored;
  entry.model = kModel;
  Response res;
  commands::record_answer(ctx.services.store, ctx.db(), caller, std::move(entry),
                          [&](pqxx::work& txn, const commands::RecordedAsk& recorded) {
                            out.qna_id = recorded.qna_id;
                            out.remaining = recorded.remaining;
                            res = Response::json(200, render(out));
                            if (ctx.idempotency_key)
                              Idempotency::finish(txn, ctx.caller().idempotency_principal(), *ctx.idempotency_key, res,
                                                  ask::entry_stream_id(recorded.qna_id));
                          });
  return res;
}

Json body_of(const Outcome& o) {
  const bool none = o.answered.answer.no_answer;
  return {{"answer", none ? std::string() : o.answered.answer.answer},
          {"no_answer", none},
          {"citations", none ? Json::array() : o.answered.citations},
          {"qna_id", o.qna_id ? Json(*o.qna_id) : Json(nullptr)},
          {"model", kModel}};
}

}  // namespace

Response AskTranscriptionHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  return run_ask(ctx, id, parse_request(ctx, false), [](const Outcome& o) {
    Json body = body_of(o);
    body["remaining_per_transcript"] = nullable(o.remaining.per_transcript);
    body["remaining_per_day"] = nullable(o.remaining.per_day);
    return body;
  });
}

Response AskLibraryHandler::handle(RequestContext& ctx) {
  return run_ask(ctx, std::nullopt, parse_request(ctx, true), [](const Outcome& o) {
    Json body = body_of(o);
    body["remaining_today"] = nullable(o.remaining.per_day);
    body["saved"] = o.qna_id.has_value();
    return body;
  });
}

Response DeleteTranscriptionAskHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  const int64_t qna_id = qna_id_param(ctx);
  commands::redact_answer(ctx.services.store, ctx.db(), caller_of(ctx), qna_id, id);
  return Response::json(200, {{"id", qna_id}, {"redacted", true}});
}

Response DeleteLibraryAskHandler::handle(RequestContext& ctx) {
  const int64_t qna_id = qna_id_param(ctx);
  commands::redact_answer(ctx.services.store, ctx.db(), caller_of(ctx), qna_id, std::nullopt);
  return Response::json(200, {{"id", qna_id}, {"redacted", true}});
}

}  // namespace scribe::api
