// The wait of POST /v1/audio/transcriptions for its transcription, and the
// answer (answer.h). Like GET .../wait, the waiter is registered before the
// status is read, so a completion that commits in between is never missed.
#include <atomic>
#include <memory>

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
    arm();
  }

 private:
  Services& services() { return ctx_->services; }

  // Waits one slice for the transcription's outcome, unless it is there.
  void arm() {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(limits::kOpenAiWaitSliceSeconds);
    auto fired = std::make_shared<std::atomic<bool>>(false);
    auto self = shared_from_this();
    uint64_t waiter = services().waits->add(WaitHandler::key(id_), deadline, [self, fired, deadline](bool timed_out) {
      if (fired->exchange(true)) return;
      self->services().workers->post([self, timed_out, deadline] { self->check(timed_out, deadline); });
    });
    bool done = true;  // an error reading is reported by finish()'s own read
    try {
      auto lease = services().pool.acquire();
      pqxx::read_transaction txn(*lease);
      auto r = txn.exec_prepared(kState.name, id_, ctx_->caller().account_id);
      done = r.empty() || transcription::is_terminal(r[0][0].c_str());
    } catch (const std::exception& e) {
      log::error("openai wait read failed", {{"request_id", ctx_->request_id}, {"error", e.what()}});
    }
    if (done && services().waits->cancel(waiter) && !fired->exchange(true)) finish();
  }

  // A waiter fired (on a worker thread).
  void check(bool timed_out, Clock::time_point deadline) {
    State s;
    try {
      s = load(false);
    } catch (const std::exception& e) {
      log::error("openai wait read failed", {{"request_id", ctx_->request_id}, {"error", e.what()}});
      return fail(Error("internal_error", "could not read the transcription; retry the request"));
    }
    if (!s.found || transcription::is_terminal(s.status)) return finish();
    // The client went away: the transcription goes on, nothing waits for it.
    if (stream_ && stream_->gone()) return;
    // Fired before its deadline without an outcome: the server is stopping.
    if (timed_out && Clock::now() + std::chrono::seconds(1) < deadline)
      return fail(Error("internal_error",
                        "the server is shutting down; the transcription goes on: repeat the request and it is "
                        "answered by the same transcription",
                        {{"retry_after", 5}, {"transcription_id", id_}, {"reason", "shutting_down"}}, 503));
    if (stream_) stream_->push(kSseKeepAlive);
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
    if (with_rows && s.status == transcription::kCompleted) {
      TranscriptRows rows = load_segments_and_words(txn, id_);
      s.transcript.segments = std::move(rows.segments);
      s.transcript.words = std::move(rows.words);
    }
    return s;
  }

  void finish() {
    State s;
    try {
      s = load(true);
    } catch (const std::exception& e) {
      log::error("openai answer read failed", {{"request_id", ctx_->request_id}, {"error", e.what()}});
      return fail(Error("internal_error", "could not read the transcription; retry the request"));
    }
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
      for (auto& event : stream_events(s.transcript, form_)) stream_->push(std::move(event));
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
};

}  // namespace

void answer_when_done(std::shared_ptr<RequestContext> ctx, int64_t id, const TranscriptionForm& form,
                      Responder respond) {
  std::make_shared<Answer>(std::move(ctx), id, form, std::move(respond))->start();
}

}  // namespace scribe::api::openai
