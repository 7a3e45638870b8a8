#include "enrichment/chat_adapter.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text.h"
#include "enrichment/text.h"

namespace scribe::enrichment {
namespace {

// HttpClient::post keeps at most this much of a response body; a body this
// long was cut off and would fail to parse with a less helpful message.
constexpr std::size_t kPostBodyCap = 64 * 1024;

constexpr std::string_view kGap = " \xE2\x80\xA6 ";  // " … " between the pieces of a long excerpt

// Serialized with invalid UTF-8 replaced rather than thrown on: transcript
// text is UTF-8, but a request must never fail for one bad byte.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// A short, single-line excerpt of a body for an exception message.
std::string excerpt_for_message(std::string_view body) {
  std::string out(body.substr(0, 200));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (body.size() > out.size()) out += "\xE2\x80\xA6";
  return out;
}

// The text of segments [first, end), trimmed and joined by single spaces.
std::string segment_text(const transcript::TranscriptArtifact& t, std::size_t first, std::size_t end) {
  std::string out;
  for (std::size_t i = first; i < end && i < t.segments.size(); ++i) {
    const std::string_view s = trim(t.segments[i].text);
    if (s.empty()) continue;
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

// The text of the segments whose middle lies in [start, end]: chapters and
// acts carry only times, and their covering times may reach a little into
// the pauses around their first and last segments.
std::string text_between(const transcript::TranscriptArtifact& t, double start, double end) {
  std::string out;
  for (const auto& seg : t.segments) {
    const double middle = (seg.start + seg.end) / 2;
    if (middle < start || middle > end) continue;
    const std::string_view s = trim(seg.text);
    if (s.empty()) continue;
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

std::string section_text(const transcript::TranscriptArtifact& t, const Section& s) {
  const bool indices_fit = s.first_segment_index >= 0 && s.segment_count > 0 &&
                           static_cast<std::size_t>(s.first_segment_index) + s.segment_count <= t.segments.size();
  if (!indices_fit) return text_between(t, s.start, s.end);  // the artifact and transcript disagree: go by time
  const auto first = static_cast<std::size_t>(s.first_segment_index);
  return segment_text(t, first, first + static_cast<std::size_t>(s.segment_count));
}

// Where the first whole word at or after `pos` begins.
std::size_t word_start(std::string_view text, std::size_t pos) {
  if (pos == 0 || text[pos - 1] == ' ') return pos;
  const std::size_t blank = text.find(' ', pos);
  return blank == std::string_view::npos ? text.size() : blank + 1;
}

// `text` when it fits `budget` bytes; otherwise its beginning, middle and end,
// each cut at words, joined by " … ", in at most `budget` bytes. Three
// windows rather than the head alone: a section's title should come from
// all of it, and talk often wanders before it reaches its point.
std::string bounded_excerpt(std::string_view text, std::size_t budget) {
  text = trim(text);
  if (text.size() <= budget) return std::string(text);
  const std::size_t window = (budget - 2 * kGap.size()) / 3;
  const std::size_t starts[3] = {0, (text.size() - window) / 2, text.size() - window};
  std::string out;
  for (std::size_t from : starts) {
    from = word_start(text, from);
    const std::string piece = cut_at_word(text.substr(from), window);
    if (piece.empty()) continue;
    if (!out.empty()) out += kGap;
    out += piece;
  }
  return out;
}

// The section a moment falls in: the last one starting at or before it
// (sections tile the recording in time order).
const Section* section_at(const std::vector<Section>& sections, double moment) {
  const Section* found = nullptr;
  for (const Section& s : sections) {
    if (s.start > moment) break;
    found = &s;
  }
  return found;
}

std::string system_message(const EnrichmentArtifact& a) {
  const auto count = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string m =
      "You title and summarize the parts of a recording's transcript and answer listeners' questions about it. "
      "The user message is a JSON object. \"sections\" are the recording's topic sections in time order, "
      "\"chapters\" group neighbouring sections, \"acts\" group chapters into the larger movements of the whole, and "
      "\"questions\" are questions a listener would ask. Each item comes with an excerpt of its transcript "
      "(\" \xE2\x80\xA6 \" marks text left out); a question also comes with the transcript sentences that answer it. "
      "Use only what the excerpts say.\n\n"
      "Reply with one JSON object and nothing else: "
      "{\"sections\":[{\"title\":\"...\",\"summary\":\"...\"}],\"chapters\":[{\"title\":\"...\",\"summary\":\"...\"}],"
      "\"acts\":[{\"title\":\"...\",\"summary\":\"...\"}],\"answers\":[{\"answer\":\"...\"}]} with exactly ";
  m += count(a.sections.size(), "section", "sections") + ", ";
  m += count(a.chapters.size(), "chapter", "chapters") + ", ";
  m += count(a.acts.size(), "act", "acts") + " and ";
  m += count(a.qna.size(), "answer", "answers");
  m += ", one for each item and in the order given.\n\n"
       "A title is a headline of 2 to 8 words, at most 80 characters, without quotation marks. "
       "A summary says in one to three sentences what the part is about, in at most 300 characters "
       "(an act's in at most 500). An answer answers its question in one to three sentences of at most 300 "
       "characters. Write in the language of the excerpts.";
  return m;
}

// The user message: a JSON object whose lists come in reading order
// (sections before the chapters and acts that group them), which an
// alphabetically ordered Json object would not keep.
std::string user_message(const EnrichmentArtifact& a, const transcript::TranscriptArtifact& t) {
  Json sections = Json::array();
  for (std::size_t i = 0; i < a.sections.size(); ++i) {
    sections.push_back({{"n", i + 1}, {"excerpt", bounded_excerpt(section_text(t, a.sections[i]), kChatExcerptBytes)}});
  }
  const auto spans = [&](const std::vector<Chapter>& list) {
    Json out = Json::array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string text = text_between(t, list[i].start, list[i].end);
      out.push_back({{"n", i + 1}, {"excerpt", bounded_excerpt(text, kChatExcerptBytes)}});
    }
    return out;
  };
  Json questions = Json::array();
  for (std::size_t i = 0; i < a.qna.size(); ++i) {
    const QnaEntry& q = a.qna[i];
    const Section* s = q.citations.empty() ? nullptr : section_at(a.sections, q.citations.front().start);
    questions.push_back({{"n", i + 1},
                         {"question", q.question},
                         {"answering_sentences", bounded_excerpt(q.answer, kChatExcerptBytes)},
                         {"excerpt", s ? bounded_excerpt(section_text(t, *s), kChatExcerptBytes) : std::string()}});
  }
  std::string out = "{";
  if (!t.language.empty()) out += "\"language\":" + dump(t.language) + ",";
  out += "\"sections\":" + dump(sections);
  out += ",\"chapters\":" + dump(spans(a.chapters));
  out += ",\"acts\":" + dump(spans(a.acts));
  out += ",\"questions\":" + dump(questions);
  out += "}";
  return out;
}

// A reply string as stored: blanks and line breaks folded into single spaces
// (a summary is one paragraph), then checked against `max_chars`.
std::string clean_text(const Json& item, const char* key, std::size_t max_chars, const std::string& where) {
  const auto it = item.find(key);
  if (it == item.end() || !it->is_string()) {
    throw std::runtime_error("chat reply: " + where + " has no \"" + key + "\" string");
  }
  const std::string& raw = it->get_ref<const std::string&>();
  std::string out;
  bool blank = false;
  for (char c : raw) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out += ' ';
    blank = false;
    out += c;
  }
  if (out.empty()) throw std::runtime_error("chat reply: " + where + " has an empty " + key);
  if (!is_valid_utf8(out) || has_control_chars(out)) {
    throw std::runtime_error("chat reply: " + where + "'s " + key + " holds control characters or invalid UTF-8");
  }
  const std::size_t chars = utf8_length(out);
  if (chars > max_chars) {
    throw std::runtime_error("chat reply: " + where + "'s " + key + " has " + std::to_string(chars) +
                             " characters, more than " + std::to_string(max_chars));
  }
  return out;
}

// The list `key` of the reply, which must have exactly `count` items. An
// absent (or null) list stands for an empty one: a model may leave out a
// list it was asked for none of.
const Json& reply_list(const Json& reply, const char* key, std::size_t count) {
  static const Json kEmpty = Json::array();
  const auto it = reply.find(key);
  if (it == reply.end() || it->is_null()) {
    if (count == 0) return kEmpty;
    throw std::runtime_error(std::string("chat reply has no \"") + key + "\" list");
  }
  if (!it->is_array()) throw std::runtime_error(std::string("chat reply: \"") + key + "\" is not a list");
  if (it->size() != count) {
    throw std::runtime_error(std::string("chat reply has ") + std::to_string(it->size()) + " " + key + ", expected " +
                             std::to_string(count));
  }
  return *it;
}

struct Label {
  std::string title;
  std::string summary;
};

std::vector<Label> labels(const Json& reply, const char* key, std::size_t count) {
  std::vector<Label> out;
  const Json& list = reply_list(reply, key, count);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!list[i].is_object()) throw std::runtime_error("chat reply: " + where + " is not an object");
    out.push_back({clean_text(list[i], "title", kChatTitleMaxChars, where),
                   clean_text(list[i], "summary", kChatSummaryMaxChars, where)});
  }
  return out;
}

std::vector<std::string> answers(const Json& reply, std::size_t count) {
  std::vector<std::string> out;
  const Json& list = reply_list(reply, "answers", count);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = "answers[" + std::to_string(i) + "]";
    // A bare string is what a model most often writes for a list of answers;
    // it means the same, so it is taken too.
    if (list[i].is_string()) {
      out.push_back(clean_text(Json{{"answer", list[i]}}, "answer", kChatAnswerMaxChars, where));
    } else if (list[i].is_object()) {
      out.push_back(clean_text(list[i], "answer", kChatAnswerMaxChars, where));
    } else {
      throw std::runtime_error("chat reply: " + where + " is neither an object nor a string");
    }
  }
  return out;
}

// The message content without a Markdown code fence around it: servers that
// ignore response_format, and some models even under it, wrap the object in
// ```json … ```.
std::string_view without_fence(std::string_view content) {
  content = trim(content);
  if (content.rfind("```", 0) != 0) return content;
  const std::size_t line_end = content.find('\n');
  if (line_end == std::string_view::npos) return content;
  content.remove_prefix(line_end + 1);
  content = trim(content);
  if (content.size() >= 3 && content.substr(content.size() - 3) == "```") content.remove_suffix(3);
  return content;
}

}  // namespace

