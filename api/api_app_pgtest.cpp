// The HTTP core through the real interface: an in-process HttpServer + ApiApp
// on a real PostgreSQL, with test-only routes, driven by the `curl` binary.
// Covers the spec's idempotency rules 1-5, read-only scopes and graceful
// shutdown. No mocks: authentication, the rate limiter and the idempotency
// cache all run against the database.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <latch>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "api/api_app.h"
#include "api/http_server.h"
#include "commands/account_commands.h"
#include "common/crypto.h"
#include "common/log.h"
#include "common/text.h"
#include "domain/limits.h"
#include "tests/pg_fixture.h"

namespace scribe::api {
namespace {

using namespace std::chrono_literals;

// ---------------------------------------------------------------- curl client

struct HttpResult {
  int curl_exit = -1;  // 0 when curl got a response
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  Json json() const { return Json::parse(body); }
  std::optional<std::string> header(const std::string& lower) const {
    auto it = headers.find(lower);
    if (it == headers.end()) return std::nullopt;
    return it->second;
  }
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs curl with `args` and returns its exit status. The child closes every
// inherited descriptor first: a copy of the server's listening socket in a
// long-running curl would keep the port open after shutdown() closes it.
int run_curl(const std::vector<std::string>& args) {
  // Resolved before fork(): the child of a threaded process may only make
  // async-signal-safe calls, which execvp's PATH search is not.
  static const std::string curl_path = [] {
    std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    std::istringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && ::access((d + "/curl").c_str(), X_OK) == 0) return d + "/curl";
    throw std::runtime_error("curl not found on PATH");
  }();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>("curl"));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::close_range(3, ~0U, 0);
    ::execv(curl_path.c_str(), argv.data());
    ::_exit(127);
  }
  int rc = 0;
  while (::waitpid(pid, &rc, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// One request with the curl binary. `headers` are "Name: value" lines.
HttpResult http(const std::string& method, const std::string& url, const std::vector<std::string>& headers = {},
                const std::optional<std::string>& body = std::nullopt) {
  char tmpl[] = "/tmp/scribe-apitest-XXXXXX";
  const char* dir_c = ::mkdtemp(tmpl);
  if (!dir_c) throw std::runtime_error("mkdtemp failed");
  std::filesystem::path dir(dir_c);
  std::vector<std::string> args = {"-sS", "--max-time",        "30", "-X", method, "-D", (dir / "h").string(),
                                   "-o",  (dir / "b").string()};
  for (const auto& h : headers) {
    args.push_back("-H");
    args.push_back(h);
  }
  if (body) {
    std::ofstream(dir / "in", std::ios::binary) << *body;
    args.insert(args.end(), {"-H", "Content-Type: application/json", "--data-binary", "@" + (dir / "in").string()});
  }
  args.push_back(url);
  HttpResult r;
  r.curl_exit = run_curl(args);
  if (r.curl_exit == 0) {
    // curl -D may hold several blocks (100 Continue); keep the last.
    std::string raw = slurp(dir / "h");
    std::vector<std::string> lines;
    std::istringstream in(raw);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
    for (const auto& l : lines) {
      if (l.rfind("HTTP/", 0) == 0) {
        r.headers.clear();
        r.status = std::stoi(l.substr(l.find(' ') + 1, 3));
      } else if (auto colon = l.find(':'); colon != std::string::npos) {
        const std::string name = to_lower(l.substr(0, colon));
        std::string value = l.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(value.begin());
        r.headers[name] = value;
      }
    }
    r.body = slurp(dir / "b");
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return r;
}

// ----------------------------------------------------------------- test gate

// Lets a test hold a handler in flight until it decides to release it.
class Gate {
 public:
  void enter() {
    std::unique_lock lock(mu_);
    ++entered_;
    cv_.notify_all();
    cv_.wait_for(lock, 10s, [&] { return open_; });
  }
  bool wait_entered(int n, std::chrono::milliseconds timeout = 5000ms) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return entered_ >= n; });
  }
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int entered_ = 0;
  bool open_ = false;
};

// Opens the gate when a test leaves, even early on a failed ASSERT, so a
// background std::jthread declared before it can be joined.
struct GateOpener {
  Gate& gate;
  ~GateOpener() { gate.open(); }
};

// ------------------------------------------------------------------- fixture

// A stand-in for the OAuth verifier (api/oauth/token_verifier.h) at the seam
// the Authenticator offers, so the rules that depend on the token type
// (webhooks are for API keys only) are checked without an authorization
// server. "oauth-test-<account id>" is a token of that account for the REST
// API; anything else fails verification.
class TestOAuthVerifier final : public OAuthVerifier {
 public:
  std::optional<Principal> verify(pqxx::transaction_base&, const std::string& token) override {
    const std::string prefix = "oauth-test-";
    if (token.rfind(prefix, 0) != 0) return std::nullopt;
    Principal p;
    p.kind = Principal::Kind::OAuth;
    p.account_id = std::stoll(token.substr(prefix.size()));
    p.oauth_client_id = "test-client";
    p.resources = {"http://test.invalid"};  // the fixture's public URL: the REST API
    return p;
  }
};

class ApiAppTest : public scribe::testing::PgTest {
 protected:
  static constexpr int kRateLimit = 1000;  // high: these tests are not about the limiter

