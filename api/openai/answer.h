#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "api/openai/transcription_form.h"
#include "api/router.h"
#include "api/wait_registry.h"

namespace scribe::api::openai {

// Answers POST /v1/audio/transcriptions once transcription `id` is done, in
// the form's format. With stream=true the event stream starts at once: the
// draft text of each piece of speech as a delta as soon as the worker
// records it (projections/transcription_partials.h), then on completion the
// segments and the final text (response_formats.h). The wait holds no thread
// and no database connection (WaitRegistry, as GET .../wait): the
// completion's event, and for a stream each draft's notification, wakes it,
// and every limits::kOpenAiWaitSliceSeconds it looks anyway (a stream then
// sends a keep-alive comment). When the server shuts down first, the answer
// is 503 (the SDK retries, and the retry is answered by the same
// transcription); a stream ends with an error event.
void answer_when_done(std::shared_ptr<RequestContext> ctx, int64_t id, const TranscriptionForm& form,
                      Responder respond);

// The WaitRegistry key that new draft text of transcription `id` notifies.
std::string draft_key(int64_t transcription_id);

// LISTENs for the draft notifications of every worker, in this process or
// another (projections::partials::kChannel, on a connection of its own), and
// notifies draft_key() of the transcription each names. Stops when destroyed.
class DraftWakeups {
 public:
  DraftWakeups(std::string database_url, WaitRegistry& waits);
  ~DraftWakeups();
  DraftWakeups(const DraftWakeups&) = delete;
  DraftWakeups& operator=(const DraftWakeups&) = delete;
  void stop();

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace scribe::api::openai
