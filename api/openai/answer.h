#pragma once
#include <cstdint>
#include <memory>

#include "api/openai/transcription_form.h"
#include "api/router.h"

namespace scribe::api::openai {

// Answers POST /v1/audio/transcriptions once transcription `id` is done, in
// the form's format; with stream=true the event stream starts at once and
// the transcript follows when it is done. The wait holds no thread and no
// database connection (WaitRegistry, as GET .../wait): the completion's event
// wakes it, and every limits::kOpenAiWaitSliceSeconds it checks anyway (a
// stream then sends a keep-alive comment). When the server shuts down first,
// the answer is 503 (the SDK retries, and the retry is answered by the same
// transcription); a stream ends with an error event.
void answer_when_done(std::shared_ptr<RequestContext> ctx, int64_t id, const TranscriptionForm& form,
                      Responder respond);

}  // namespace scribe::api::openai