  void SetUp() override {
    log::init("error");
    cfg_.database_url = scribe::testing::database_url();
    cfg_.public_url = "http://test.invalid";
    pool_ = std::make_unique<db::Pool>(cfg_.database_url, 6);
    services_ =
        std::make_unique<Services>(Services{cfg_, *pool_, store(), RateLimiter(kRateLimit), Authenticator(&oauth_)});
    services_->check_url = [](const std::string&, const std::string&) {};
    app_ = std::make_unique<ApiApp>(*services_, 4);
    register_routes(*app_);
    add_test_routes();
    server_ = std::make_unique<HttpServer>(
        "127.0.0.1", 0, 1, limits::kMaxJsonBodyBytes,
        [this](Request req, Responder respond) { app_->dispatch(std::move(req), std::move(respond)); },
        [this](const Request& req, const Error& err) { return app_->render_error(req, err); });
    server_->set_streaming([this](const std::string& m, const std::string& t) { return app_->streams(m, t); },
                           [this](Request head, std::function<void(StreamPlan)> done) {
                             app_->prepare_stream(std::move(head), std::move(done));
                           });
    base_ = "http://127.0.0.1:" + std::to_string(server_->port());
    server_thread_ = std::thread([this] {
      server_->run();
      run_returned_ = true;
    });
    conn_ = connect();
  }

  void TearDown() override {
    gate_.open();
    if (!shut_down_) server_->shutdown(5);
    if (server_thread_.joinable()) server_thread_.join();
    server_.reset();
    app_.reset();
    services_.reset();
    pool_.reset();
  }

