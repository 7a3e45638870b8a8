#include "enrichment/chat_adapter.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/text.h"

namespace scribe::enrichment {
namespace {

transcript::ArtifactSegment segment(int64_t id, double start, double end, std::string text) {
  transcript::ArtifactSegment s;
  s.id = id;
  s.start = start;
  s.end = end;
  s.text = std::move(text);
  return s;
}

// Six segments in three topics, and the artifact the extractive pass might
// have made of them: 3 sections, 2 chapters, 1 act, 2 questions, and a
// quoted posting item.
transcript::TranscriptArtifact small_transcript() {
  transcript::TranscriptArtifact t;
  t.duration_seconds = 60;
  t.language = "en";
  t.segments = {segment(101, 0, 9, "The sauce simmers with garlic."),
                segment(102, 10, 19, "Basil goes in last."),
                segment(103, 20, 29, "The telescope shows a distant galaxy."),
                segment(104, 30, 39, "Its spectrum is shifted to red."),
                segment(105, 40, 49, "The striker scores late."),
                segment(106, 50, 59, "The referee allows the goal.")};
  return t;
}

EnrichmentArtifact small_artifact() {
  EnrichmentArtifact a;
  a.method = "extractive-v1";
  a.sections = {{0, 2, 0, 19, "Garlic Sauce", "The sauce simmers with garlic.", 101},
                {2, 2, 20, 39, "Distant Galaxy", "The telescope shows a distant galaxy.", 103},
                {4, 2, 40, 59, "Striker Scores", "The striker scores late.", 105}};
  a.chapters = {{0, 19, "Garlic Sauce", "The sauce simmers with garlic."},
                {20, 59, "Galaxy and Striker", "The telescope shows a distant galaxy."}};
  a.acts = {{0, 59, "Sauce, Galaxy", "The sauce simmers with garlic. The striker scores late."}};
  a.qna = {
      {"What is said about garlic?", "The sauce simmers with garlic.", {{"Garlic Sauce", 0}}, {{"Garlic Sauce", 0}}},
      {"What does the telescope show?",
       "The telescope shows a distant galaxy.",
       {{"Distant Galaxy", 20}},
       {{"Distant Galaxy", 20}}}};
  a.posting.standard = {{0, "Garlic Sauce", std::nullopt}, {20, "Galaxy and Striker", std::nullopt}};
  a.posting.quoted_sections = {{40, "Late Goal", "The striker scores late."}};
  return a;
}

Json good_content() {
  return Json{
      {"sections",
       {{{"title", "Making the Sauce"}, {"summary", "A garlic sauce is cooked and finished with basil."}},
        {{"title", "Looking at a Galaxy"}, {"summary", "A telescope shows a red-shifted galaxy."}},
        {{"title", "A Late Goal"}, {"summary", "The striker scores and the goal stands."}}}},
      {"chapters",
       {{{"title", "In the Kitchen"}, {"summary", "Cooking a sauce."}},
        {{"title", "Stars and Sport"}, {"summary", "A galaxy, then a football match."}}}},
      {"acts", {{{"title", "Three Scenes"}, {"summary", "Cooking, astronomy and football."}}}},
      {"answers", {{{"answer", "It flavours the simmering sauce."}}, {{"answer", "A distant, red-shifted galaxy."}}}}};
}

// A chat-completion response carrying `content` as the message text.
std::string completion(const std::string& content, const std::string& finish_reason = "stop") {
  Json choice = {
      {"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", finish_reason}};
  return Json{{"id", "chatcmpl-1"}, {"object", "chat.completion"}, {"model", "m"}, {"choices", {choice}}}.dump();
}

Json user_json(const Json& request) { return Json::parse(request["messages"][1]["content"].get<std::string>()); }

TEST(ChatAdapter, CompletionsUrlFromBaseUrl) {
  EXPECT_EQ(chat_completions_url("http://h:8000"), "http://h:8000/v1/chat/completions");
  EXPECT_EQ(chat_completions_url(" http://h:8000/ "), "http://h:8000/v1/chat/completions");
  EXPECT_EQ(chat_completions_url("http://h:8000/v1/"), "http://h:8000/v1/chat/completions");
  EXPECT_EQ(chat_completions_url("https://api.example.com/openai/v1/chat/completions"),
            "https://api.example.com/openai/v1/chat/completions");
  EXPECT_EQ(chat_completions_url("http://h/llm"), "http://h/llm/v1/chat/completions");
}

TEST(ChatAdapter, RequestNamesModelCountsAndExcerpts) {
  ChatOptions o;
  o.model = "qwen2.5-7b";
  const Json r = build_chat_request(small_artifact(), small_transcript(), o);
  EXPECT_EQ(r["model"], "qwen2.5-7b");
  EXPECT_EQ(r["temperature"], 0);
  EXPECT_EQ(r["response_format"], (Json{{"type", "json_object"}}));
  ASSERT_EQ(r["messages"].size(), 2u);
  EXPECT_EQ(r["messages"][0]["role"], "system");
  EXPECT_EQ(r["messages"][1]["role"], "user");
  const std::string system = r["messages"][0]["content"];
  EXPECT_NE(system.find("exactly 3 sections, 2 chapters, 1 act and 2 answers"), std::string::npos) << system;
  EXPECT_NE(system.find("\"answers\":[{\"answer\""), std::string::npos);

  const Json u = user_json(r);
  EXPECT_EQ(u["language"], "en");
  ASSERT_EQ(u["sections"].size(), 3u);
  ASSERT_EQ(u["chapters"].size(), 2u);
  ASSERT_EQ(u["acts"].size(), 1u);
  ASSERT_EQ(u["questions"].size(), 2u);
  EXPECT_EQ(u["sections"][1]["excerpt"], "The telescope shows a distant galaxy. Its spectrum is shifted to red.");
  EXPECT_EQ(u["chapters"][1]["excerpt"],
            "The telescope shows a distant galaxy. Its spectrum is shifted to red. The striker scores late. "
            "The referee allows the goal.");
  EXPECT_EQ(u["questions"][1]["question"], "What does the telescope show?");
  EXPECT_EQ(u["questions"][1]["answering_sentences"], "The telescope shows a distant galaxy.");
  EXPECT_EQ(u["questions"][1]["excerpt"], u["sections"][1]["excerpt"]);  // the cited section
  // Reading order is kept: sections come before what groups them.
  const std::string text = r["messages"][1]["content"];
  EXPECT_LT(text.find("\"sections\""), text.find("\"chapters\""));
  EXPECT_LT(text.find("\"chapters\""), text.find("\"acts\""));
}

// A long section is shown as its beginning, middle and end, in whole words
// and whole UTF-8 characters, within the bound.
TEST(ChatAdapter, ExcerptsAreBounded) {
  transcript::TranscriptArtifact t;
  t.language = "fr";
  for (int i = 0; i < 400; ++i) {
    t.segments.push_back(segment(i + 1, i * 5.0, i * 5.0 + 4,
                                 "Phrase num\xC3\xA9ro " + std::to_string(i) + " du caf\xC3\xA9 tr\xC3\xA8s long."));
  }
  EnrichmentArtifact a;
  a.sections = {{0, 400, 0, 1999, "T", "S", 1}};
  a.chapters = {{0, 1999, "T", "S"}};
  a.acts = {{0, 1999, "T", "S"}};
  a.qna = {{"Q?", "A.", {{"T", 0}}, {{"T", 0}}}};
  ChatOptions o;
  o.model = "m";
  const Json u = user_json(build_chat_request(a, t, o));
  for (const Json* item : {&u["sections"][0], &u["chapters"][0], &u["acts"][0], &u["questions"][0]}) {
    const std::string excerpt = (*item)["excerpt"];
    EXPECT_LE(excerpt.size(), kChatExcerptBytes);
    EXPECT_GT(excerpt.size(), kChatExcerptBytes / 2);
    EXPECT_TRUE(is_valid_utf8(excerpt));
    EXPECT_EQ(excerpt.rfind("Phrase num\xC3\xA9ro 0 du", 0), 0u) << excerpt;
    EXPECT_NE(excerpt.find("num\xC3\xA9ro 199 "), std::string::npos) << excerpt;  // the middle
    EXPECT_NE(excerpt.find("399 du caf\xC3\xA9 tr\xC3\xA8s long"), std::string::npos) << excerpt;
    EXPECT_NE(excerpt.find(" \xE2\x80\xA6 "), std::string::npos);
  }
}

TEST(ChatAdapter, RequestRefusesTooManySectionsOrNoModel) {
  ChatOptions o;
  o.model = "m";
  o.max_sections = 2;
  EXPECT_THROW(build_chat_request(small_artifact(), small_transcript(), o), std::invalid_argument);
  o.max_sections = 3;
  EXPECT_NO_THROW(build_chat_request(small_artifact(), small_transcript(), o));
  o.model.clear();
  EXPECT_THROW(build_chat_request(small_artifact(), small_transcript(), o), std::invalid_argument);
}

TEST(ChatAdapter, GoodReplyRewritesWordsOnly) {
  EnrichmentArtifact a = small_artifact();
  Json content = good_content();
  content["sections"][0]["summary"] = "  A garlic sauce is cooked\n\nand finished   with basil.  ";
  apply_chat_reply(a, completion(content.dump()));
  const EnrichmentArtifact before = small_artifact();

  EXPECT_EQ(a.method, "extractive-v1");  // refine_with_chat names the method
  ASSERT_EQ(a.sections.size(), 3u);
  EXPECT_EQ(a.sections[0].title, "Making the Sauce");
  EXPECT_EQ(a.sections[0].summary, "A garlic sauce is cooked and finished with basil.");
  EXPECT_EQ(a.sections[2].title, "A Late Goal");
  EXPECT_EQ(a.chapters[1].title, "Stars and Sport");
  EXPECT_EQ(a.chapters[1].summary, "A galaxy, then a football match.");
  EXPECT_EQ(a.acts[0].title, "Three Scenes");
  EXPECT_EQ(a.qna[1].answer, "A distant, red-shifted galaxy.");
  for (std::size_t i = 0; i < a.sections.size(); ++i) {
    EXPECT_EQ(a.sections[i].first_segment_index, before.sections[i].first_segment_index);
    EXPECT_EQ(a.sections[i].segment_count, before.sections[i].segment_count);
    EXPECT_EQ(a.sections[i].start, before.sections[i].start);
    EXPECT_EQ(a.sections[i].end, before.sections[i].end);
    EXPECT_EQ(a.sections[i].first_segment_id, before.sections[i].first_segment_id);
  }
  EXPECT_EQ(a.chapters[1].start, 20);
  EXPECT_EQ(a.acts[0].end, 59);
  EXPECT_EQ(a.qna[0].question, before.qna[0].question);
  // Citations keep their moments and follow their section's new title.
  EXPECT_EQ(a.qna[0].citations[0].title, "Making the Sauce");
  EXPECT_EQ(a.qna[1].answer_citations[0].title, "Looking at a Galaxy");
  EXPECT_EQ(a.qna[1].answer_citations[0].start, 20);
  // The posting cache, quotes included, is not touched.
  EXPECT_EQ(to_json(a.posting), to_json(before.posting));
}

TEST(ChatAdapter, FencedContentAndBareAnswersAreAccepted) {
  EnrichmentArtifact a = small_artifact();
  Json content = good_content();
  content["answers"] = {"It flavours the sauce.", "A galaxy."};
  std::string title80;
  for (int i = 0; i < 80; ++i) title80 += "\xC3\xA9";  // 80 characters in 160 bytes: within the limit
  content["sections"][1]["title"] = title80;
  apply_chat_reply(a, completion("```json\n" + content.dump(2) + "\n```"));
  EXPECT_EQ(a.qna[0].answer, "It flavours the sauce.");
  EXPECT_EQ(a.sections[1].title, title80);
}

TEST(ChatAdapter, ListsOfNothingMayBeLeftOut) {
  EnrichmentArtifact a = small_artifact();
  a.qna.clear();
  Json content = good_content();
  content.erase("answers");
  apply_chat_reply(a, completion(content.dump()));
  EXPECT_EQ(a.sections[0].title, "Making the Sauce");
}

// Every refusal throws std::runtime_error and leaves the artifact as it was,
// even when the fault is in the last list read.
TEST(ChatAdapter, BadRepliesChangeNothing) {
  const auto bad = [](const std::string& body, const std::string& expected_message) {
    EnrichmentArtifact a = small_artifact();
    try {
      apply_chat_reply(a, body);
      ADD_FAILURE() << "accepted: " << body.substr(0, 200);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(expected_message), std::string::npos) << e.what();
    }
    EXPECT_EQ(to_json(a), to_json(small_artifact()));
  };
  const auto with = [](const char* list, std::size_t i, const char* key, const Json& value) {
    Json c = good_content();
    c[list][i][key] = value;
    return completion(c.dump());
  };
  Json c = good_content();
  c["sections"].erase(2);
  bad(completion(c.dump()), "has 2 sections, expected 3");
  c = good_content();
  c["answers"].push_back({{"answer", "One too many."}});
  bad(completion(c.dump()), "has 3 answers, expected 2");
  c = good_content();
  c.erase("chapters");
  bad(completion(c.dump()), "no \"chapters\" list");
  bad(completion("Sure! Here are the titles: Making the Sauce, ..."), "not a JSON object");
  bad(completion("[1, 2]"), "not a JSON object");
  bad(R"({"id":"x","object":"chat.completion"})", "no choices");
  bad(R"({"choices":[]})", "no choices");
  bad(R"({"choices":[{"message":{"role":"assistant","content":null}}]})", "no text content");
  bad("<html>Bad Gateway</html>", "not a JSON object");
  bad(completion(good_content().dump(), "length"), "cut off");
  bad(with("sections", 1, "title", std::string(81, 'x')), "81 characters, more than 80");
  bad(with("acts", 0, "summary", std::string(601, 'x')), "601 characters, more than 600");
  bad(with("answers", 1, "answer", std::string(601, 'x')), "more than 600");
  bad(with("chapters", 0, "title", " \n "), "empty title");
  bad(with("chapters", 0, "title", 7), "no \"title\" string");
  bad(with("sections", 2, "summary", "Tab\x01stop"), "control characters");
}

// A stand-in chat server on 127.0.0.1 for one request: a thread that
// accepts one connection, reads the head and the Content-Length body, keeps
// them, and writes a fixed response.
class OneRequestServer {
 public:
  explicit OneRequestServer(std::string response) : response_(std::move(response)) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listener_, 1) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~OneRequestServer() {
    if (thread_.joinable()) thread_.join();
    close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The request as received; waits until the server has answered.
  const std::string& request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  void serve() {
    pollfd p{listener_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return;  // no client in 10 s: request() comes back empty and the test fails
    const int client = accept(listener_, nullptr, nullptr);
    if (client < 0) return;
    timeval tv{10, 0};
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::size_t head_end = std::string::npos;
    std::size_t body_length = 0;
    char buf[16384];
    while (head_end == std::string::npos || request_.size() < head_end + 4 + body_length) {
      const ssize_t n = recv(client, buf, sizeof buf, 0);
      if (n <= 0) break;
      request_.append(buf, static_cast<std::size_t>(n));
      if (head_end == std::string::npos && (head_end = request_.find("\r\n\r\n")) != std::string::npos) {
        const std::string head = to_lower(request_.substr(0, head_end));
        const std::size_t at = head.find("\r\ncontent-length:");
        if (at != std::string::npos) body_length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
      }
    }
    for (std::size_t sent = 0; sent < response_.size();) {
      const ssize_t n = send(client, response_.data() + sent, response_.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    close(client);
  }

  std::string response_;
  std::string request_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::string http_response(int status, const std::string& body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " X\r\n";
  out += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  out += "Connection: close\r\n\r\n";
  out += body;
  return out;
}

// The model server is the operator's and usually private, as here.
HttpClient loopback_client() {
  UrlPolicy policy;
  policy.allow_private = true;
  return HttpClient(policy);
}

// The protocol only, not any model: what goes over the wire to a stand-in
// server and what comes back into the artifact, then an HTTP error.
TEST(ChatAdapter, RoundTripAgainstLoopbackServer) {
  const HttpClient http = loopback_client();
  const transcript::TranscriptArtifact t = small_transcript();
  EnrichmentArtifact a = small_artifact();
  {
    OneRequestServer server(http_response(200, completion(good_content().dump())));
    ChatOptions o;
    o.base_url = server.url();
    o.model = "test-model";
    o.api_key = "sk-test";
    refine_with_chat(a, t, o, http);

    const std::string& req = server.request();
    EXPECT_EQ(req.rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0), 0u) << req.substr(0, 80);
    const std::string head = req.substr(0, req.find("\r\n\r\n") + 2);
    EXPECT_NE(head.find("\r\nAuthorization: Bearer sk-test\r\n"), std::string::npos) << head;
    EXPECT_NE(head.find("\r\nContent-Type: application/json\r\n"), std::string::npos) << head;
    const Json body = Json::parse(req.substr(req.find("\r\n\r\n") + 4));
    EXPECT_EQ(body["model"], "test-model");
    EXPECT_EQ(body, build_chat_request(small_artifact(), t, o));
  }
  EXPECT_EQ(a.method, "chat:test-model");
  EXPECT_EQ(a.sections[1].title, "Looking at a Galaxy");
  EXPECT_EQ(a.qna[0].answer, "It flavours the simmering sauce.");

  const Json refined = to_json(a);
  OneRequestServer failing(http_response(500, R"({"error":{"message":"model crashed"}})"));
  ChatOptions o;
  o.base_url = failing.url() + "/v1";
  o.model = "other-model";
  try {
    refine_with_chat(a, t, o, http);
    ADD_FAILURE() << "a 500 reply was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("500"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model crashed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(failing.request().find("Authorization:"), std::string::npos);  // no key configured, none sent
  EXPECT_EQ(to_json(a), refined);
}

TEST(ChatAdapter, NothingToWriteSendsNothing) {
  EnrichmentArtifact a;
  a.method = "extractive-v1";
  ChatOptions o;
  o.base_url = "http://127.0.0.1:9";  // nothing listens; no request may be made
  o.model = "m";
  refine_with_chat(a, transcript::TranscriptArtifact{}, o, loopback_client());
  EXPECT_EQ(a.method, "extractive-v1");
}

}  // namespace
}  // namespace scribe::enrichment
