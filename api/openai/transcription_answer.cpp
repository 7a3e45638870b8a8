// The wait of POST /v1/audio/transcriptions for its transcription, and the
// answer (answer.h). Like GET .../wait, the waiters are registered before the
// status (and a stream's draft) is read, so what commits in between is never
// missed.
#include <atomic>
#include <charconv>
#include <memory>
#include <mutex>
#include <vector>

#include "api/export_rows.h"
#include "api/handlers/handlers.h"
#include "api/openai/answer.h"
#include "api/openai/openai_errors.h"
#include "api/openai/response_formats.h"
#include "api/services.h"
#include "api/wait_registry.h"
#include "common/db.h"
#include "common/log.h"
#include "common/thread_pool.h"
#include "domain/limits.h"
#include "domain/transcription.h"
#include "projections/transcription_partials.h"

namespace scribe::api::openai {
namespace {

using Clock = WaitRegistry::Clock;

const db::Statement kState{"openai.transcription_state",
                           "select status, error::text, coalesce(duration_seconds, 0), "
                           "coalesce(detected_language, language), billed_seconds "
                           "from transcriptions where id = $1 and account_id = $2"};

struct State {
  bool found = false;
  std::string status;
  Json error;
  Transcript transcript;
  std::vector<draft::Piece> drafts;  // a stream's draft pieces not sent yet
};

class Answer : public std::enable_shared_from_this<Answer> {
 public:
  Answer(std::shared_ptr<RequestContext> ctx, int64_t id, TranscriptionForm form, Responder respond)
      : ctx_(std::move(ctx)), id_(id), form_(std::move(form)), respond_(std::move(respond)) {}

  void start() {
    if (form_.stream) {
      stream_ = std::make_shared<ChunkStream>();
      Response r;
      r.content_type = "text/event-stream";
      r.set_header("Cache-Control", "no-cache, no-transform");
      r.set_header("X-Accel-Buffering", "no");
      r.set_header("x-scribe-transcription-id", std::to_string(id_));
      r.stream = stream_;
      respond_(std::move(r));
    }
    std::lock_guard lock(mu_);
    arm();
  }

 private:
  Services& services() { return ctx_->services; }

  // Waits one slice for news of the transcription (its outcome; for a
  // stream, draft text too), unless its outcome is there. Holds mu_.
  void arm() {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(limits::kOpenAiWaitSliceSeconds);
    auto fired = std::make_shared<std::atomic<bool>>(false);
    auto self = shared_from_this();
    auto wake = [self, fired, deadline](bool timed_out) {
      if (fired->exchange(true)) return;
      self->services().workers->post([self, timed_out, deadline] { self->check(timed_out, deadline); });
    };
    waiters_ = {services().waits->add(WaitHandler::key(id_), deadline, wake)};
    if (stream_) waiters_.push_back(services().waits->add(draft_key(id_), deadline, wake));
    bool done = true;  // an error reading is reported by finish()'s own read
    try {
      State s = load(false);
      send_drafts(s);
      done = !s.found || transcription::is_terminal(s.status);
    } catch (const std::exception& e) {
      log::error("openai wait read failed", {{"request_id", ctx_->request_id}, {"error", e.what()}});
    }
    if (done && !fired->exchange(true)) {
      cancel_waiters();
      finish();
    }
  }

  void cancel_waiters() {
    for (uint64_t w : waiters_) services().waits->cancel(w);
    waiters_.clear();
  }

  // A waiter fired (on a worker thread).
  void check(bool timed_out, Clock::time_point deadline) {
    std::lock_guard lock(mu_);
    cancel_waiters();  // the other one
    State s;
    try {
      s = load(false);
    } catch (const std::exception& e) {
      log::error("openai wait read failed", {{"request_id", ctx_->request_id}, {"error", e.what()}});
      return fail(Error("internal_error", "could not read the transcription; retry the request"));
    }
    send_drafts(s);
    if (!s.found || transcription::is_terminal(s.status)) return finish();
    // The client went away: the transcription goes on, nothing waits for it.
    if (stream_ && stream_->gone()) return;
    // Fired before its deadline without an outcome: the server is stopping.
    if (timed_out && Clock::now() + std::chrono::seconds(1) < deadline)
      return fail(Error("internal_error",
                        "the server is shutting down; the transcription goes on: repeat the request and it is "
                        "answered by the same transcription",
                        {{"retry_after", 5}, {"transcription_id", id_}, {"reason", "shutting_down"}}, 503));
    if (stream_ && timed_out) stream_->push(kSseKeepAlive);
    arm();
  }