  void add_test_routes() {
    auto& r = app_->router();
    auto add = [&](const char* method, const char* pattern, Handler h) {
      r.add(Route{
          .method = method, .pattern = pattern, .authenticated = true, .rate_limited = true, .handler = std::move(h)});
    };
    // Counts executions; answers 201 with a fresh random value in body and header.
    add("POST", "/api/v1/_test/echo", [this](RequestContext& ctx) {
      int n = ++echo_count_;
      std::string nonce = crypto::random_hex(16);
      Response res = Response::json(201, {{"nonce", nonce}, {"count", n}, {"received", ctx.req.body}});
      res.set_header("X-Test-Nonce", nonce);
      return res;
    });
    add("POST", "/api/v1/_test/other", [this](RequestContext&) {
      ++other_count_;
      return Response::json(201, {{"other", true}});
    });
    // Held in flight until the test opens the gate.
    add("POST", "/api/v1/_test/held", [this](RequestContext&) {
      int n = ++held_count_;
      gate_.enter();
      return Response::json(201, {{"held", true}, {"count", n}, {"nonce", crypto::random_hex(16)}});
    });
    // Slow enough that concurrent duplicates overlap it.
    add("POST", "/api/v1/_test/race", [this](RequestContext&) {
      int n = ++race_count_;
      std::this_thread::sleep_for(300ms);
      return Response::json(201, {{"count", n}, {"nonce", crypto::random_hex(16)}});
    });
    add("POST", "/api/v1/_test/fail", [this](RequestContext&) -> Response {
      ++fail_count_;
      throw Error("internal_error", "boom from the test route");
    });
    add("POST", "/api/v1/_test/invalid", [this](RequestContext&) -> Response {
      ++invalid_count_;
      throw Error::invalid("thing", "the thing is wrong " + crypto::random_hex(8));
    });
    // An answer-later handler (the long-poll style): responds through the responder.
    r.add(Route{.method = "POST",
                .pattern = "/api/v1/_test/async",
                .authenticated = true,
                .rate_limited = true,
                .async_handler = [this](std::shared_ptr<RequestContext>, Responder respond) {
                  int n = ++async_count_;
                  respond(Response::json(201, {{"async", true}, {"count", n}, {"nonce", crypto::random_hex(16)}}));
                }});
    add("GET", "/api/v1/_test/echo", [](RequestContext&) { return Response::json(200, {{"read", true}}); });
    add("DELETE", "/api/v1/_test/echo", [this](RequestContext&) {
      ++delete_count_;
      return Response::json(200, {{"deleted", true}});
    });
  }

  struct Caller {
    int64_t account_id;
    int64_t key_id;
    std::string key;
  };

  Caller new_caller(apikey::Permission permission = apikey::Permission::Full) {
    const commands::Meta meta{"test", ""};
    int64_t account =
        commands::open_account(store(), *conn_, unique("apitest") + "@example.com", plans::Tier::Free, meta);
    auto k = commands::create_key(store(), *conn_, account, "test", permission, std::nullopt, std::nullopt, meta);
    return {account, k.key_id, k.plaintext};
  }

  Caller another_key(const Caller& c) {
    const commands::Meta meta{"test", ""};
    auto k = commands::create_key(store(), *conn_, c.account_id, "second", apikey::Permission::Full, std::nullopt,
                                  std::nullopt, meta);
    return {c.account_id, k.key_id, k.plaintext};
  }

  HttpResult post(const Caller& c, const std::string& path, const std::string& body,
                  const std::optional<std::string>& idem = std::nullopt) {
    std::vector<std::string> h = {"Authorization: Bearer " + c.key};
    if (idem) h.push_back("Idempotency-Key: " + *idem);
    return http("POST", base_ + path, h, body);
  }

  int64_t idem_rows(const Caller& c, const std::string& key) {
    pqxx::nontransaction txn(*conn_);
    return txn
        .exec_params1("select count(*) from idempotency_keys where principal = $1 and key = $2",
                      "key:" + std::to_string(c.key_id), key)[0]
        .as<int64_t>();
  }

  void backdate(const Caller& c, const std::string& key, int seconds) {
    pqxx::nontransaction txn(*conn_);
    auto r = txn.exec_params(
        "update idempotency_keys set created_at = now() - make_interval(secs => $3) "
        "where principal = $1 and key = $2",
        "key:" + std::to_string(c.key_id), key, seconds);
    ASSERT_EQ(r.affected_rows(), 1);
  }

  static void expect_envelope(const HttpResult& r, int status, const std::string& code) {
    ASSERT_EQ(r.curl_exit, 0);
    ASSERT_EQ(r.status, status) << r.body;
    Json j = r.json();
    ASSERT_TRUE(j.contains("error")) << r.body;
    EXPECT_EQ(j["error"]["code"], code) << r.body;
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_EQ(j["error"]["doc_url"].get<std::string>().rfind("http://test.invalid/", 0), 0u);
    ASSERT_TRUE(r.header("x-request-id"));
  }

