#pragma once
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "common/http_client.h"
#include "common/json.h"
#include "domain/enrichment_artifact.h"
#include "domain/transcript_artifact.h"

// An optional second pass over the extractive artifact (enricher.h): an
// OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp server, Ollama…),
// configured by URL, writes the titles and summaries of sections, chapters
// and acts and the answers of the system Q&A. Everything that places or
// counts things (times, boundaries, how many of each, citations, posting
// chapters and their verbatim quotes) stays extractive, so a reader sees the
// same structure whichever method wrote the words. Nothing here runs unless
// the operator configures a URL: the default enrichment needs no network.
// The pure parts (URL, request body, reply parsing) are free functions so
// that they can be tested without a server.
namespace scribe::enrichment {

// What a reply may hold, in characters (code points). A reply over a limit is
// refused whole rather than cut: a cut summary reads worse than the
// extractive one.
inline constexpr std::size_t kChatTitleMaxChars = 80;
inline constexpr std::size_t kChatSummaryMaxChars = 600;
inline constexpr std::size_t kChatAnswerMaxChars = 600;
// Each item's transcript excerpt in the request, in bytes. A longer part is
// shown as its beginning, middle and end joined by " … ", so that the model
// sees the whole arc of a long section at a bounded cost.
inline constexpr std::size_t kChatExcerptBytes = 800;

struct ChatOptions {
  // http://host:port, ".../v1" or the full ".../chat/completions" URL.
  std::string base_url;
  std::string model;                   // sent as is; also names the method ("chat:<model>")
  std::optional<std::string> api_key;  // sent as "Authorization: Bearer …" when set
  std::chrono::seconds timeout{60};    // the whole request
  // Cost bound: an artifact with more sections is not sent at all (the
  // request grows with the sections, and so does the reply, which must fit
  // the 64 KiB HttpClient::post keeps).
  int max_sections = 60;
};

// The chat endpoint for a base URL: "http://h:8000" and "http://h:8000/v1"
// give "http://h:8000/v1/chat/completions"; a URL that already ends in
// "/chat/completions" is used as it is. Trailing slashes and blanks are
// dropped.
std::string chat_completions_url(const std::string& base_url);

// The chat-completion request for `a`: model, temperature 0, response_format
// json_object, and two messages. The system message says what to write and
// asks for one JSON object {"sections":[{"title","summary"}…],
// "chapters":[{"title","summary"}…], "acts":[{"title","summary"}…],
// "answers":[{"answer"}…]} with exactly as many items as `a` has of each, in
// order. The user message is a JSON object listing the items, each with its
// transcript excerpt (at most kChatExcerptBytes) and, for answers, the
// question and the extractive answer. Throws std::invalid_argument when
// o.model is empty or `a` has more than o.max_sections sections.
Json build_chat_request(const EnrichmentArtifact& a, const transcript::TranscriptArtifact& t, const ChatOptions& o);

// Applies a chat-completion response body to `a`: choices[0].message.content
// must be a JSON object (a ```json fence around it is tolerated) with
// exactly a's counts, non-blank titles of at most kChatTitleMaxChars,
// non-blank summaries of at most kChatSummaryMaxChars and non-blank answers
// of at most kChatAnswerMaxChars (runs of blanks and line breaks become one
// space; other control characters are refused). A list whose count in `a` is
// zero may be absent. Each citation's title follows its section's new title
// (it names the section; the cited moment is unchanged). All or nothing:
// throws std::runtime_error naming what is wrong and leaves `a` untouched.
// a.method is not changed (refine_with_chat sets it).
void apply_chat_reply(EnrichmentArtifact& a, const std::string& response_body);

// build_chat_request, POST to chat_completions_url(o.base_url) through
// `http` (with "Authorization: Bearer <api_key>" when set), then
// apply_chat_reply, and a.method = "chat:<model>". Throws (std::runtime_error
// or std::invalid_argument) on any failure: refused or unreachable URL,
// timeout, a non-2xx status, a reply of 64 KiB or more (cut off by the
// client), or a reply that does not fit; `a` is then unchanged and the caller
// keeps the extractive artifact. An artifact without sections is left as it
// is, with no request. `http`'s UrlPolicy decides which addresses may be
// reached (an operator's model server is usually private: the caller allows
// private addresses for this client, as for the OpenAI ASR engine).
void refine_with_chat(EnrichmentArtifact& a, const transcript::TranscriptArtifact& t, const ChatOptions& o,
                      const HttpClient& http);

}  // namespace scribe::enrichment