  State load(bool with_rows) {
    State s;
    auto lease = services().pool.acquire();
    pqxx::read_transaction txn(*lease);
    auto r = txn.exec_prepared(kState.name, id_, ctx_->caller().account_id);
    if (r.empty()) return s;
    s.found = true;
    s.status = r[0][0].c_str();
    s.error = r[0][1].is_null() ? Json(nullptr) : Json::parse(r[0][1].c_str(), nullptr, false);
    s.transcript.duration_seconds = r[0][2].as<double>();
    s.transcript.language = r[0][3].c_str();
    s.transcript.billed_seconds = r[0][4].as<int64_t>();
    // Read with the status: a stream sends every piece before the outcome.
    if (stream_) s.drafts = projections::partials::read_after(txn, id_, last_piece_);
    if (with_rows && s.status == transcription::kCompleted) {
      TranscriptRows rows = load_segments_and_words(txn, id_);
      s.transcript.segments = std::move(rows.segments);
      s.transcript.words = std::move(rows.words);
    }
    return s;
  }

  // A stream's new draft pieces go out as deltas, in order, each once.
  void send_drafts(const State& s) {
    if (!stream_ || s.drafts.empty()) return;
    for (auto& event : draft_events(s.drafts, started_)) stream_->push(std::move(event));
    last_piece_ = s.drafts.back().index;
  }

  void finish() {
    State s;
    try {
      s = load(true);
    } catch (const std::exception& e) {
      log::error("openai answer read failed", {{"request_id", ctx_->request_id}, {"error", e.what()}});
      return fail(Error("internal_error", "could not read the transcription; retry the request"));
    }
    send_drafts(s);
    if (!s.found) return fail(Error("not_found", "the transcription was deleted"));
    if (s.status == transcription::kFailed) {
      const std::string code = s.error.is_object() ? s.error.value("code", "internal_error") : "internal_error";
      const std::string message = s.error.is_object() ? s.error.value("message", "") : "";
      if (auto err = failed_transcription_error(code, message, id_)) return fail(*err);
    } else if (s.status != transcription::kCompleted) {
      return fail(Error("internal_error", "the transcription ended as " + s.status,
                        {{"transcription_id", id_}, {"reason", s.status}}));
    }
    if (stream_) {
      for (auto& event : final_events(s.transcript, started_)) stream_->push(std::move(event));
      stream_->close();
      return;
    }
    Rendered out = render(s.transcript, form_);
    Response res;
    res.status = 200;
    res.content_type = out.content_type;
    res.body = std::move(out.body);
    res.set_header("x-scribe-transcription-id", std::to_string(id_));
    respond_(std::move(res));
  }

  void fail(const Error& err) {
    Response res = services().render_error(ctx_->request_id, err);
    if (!stream_) return respond_(std::move(res));
    decorate_error(res);
    Json body = Json::parse(res.body, nullptr, false);
    stream_->push(sse_error(body.is_object() && body.contains("error") ? body["error"] : Json::object()));
    stream_->close();
  }

  std::shared_ptr<RequestContext> ctx_;
  int64_t id_;
  TranscriptionForm form_;
  Responder respond_;
  std::shared_ptr<ChunkStream> stream_;
  // One step at a time: a waiter may fire while arm() still reads.
  std::mutex mu_;
  std::vector<uint64_t> waiters_;
  int last_piece_ = -1;   // the last draft piece sent
  bool started_ = false;  // whether a delta with text went out
};

}  // namespace

void answer_when_done(std::shared_ptr<RequestContext> ctx, int64_t id, const TranscriptionForm& form,
                      Responder respond) {
  std::make_shared<Answer>(std::move(ctx), id, form, std::move(respond))->start();
}

std::string draft_key(int64_t transcription_id) { return "openai-draft:" + std::to_string(transcription_id); }

DraftWakeups::DraftWakeups(std::string database_url, WaitRegistry& waits)
    : thread_([this, url = std::move(database_url), &waits] {
        db::listen_payloads_until(url, projections::partials::kChannel, "draft text listener", stop_,
                                  [&waits](const std::string& payload) {
                                    int64_t id = 0;
                                    const char* end = payload.data() + payload.size();
                                    auto [at, ec] = std::from_chars(payload.data(), end, id);
                                    if (ec == std::errc() && at == end) waits.notify(draft_key(id));
                                  });
      }) {}

DraftWakeups::~DraftWakeups() { stop(); }

void DraftWakeups::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace scribe::api::openai