  Config cfg_;
  std::unique_ptr<db::Pool> pool_;
  TestOAuthVerifier oauth_;
  std::unique_ptr<Services> services_;
  std::unique_ptr<ApiApp> app_;
  std::unique_ptr<HttpServer> server_;
  std::thread server_thread_;
  std::atomic<bool> run_returned_{false};
  bool shut_down_ = false;
  std::unique_ptr<pqxx::connection> conn_;
  std::string base_;
  Gate gate_;

  std::atomic<int> echo_count_{0}, other_count_{0}, held_count_{0}, race_count_{0}, fail_count_{0}, invalid_count_{0},
      delete_count_{0}, async_count_{0};
};

// ------------------------------------------------------------ idempotency

// Rule 2: the same identity replays the original response unchanged, once executed.
TEST_F(ApiAppTest, IdempotentReplayIsByteIdenticalAndExecutesOnce) {
  auto c = new_caller();
  const std::string key = unique("idem");
  auto first = post(c, "/api/v1/_test/echo", R"({"a":1})", key);
  ASSERT_EQ(first.curl_exit, 0);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_FALSE(first.header("idempotent-replayed"));
  EXPECT_EQ(first.json()["count"], 1);
  ASSERT_TRUE(first.header("x-test-nonce"));

  auto second = post(c, "/api/v1/_test/echo", R"({"a":1})", key);
  ASSERT_EQ(second.curl_exit, 0);
  EXPECT_EQ(second.status, 201);
  EXPECT_EQ(second.body, first.body);  // byte-identical
  EXPECT_EQ(second.header("idempotent-replayed"), std::optional<std::string>("true"));
  EXPECT_EQ(second.header("x-test-nonce"), first.header("x-test-nonce"));
  EXPECT_EQ(second.header("content-type"), first.header("content-type"));
  // Delivery headers are the new request's, not the stored ones.
  ASSERT_TRUE(second.header("x-request-id"));
  EXPECT_NE(second.header("x-request-id"), first.header("x-request-id"));
  EXPECT_EQ(second.header("access-control-allow-origin"), std::optional<std::string>("*"));
  EXPECT_EQ(echo_count_.load(), 1);

  // Without the header every call executes.
  auto plain1 = post(c, "/api/v1/_test/echo", R"({"a":1})");
  auto plain2 = post(c, "/api/v1/_test/echo", R"({"a":1})");
  EXPECT_EQ(plain1.status, 201);
  EXPECT_EQ(plain2.status, 201);
  EXPECT_NE(plain1.body, plain2.body);
  EXPECT_EQ(echo_count_.load(), 3);
}

// Rule 3: the same key with a different body is 400 invalid_request.
TEST_F(ApiAppTest, SameKeyDifferentBodyIs400) {
  auto c = new_caller();
  const std::string key = unique("idem");
  ASSERT_EQ(post(c, "/api/v1/_test/echo", R"({"a":1})", key).status, 201);
  auto other = post(c, "/api/v1/_test/echo", R"({"a":2})", key);
  expect_envelope(other, 400, "invalid_request");
  EXPECT_EQ(other.json()["error"]["field"], "Idempotency-Key");
  EXPECT_FALSE(other.header("idempotent-replayed"));
  EXPECT_EQ(echo_count_.load(), 1);
  // The original is still replayable afterwards.
  auto again = post(c, "/api/v1/_test/echo", R"({"a":1})", key);
  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.header("idempotent-replayed"), std::optional<std::string>("true"));
  EXPECT_EQ(echo_count_.load(), 1);
}

// Rule 3: the same key on another path is 400, never a replay.
TEST_F(ApiAppTest, SameKeyDifferentPathIs400) {
  auto c = new_caller();
  const std::string key = unique("idem");
  ASSERT_EQ(post(c, "/api/v1/_test/echo", R"({"a":1})", key).status, 201);
  auto other = post(c, "/api/v1/_test/other", R"({"a":1})", key);
  expect_envelope(other, 400, "invalid_request");
  EXPECT_NE(other.json()["error"]["message"].get<std::string>().find("/api/v1/_test/echo"), std::string::npos);
  EXPECT_EQ(other_count_.load(), 0);
  EXPECT_EQ(echo_count_.load(), 1);
}