std::string chat_completions_url(const std::string& base_url) {
  std::string url(trim(base_url));
  while (!url.empty() && url.back() == '/') url.pop_back();
  const auto ends_with = [&](std::string_view suffix) {
    return url.size() >= suffix.size() && url.compare(url.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with("/chat/completions")) return url;
  if (ends_with("/v1")) return url + "/chat/completions";
  return url + "/v1/chat/completions";
}

Json build_chat_request(const EnrichmentArtifact& a, const transcript::TranscriptArtifact& t, const ChatOptions& o) {
  if (o.model.empty()) throw std::invalid_argument("chat enrichment needs a model name");
  if (a.sections.size() > static_cast<std::size_t>(std::max(0, o.max_sections))) {
    throw std::invalid_argument("transcript has " + std::to_string(a.sections.size()) +
                                " sections, more than the chat limit of " + std::to_string(o.max_sections));
  }
  return Json{{"model", o.model},
              {"temperature", 0},
              {"response_format", {{"type", "json_object"}}},
              {"messages", Json::array({{{"role", "system"}, {"content", system_message(a)}},
                                        {{"role", "user"}, {"content", user_message(a, t)}}})}};
}

void apply_chat_reply(EnrichmentArtifact& a, const std::string& response_body) {
  const Json body = Json::parse(response_body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    throw std::runtime_error("chat response is not a JSON object: " + excerpt_for_message(response_body));
  }
  const auto choices = body.find("choices");
  if (choices == body.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
    throw std::runtime_error("chat response has no choices: " + excerpt_for_message(response_body));
  }
  const Json& choice = (*choices)[0];
  // A reply cut at the token limit is usually still parseable up to a point
  // but never whole; say so rather than report broken JSON.
  if (const auto reason = choice.find("finish_reason"); reason != choice.end() && *reason == "length") {
    throw std::runtime_error("chat reply was cut off at the model's token limit");
  }
  const auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) throw std::runtime_error("chat response has no message");
  const auto content = message->find("content");
  if (content == message->end() || !content->is_string()) {
    throw std::runtime_error("chat response message has no text content");
  }
  const std::string_view text = without_fence(content->get_ref<const std::string&>());
  const Json reply = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object()) throw std::runtime_error("chat reply is not a JSON object: " + excerpt_for_message(text));

  // Everything is read and checked before anything is written.
  const std::vector<Label> sections = labels(reply, "sections", a.sections.size());
  const std::vector<Label> chapters = labels(reply, "chapters", a.chapters.size());
  const std::vector<Label> acts = labels(reply, "acts", a.acts.size());
  const std::vector<std::string> new_answers = answers(reply, a.qna.size());

  // A citation names the section it cites by title, so it follows that
  // section's new title. Found by time and old title before they change.
  const auto retitle = [&](Citation& c) {
    const Section* s = section_at(a.sections, c.start);
    if (!s || s->title != c.title) return;
    c.title = sections[static_cast<std::size_t>(s - a.sections.data())].title;
  };
  std::vector<QnaEntry> qna = a.qna;
  for (std::size_t i = 0; i < qna.size(); ++i) {
    qna[i].answer = new_answers[i];
    std::for_each(qna[i].citations.begin(), qna[i].citations.end(), retitle);
    std::for_each(qna[i].answer_citations.begin(), qna[i].answer_citations.end(), retitle);
  }

  // Nothing below throws.
  a.qna = std::move(qna);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    a.sections[i].title = sections[i].title;
    a.sections[i].summary = sections[i].summary;
  }
  for (std::size_t i = 0; i < chapters.size(); ++i) {
    a.chapters[i].title = chapters[i].title;
    a.chapters[i].summary = chapters[i].summary;
  }
  for (std::size_t i = 0; i < acts.size(); ++i) {
    a.acts[i].title = acts[i].title;
    a.acts[i].summary = acts[i].summary;
  }
}