// Rule 4: 4xx responses are cached and replayed without executing again.
TEST_F(ApiAppTest, ClientErrorsAreCached) {
  auto c = new_caller();
  const std::string key = unique("idem");
  auto first = post(c, "/api/v1/_test/invalid", "{}", key);
  expect_envelope(first, 400, "invalid_request");
  EXPECT_EQ(first.json()["error"]["field"], "thing");
  auto second = post(c, "/api/v1/_test/invalid", "{}", key);
  ASSERT_EQ(second.status, 400);
  EXPECT_EQ(second.body, first.body);
  EXPECT_EQ(second.header("idempotent-replayed"), std::optional<std::string>("true"));
  EXPECT_EQ(invalid_count_.load(), 1);
  EXPECT_EQ(idem_rows(c, key), 1);
}

// Rule 4: 5xx responses are not cached; the key is released and the retry executes.
TEST_F(ApiAppTest, ServerErrorsAreNotCached) {
  auto c = new_caller();
  const std::string key = unique("idem");
  auto first = post(c, "/api/v1/_test/fail", "{}", key);
  expect_envelope(first, 500, "internal_error");
  EXPECT_EQ(idem_rows(c, key), 0);
  auto second = post(c, "/api/v1/_test/fail", "{}", key);
  expect_envelope(second, 500, "internal_error");
  EXPECT_FALSE(second.header("idempotent-replayed"));
  EXPECT_EQ(fail_count_.load(), 2);
  EXPECT_EQ(idem_rows(c, key), 0);
}

// Rule 5: a duplicate while the first runs is 409 not_ready with an integer
// in_flight_seconds; from 120 s it also carries stale: true.
TEST_F(ApiAppTest, InFlightDuplicateIs409AndStaleFrom120Seconds) {
  auto c = new_caller();
  const std::string key = unique("idem");
  HttpResult first;
  std::jthread t([&] { first = post(c, "/api/v1/_test/held", R"({"x":1})", key); });
  GateOpener opener{gate_};
  ASSERT_TRUE(gate_.wait_entered(1));

  auto dup = post(c, "/api/v1/_test/held", R"({"x":1})", key);
  expect_envelope(dup, 409, "not_ready");
  Json e = dup.json()["error"];
  ASSERT_TRUE(e["in_flight_seconds"].is_number_integer()) << dup.body;
  EXPECT_GE(e["in_flight_seconds"].get<int64_t>(), 0);
  EXPECT_LE(e["in_flight_seconds"].get<int64_t>(), 5);
  EXPECT_FALSE(e.contains("stale")) << dup.body;

  backdate(c, key, 100);
  auto young = post(c, "/api/v1/_test/held", R"({"x":1})", key);
  expect_envelope(young, 409, "not_ready");
  e = young.json()["error"];
  EXPECT_GE(e["in_flight_seconds"].get<int64_t>(), 100);
  EXPECT_LE(e["in_flight_seconds"].get<int64_t>(), 105);
  EXPECT_FALSE(e.contains("stale")) << young.body;

  backdate(c, key, 130);
  auto stale = post(c, "/api/v1/_test/held", R"({"x":1})", key);
  expect_envelope(stale, 409, "not_ready");
  e = stale.json()["error"];
  ASSERT_TRUE(e["in_flight_seconds"].is_number_integer()) << stale.body;
  EXPECT_GE(e["in_flight_seconds"].get<int64_t>(), 130);
  EXPECT_LE(e["in_flight_seconds"].get<int64_t>(), 135);
  EXPECT_EQ(e["stale"], true) << stale.body;

  gate_.open();
  t.join();
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(held_count_.load(), 1);
  auto replay = post(c, "/api/v1/_test/held", R"({"x":1})", key);
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), std::optional<std::string>("true"));
  EXPECT_EQ(held_count_.load(), 1);
}

// Rule 1: the identity includes the API key: another key's same Idempotency-Key executes separately.
TEST_F(ApiAppTest, KeysArePerApiKey) {
  auto a = new_caller();
  auto b = another_key(a);  // same account, different key
  auto other_account = new_caller();
  const std::string key = unique("idem");
  auto ra = post(a, "/api/v1/_test/echo", R"({"same":true})", key);
  auto rb = post(b, "/api/v1/_test/echo", R"({"same":true})", key);
  auto rc = post(other_account, "/api/v1/_test/echo", R"({"same":true})", key);
  ASSERT_EQ(ra.status, 201);
  ASSERT_EQ(rb.status, 201);
  ASSERT_EQ(rc.status, 201);
  EXPECT_FALSE(rb.header("idempotent-replayed"));
  EXPECT_FALSE(rc.header("idempotent-replayed"));
  EXPECT_NE(ra.json()["nonce"], rb.json()["nonce"]);
  EXPECT_NE(ra.json()["nonce"], rc.json()["nonce"]);
  EXPECT_EQ(echo_count_.load(), 3);
  // And each key replays its own response.
  auto rb2 = post(b, "/api/v1/_test/echo", R"({"same":true})", key);
  EXPECT_EQ(rb2.body, rb.body);
  EXPECT_EQ(echo_count_.load(), 3);
}

// Rule 1: entries are valid 24 h; after that the key executes afresh.
TEST_F(ApiAppTest, EntriesAreValidFor24Hours) {
  auto c = new_caller();
  const std::string key = unique("ttl");
  auto first = post(c, "/api/v1/_test/echo", "{}", key);
  ASSERT_EQ(first.status, 201);
  backdate(c, key, 23 * 3600);
  auto replay = post(c, "/api/v1/_test/echo", "{}", key);
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), std::optional<std::string>("true"));
  EXPECT_EQ(echo_count_.load(), 1);
  backdate(c, key, 24 * 3600 + 60);
  auto fresh = post(c, "/api/v1/_test/echo", "{}", key);
  EXPECT_EQ(fresh.status, 201);
  EXPECT_FALSE(fresh.header("idempotent-replayed"));
  EXPECT_NE(fresh.body, first.body);
  EXPECT_EQ(echo_count_.load(), 2);
}

// The idempotency layer covers every POST route, including handlers that answer
// later through the responder (AsyncHandler): the stored response replays.
TEST_F(ApiAppTest, AsyncPostHandlersAreIdempotentToo) {
  auto c = new_caller();
  const std::string key = unique("async");
  auto first = post(c, "/api/v1/_test/async", "{}", key);
  ASSERT_EQ(first.status, 201) << first.body;
  auto second = post(c, "/api/v1/_test/async", "{}", key);
  EXPECT_EQ(second.status, 201) << "the key stays claimed (in flight) forever: " << second.body;
  EXPECT_EQ(second.body, first.body);
  EXPECT_EQ(second.header("idempotent-replayed"), std::optional<std::string>("true"));
  EXPECT_EQ(async_count_.load(), 1);
}

// Rule 1: at most 128 characters.
TEST_F(ApiAppTest, IdempotencyKeyLongerThan128Is400) {
  auto c = new_caller();
  const std::string too_long(129, 'k');
  auto r = post(c, "/api/v1/_test/echo", "{}", too_long);
  expect_envelope(r, 400, "invalid_request");
  EXPECT_EQ(r.json()["error"]["field"], "Idempotency-Key");
  EXPECT_EQ(echo_count_.load(), 0);
  EXPECT_EQ(idem_rows(c, too_long), 0);

  std::string exactly = unique("k");
  exactly.resize(128, 'x');
  auto ok = post(c, "/api/v1/_test/echo", "{}", exactly);
  EXPECT_EQ(ok.status, 201) << ok.body;
  EXPECT_EQ(echo_count_.load(), 1);
}