void refine_with_chat(EnrichmentArtifact& a, const transcript::TranscriptArtifact& t, const ChatOptions& o,
                      const HttpClient& http) {
  if (a.sections.empty()) return;  // nothing to write, so nothing to ask
  const std::string url = chat_completions_url(o.base_url);
  const std::string body = dump(build_chat_request(a, t, o));
  std::vector<std::pair<std::string, std::string>> headers{{"Content-Type", "application/json"},
                                                           {"Accept", "application/json"}};
  if (o.api_key) headers.emplace_back("Authorization", "Bearer " + *o.api_key);
  HttpResponse response;
  try {
    response = http.post(url, headers, body, o.timeout);
  } catch (const HttpError& e) {
    throw std::runtime_error(std::string("chat request failed: ") + e.what());
  }
  if (response.status < 200 || response.status >= 300) {
    throw std::runtime_error("chat server answered " + std::to_string(response.status) + ": " +
                             excerpt_for_message(response.body));
  }
  if (response.body.size() >= kPostBodyCap) {
    throw std::runtime_error("chat response exceeds 64 KiB (" + std::to_string(a.sections.size()) +
                             " sections); lower the section limit");
  }
  apply_chat_reply(a, response.body);
  a.method = "chat:" + o.model;
}

}  // namespace scribe::enrichment