// Eight identical requests at once: exactly one executes; each answer is the
// stored 201 or a 409 not_ready.
TEST_F(ApiAppTest, ConcurrentDuplicatesExecuteExactlyOnce) {
  auto c = new_caller();
  const std::string key = unique("race");
  constexpr int kN = 8;
  std::vector<HttpResult> results(kN);
  std::latch start(kN);
  std::vector<std::jthread> threads;
  for (int i = 0; i < kN; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = post(c, "/api/v1/_test/race", R"({"n":8})", key);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(race_count_.load(), 1);

  int originals = 0, replays = 0, not_ready = 0;
  std::optional<std::string> body201;
  for (const auto& r : results) {
    ASSERT_EQ(r.curl_exit, 0);
    if (r.status == 201) {
      if (r.header("idempotent-replayed")) ++replays;
      else ++originals;
      if (!body201) body201 = r.body;
      EXPECT_EQ(r.body, *body201);
    } else {
      expect_envelope(r, 409, "not_ready");
      EXPECT_TRUE(r.json()["error"]["in_flight_seconds"].is_number_integer());
      ++not_ready;
    }
  }
  EXPECT_EQ(originals, 1);
  EXPECT_EQ(originals + replays + not_ready, kN);
  // Afterwards the stored response replays.
  auto after = post(c, "/api/v1/_test/race", R"({"n":8})", key);
  EXPECT_EQ(after.status, 201);
  ASSERT_TRUE(body201);
  EXPECT_EQ(after.body, *body201);
  EXPECT_EQ(race_count_.load(), 1);
}

// ------------------------------------------------------------------ scopes

TEST_F(ApiAppTest, ReadOnlyKeyIsForbiddenOnPostAndDeleteButReads) {
  auto ro = new_caller(apikey::Permission::ReadOnly);
  const std::vector<std::string> auth = {"Authorization: Bearer " + ro.key};
  auto p = http("POST", base_ + "/api/v1/_test/echo", auth, "{}");
  expect_envelope(p, 403, "scope_forbidden");
  auto pi = post(ro, "/api/v1/_test/echo", "{}", unique("ro"));
  expect_envelope(pi, 403, "scope_forbidden");
  auto d = http("DELETE", base_ + "/api/v1/_test/echo", auth);
  expect_envelope(d, 403, "scope_forbidden");
  EXPECT_EQ(echo_count_.load(), 0);
  EXPECT_EQ(delete_count_.load(), 0);

  auto g = http("GET", base_ + "/api/v1/_test/echo", auth);
  EXPECT_EQ(g.status, 200) << g.body;
  auto me = http("GET", base_ + "/api/v1/me", auth);
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.json()["api_key"]["permission"], "read_only");
  EXPECT_EQ(me.json()["api_key"]["scopes"], Json::array({"read"}));

  // A full-access key of the same kind of account may do both.
  auto full = new_caller();
  EXPECT_EQ(post(full, "/api/v1/_test/echo", "{}").status, 201);
  EXPECT_EQ(http("DELETE", base_ + "/api/v1/_test/echo", {"Authorization: Bearer " + full.key}).status, 200);
}

// /me may take the caller's key from the authenticator's cache and check it in
// its own statement; a key revoked or expired since it was cached must still
// fail on the very next request (the revocation comes from another connection,
// as it would from `scribe admin key revoke` in another process).
TEST_F(ApiAppTest, CachedKeyOnMeIsCheckedInTheSameStatement) {
  const commands::Meta meta{"test", ""};
  auto c = new_caller();
  const std::vector<std::string> auth = {"Authorization: Bearer " + c.key};
  auto first = http("GET", base_ + "/api/v1/me", auth);  // authenticates and caches
  ASSERT_EQ(first.status, 200) << first.body;
  auto second = http("GET", base_ + "/api/v1/me", auth);  // from the cache
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(first.json()["api_key"], second.json()["api_key"]);
  EXPECT_EQ(second.json()["user_id"], c.account_id);

  commands::revoke_key(store(), *conn_, c.key_id, meta);
  auto revoked = http("GET", base_ + "/api/v1/me", auth);
  expect_envelope(revoked, 401, "invalid_api_key");
  EXPECT_NE(revoked.json()["error"]["message"].get<std::string>().find("revoked"), std::string::npos) << revoked.body;
  expect_envelope(http("GET", base_ + "/api/v1/_test/echo", auth), 401, "invalid_api_key");

  auto e = new_caller();
  const std::vector<std::string> e_auth = {"Authorization: Bearer " + e.key};
  ASSERT_EQ(http("GET", base_ + "/api/v1/me", e_auth).status, 200);
  // The key's expiry passing, without waiting for it: the read model is set
  // back afterwards, because other tests compare it with a rebuild from the
  // events.
  struct Restore {
    pqxx::connection& conn;
    int64_t id;
    ~Restore() {
      pqxx::nontransaction txn(conn);
      txn.exec_params("update api_keys set expires_at = null where id = $1", id);
    }
  } restore{*conn_, e.key_id};
  {
    pqxx::nontransaction txn(*conn_);
    txn.exec_params("update api_keys set expires_at = now() - interval '1 second' where id = $1", e.key_id);
  }
  auto expired = http("GET", base_ + "/api/v1/me", e_auth);
  expect_envelope(expired, 401, "invalid_api_key");
  EXPECT_NE(expired.json()["error"]["message"].get<std::string>().find("expired"), std::string::npos) << expired.body;
}

// ------------------------------------------------------------- webhooks

TEST_F(ApiAppTest, WebhooksAreForApiKeysOnlyOAuthTokensGet403) {
  auto c = new_caller();
  const std::vector<std::string> oauth = {"Authorization: Bearer oauth-test-" + std::to_string(c.account_id),
                                          "Content-Type: application/json"};
  const std::string body = R"({"url":"https://hooks.example.com/h"})";
  expect_envelope(http("GET", base_ + "/api/v1/webhooks", oauth), 403, "forbidden");
  expect_envelope(http("POST", base_ + "/api/v1/webhooks", oauth, body), 403, "forbidden");
  expect_envelope(http("DELETE", base_ + "/api/v1/webhooks", oauth), 403, "forbidden");
  expect_envelope(http("POST", base_ + "/api/v1/webhooks/test", oauth, "{}"), 403, "forbidden");
  // The same account's OAuth token still reads other endpoints, and its API key registers.
  EXPECT_EQ(http("GET", base_ + "/api/v1/me", oauth).status, 200);
  EXPECT_EQ(post(c, "/api/v1/webhooks", body).status, 201);
  expect_envelope(http("GET", base_ + "/api/v1/webhooks", {"Authorization: Bearer not-a-token"}), 401,
                  "unauthenticated");
}

// -------------------------------------------------------- graceful shutdown

TEST_F(ApiAppTest, GracefulShutdownFinishesInFlightRequest) {
  auto c = new_caller();
  HttpResult slow;
  std::jthread client([&] { slow = post(c, "/api/v1/_test/held", R"({"slow":true})"); });
  GateOpener opener{gate_};
  ASSERT_TRUE(gate_.wait_entered(1));
  ASSERT_EQ(server_->in_flight(), 1);

  std::atomic<bool> shutdown_returned{false};
  std::jthread stopper([&] {
    server_->shutdown(10);
    shutdown_returned = true;
  });
  shut_down_ = true;
  // While draining: new connections are refused, run() has not returned.
  bool refused = false;
  for (int i = 0; i < 50 && !refused; ++i) {
    auto r = http("GET", base_ + "/healthz");
    refused = r.curl_exit != 0;
    if (!refused) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(refused) << "the listener still accepts connections while draining";
  EXPECT_FALSE(run_returned_.load());
  EXPECT_FALSE(shutdown_returned.load());

  gate_.open();
  client.join();
  stopper.join();
  ASSERT_EQ(slow.curl_exit, 0);
  EXPECT_EQ(slow.status, 201) << slow.body;
  Json body = slow.json();
  EXPECT_EQ(body["held"], true);
  EXPECT_EQ(body["count"], 1);
  EXPECT_EQ(slow.header("connection"), std::optional<std::string>("close"));
  server_thread_.join();
  EXPECT_TRUE(run_returned_.load());
  EXPECT_TRUE(shutdown_returned.load());
}

}  // namespace
}  // namespace scribe::api
