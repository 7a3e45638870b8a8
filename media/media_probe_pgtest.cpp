// Integration tests for link-source media intake. They live in pg_tests because
// that is where integration tests run, but they touch no database: they start a
// local HTTP media server (a small Python script written at test time) on
// 127.0.0.1 and generate real speech with flite + ffmpeg.
#include "media/media_probe.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/http_client.h"
#include "common/json.h"
#include "common/url_policy.h"

extern char** environ;

namespace scribe::media {
namespace {

namespace fs = std::filesystem;

const char* kServerScript = R"PY(
import http.server, json, os, sys, threading, time, urllib.parse

root, portfile = sys.argv[1], sys.argv[2]
counts = {"connections": 0, "requests": 0}
lock = threading.Lock()

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body=b"", headers=None, ctype="text/plain"):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        p, q = u.path, urllib.parse.parse_qs(u.query)
        if p == "/counts":
            with lock:
                body = json.dumps(counts).encode()
            return self.send(200, body, ctype="application/json")
        with lock:
            counts["requests"] += 1
        if p.startswith("/files/"):
            name = os.path.basename(urllib.parse.unquote(p[len("/files/"):]))
            fp = os.path.join(root, name)
            if not os.path.isfile(fp):
                return self.send(404, b"not found")
            with open(fp, "rb") as f:
                data = f.read()
            ctype = {"mp3": "audio/mpeg", "mp4": "video/mp4", "m4a": "audio/mp4"}.get(name.rsplit(".", 1)[-1], "application/octet-stream")
            return self.send(200, data, ctype=ctype)
        if p.startswith("/redirect/"):
            n = int(p.split("/")[2])
            target = q.get("to", ["/files/speech.mp3"])[0]
            loc = target if n <= 1 else "/redirect/%d?%s" % (n - 1, urllib.parse.urlencode({"to": target}))
            return self.send(302, b"moved", {"Location": loc})
        if p.startswith("/status/"):
            code = int(p.split("/")[2])
            h = {"Retry-After": q["retry_after"][0]} if "retry_after" in q else {}
            return self.send(code, b"error page " * 10000, h)
        if p == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            try:
                for _ in range(120):
                    self.wfile.write(b"\0" * 10)
                    self.wfile.flush()
                    time.sleep(0.5)
            except Exception:
                pass
            self.close_connection = True
            return
        if p == "/stream-big":
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for _ in range(200):
                    self.wfile.write(b"\xff" * 4096)
            except Exception:
                pass
            self.close_connection = True
            return
        return self.send(404, b"no route")

    def do_POST(self):
        with lock:
            counts["requests"] += 1
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        if self.path == "/echo":
            resp = json.dumps({"body": body.decode(), "signature": self.headers.get("X-Service-Signature"),
                               "content_type": self.headers.get("Content-Type")}).encode()
            return self.send(200, resp, ctype="application/json")
        if self.path == "/moved":
            return self.send(302, b"", {"Location": "/echo"})
        return self.send(404, b"")

class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    def handle_error(self, request, client_address):
        pass  # clients that stop reading early (size limits, error bodies) are expected
    def get_request(self):
        r = super().get_request()
        with lock:
            counts["connections"] += 1
        return r

def exit_with_parent(parent):
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)

threading.Thread(target=exit_with_parent, args=(os.getppid(),), daemon=True).start()
srv = Server(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
)PY";

const char* kFakeYtdlp = R"SH(#!/bin/sh
d=$(dirname "$0")
for a in "$@"; do printf '%s\n' "$a"; done > "$d/args.txt"
if [ -f "$d/sleep" ]; then sleep 30; fi
if [ -f "$d/stdout.json" ]; then cat "$d/stdout.json"; exit 0; fi
cat "$d/stderr.txt" >&2
exit 1
)SH";

std::string g_setup_error;
fs::path g_root;   // temp dir of the suite
fs::path g_files;  // served by the media server
fs::path g_bin;    // the fake yt-dlp
pid_t g_server = -1;
int g_port = 0;
double g_speech_duration = 0;

void write_file(const fs::path& p, const std::string& content) {
  std::ofstream f(p, std::ios::binary);
  f << content;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs a fixed test-setup command line (our own paths only, never a URL).
int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

std::string base_url() { return "http://127.0.0.1:" + std::to_string(g_port); }
std::string url(const std::string& path) { return base_url() + path; }

UrlPolicy lax_policy() {
  UrlPolicy p;
  p.allow_private = true;
  return p;
}

// Strict, except for exactly the test server's endpoint (what an operator's
// allowlist does): lets us test redirects to private targets with allow_private=false.
UrlPolicy server_only_policy() {
  UrlPolicy p;
  p.allowed_private_endpoints = {"127.0.0.1:" + std::to_string(g_port)};
  return p;
}

Json server_counts() {
  HttpClient client(lax_policy());
  fs::path out = g_root / "counts.json";
  auto r = client.download(url("/counts"), out.string(), DownloadLimits{});
  EXPECT_EQ(r.status, 200);
  return Json::parse(read_file(out));
}

int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

class MediaProbeTest : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/scribe-media-test-XXXXXX";
    if (!mkdtemp(tmpl)) {
      g_setup_error = "mkdtemp failed";
      return;
    }
    g_root = tmpl;
    g_files = g_root / "files";
    g_bin = g_root / "bin";
    fs::create_directories(g_files);
    fs::create_directories(g_bin);
    const fs::path wav = g_root / "x.wav";
    const std::string quiet = " >/dev/null 2>&1";
    if (sh("flite -voice slt -t 'hello world this is a test' -o " + q(wav) + quiet) != 0) {
      g_setup_error = "flite failed (install flite)";
      return;
    }
    if (sh("ffmpeg -nostdin -loglevel error -y -i " + q(wav) + " " + q(g_files / "speech.mp3") + quiet) != 0 ||
        sh("ffmpeg -nostdin -loglevel error -y -i " + q(wav) + " -metadata title='Hello Title' " +
           q(g_files / "titled.mp3") + quiet) != 0 ||
        sh("ffmpeg -nostdin -loglevel error -y -f lavfi -i color=c=red:s=64x64:d=1 -c:v mpeg4 " +
           q(g_files / "video-only.mp4") + quiet) != 0 ||
        sh("ffmpeg -nostdin -loglevel error -y -i " + q(wav) + " -c:a aac -movflags +faststart " +
           q(g_root / "whole.m4a") + quiet) != 0) {
      g_setup_error = "ffmpeg failed (install ffmpeg)";
      return;
    }
    fs::copy_file(g_files / "speech.mp3", g_files / "my talk.mp3");
    write_file(g_files / "text.mp3", "this is just some text, not audio at all\n");
    write_file(g_files / "truncated.mp3", read_file(g_files / "speech.mp3").substr(0, 200));
    // Cut right after the index: the container still states a duration and an
    // audio stream, but no audio packet can be read.
    const std::string m4a = read_file(g_root / "whole.m4a");
    const auto mdat = m4a.find("mdat");
    if (mdat == std::string::npos) {
      g_setup_error = "no mdat box in the faststart m4a";
      return;
    }
    write_file(g_files / "cut.m4a", m4a.substr(0, mdat + 4));
    std::string ref =
        capture("ffprobe -v error -show_entries format=duration -of csv=p=0 " + q(g_files / "speech.mp3"));
    g_speech_duration = std::atof(ref.c_str());
    if (g_speech_duration <= 0) {
      g_setup_error = "ffprobe gave no reference duration";
      return;
    }

    write_file(g_root / "server.py", kServerScript);
    write_file(g_bin / "yt-dlp", kFakeYtdlp);
    fs::permissions(g_bin / "yt-dlp", fs::perms::owner_all);
    const fs::path portfile = g_root / "port";
    std::vector<std::string> args = {"python3", (g_root / "server.py").string(), g_files.string(), portfile.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawnp(&g_server, "python3", nullptr, nullptr, argv.data(), environ) != 0) {
      g_setup_error = "could not start python3";
      return;
    }
    for (int i = 0; i < 200 && !fs::exists(portfile); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    g_port = std::atoi(read_file(portfile).c_str());
    if (g_port <= 0) g_setup_error = "media server did not start";
  }

  static void TearDownTestSuite() {
    if (g_server > 0) {
      kill(g_server, SIGTERM);
      int st = 0;
      waitpid(g_server, &st, 0);
      g_server = -1;
    }
    std::error_code ec;
    if (!g_root.empty()) fs::remove_all(g_root, ec);
  }

 protected:
  void SetUp() override {
    ASSERT_TRUE(g_setup_error.empty()) << g_setup_error;
    work_ = g_root / ("work-" + std::to_string(counter_++));
    fs::create_directories(work_);
    for (const char* f : {"args.txt", "stderr.txt", "stdout.json", "sleep"}) fs::remove(g_bin / f);
  }

  MediaProbe probe_with(UrlPolicy policy, MediaProbeOptions options = {}) const {
    return MediaProbe(std::move(policy), work_.string(), std::move(options));
  }

  MediaProbeOptions fake_ytdlp_options() const {
    MediaProbeOptions o;
    o.ytdlp = (g_bin / "yt-dlp").string();
    return o;
  }

  std::size_t work_files() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(work_)) ++n;
    return n;
  }

  // Runs fn, expects a scribe::Error with `code`, returns it.
  static Error expect_error(const std::function<void()>& fn, const std::string& code) {
    try {
      fn();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.message();
      return e;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception: " << e.what();
      return Error("none", e.what());
    }
    ADD_FAILURE() << "expected error " << code << ", got success";
    return Error("none", "no error");
  }

  fs::path work_;
  static inline int counter_ = 0;
};

// ---- external_url: success -------------------------------------------------------

TEST_F(MediaProbeTest, ExternalUrlSpeechDurationTitleAndFile) {
  auto r = probe_with(lax_policy()).probe("external_url", url("/files/speech.mp3"));
  EXPECT_NEAR(r.duration_seconds, g_speech_duration, 0.2);
  EXPECT_GT(r.duration_seconds, 1.0);
  ASSERT_TRUE(r.title);
  EXPECT_EQ(*r.title, "speech.mp3");  // no title tag: the file name from the URL
  ASSERT_FALSE(r.local_path.empty());
  EXPECT_TRUE(fs::exists(r.local_path));
  EXPECT_EQ(fs::path(r.local_path).parent_path(), work_);
  EXPECT_EQ(read_file(r.local_path), read_file(g_files / "speech.mp3"));
}

TEST_F(MediaProbeTest, ExternalUrlTitleTagWinsAndFileNameIsDecoded) {
  auto tagged = probe_with(lax_policy()).probe("external_url", url("/files/titled.mp3"));
  ASSERT_TRUE(tagged.title);
  EXPECT_EQ(*tagged.title, "Hello Title");
  auto spaced = probe_with(lax_policy()).probe("external_url", url("/files/my%20talk.mp3?token=abc#t=3"));
  ASSERT_TRUE(spaced.title);
  EXPECT_EQ(*spaced.title, "my talk.mp3");
  EXPECT_NEAR(spaced.duration_seconds, g_speech_duration, 0.2);
}

TEST_F(MediaProbeTest, ExternalUrlFollowsRedirectChainUpToFiveHops) {
  auto three = probe_with(lax_policy()).probe("external_url", url("/redirect/3"));
  EXPECT_NEAR(three.duration_seconds, g_speech_duration, 0.2);
  ASSERT_TRUE(three.title);
  EXPECT_EQ(*three.title, "speech.mp3");  // the final URL names the file
  auto five = probe_with(lax_policy()).probe("external_url", url("/redirect/5"));
  EXPECT_NEAR(five.duration_seconds, g_speech_duration, 0.2);
  expect_error([&] { probe_with(lax_policy()).probe("external_url", url("/redirect/6")); }, "video_unavailable_probe");
  EXPECT_EQ(work_files(), 2u);  // the two successes; the failure left nothing
}

TEST_F(MediaProbeTest, ExternalUrlAllowlistedEndpointWorksWithoutAllowPrivate) {
  auto r = probe_with(server_only_policy()).probe("external_url", url("/redirect/2"));
  EXPECT_NEAR(r.duration_seconds, g_speech_duration, 0.2);
}

// ---- external_url: not media ----------------------------------------------------------

TEST_F(MediaProbeTest, ExternalUrlNotPlayableFilesAreInvalidRequestOnUrl) {
  for (const char* path : {"/files/text.mp3", "/files/truncated.mp3", "/files/video-only.mp4", "/files/cut.m4a"}) {
    Error e = expect_error([&] { probe_with(lax_policy()).probe("external_url", url(path)); }, "invalid_request");
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_EQ(e.extras().value("field", ""), "url") << path;
    EXPECT_NE(e.message().find("is not a playable audio or video file"), std::string::npos) << e.message();
  }
  EXPECT_EQ(work_files(), 0u);
}

// ---- external_url: HTTP failures -----------------------------------------------------------

TEST_F(MediaProbeTest, ExternalUrlPermanentHttpFailures) {
  for (const char* path : {"/status/404", "/status/410", "/status/403", "/status/500", "/files/missing.mp3"}) {
    Error e =
        expect_error([&] { probe_with(lax_policy()).probe("external_url", url(path)); }, "video_unavailable_probe");
    EXPECT_EQ(e.http_status(), 400) << path;
  }
  EXPECT_EQ(work_files(), 0u);
}

TEST_F(MediaProbeTest, ExternalUrlBusySourcesCarryRetryAfter) {
  Error e429 = expect_error([&] { probe_with(lax_policy()).probe("external_url", url("/status/429?retry_after=7")); },
                            "source_busy");
  EXPECT_EQ(e429.http_status(), 503);
  EXPECT_EQ(e429.extras().value("retry_after", 0), 7);
  Error e503 = expect_error([&] { probe_with(lax_policy()).probe("external_url", url("/status/503")); }, "source_busy");
  int dflt = e503.extras().value("retry_after", 0);
  EXPECT_GE(dflt, 1);
  EXPECT_LE(dflt, 300);
  Error capped = expect_error(
      [&] { probe_with(lax_policy()).probe("external_url", url("/status/429?retry_after=99999")); }, "source_busy");
  EXPECT_EQ(capped.extras().value("retry_after", 0), 300);
  EXPECT_EQ(work_files(), 0u);
}

TEST_F(MediaProbeTest, ExternalUrlUnreachableAndUnresolvable) {
  std::string dead = "http://127.0.0.1:" + std::to_string(closed_port()) + "/a.mp3";
  expect_error([&] { probe_with(lax_policy()).probe("external_url", dead); }, "video_unavailable_probe");
  expect_error([&] { probe_with(lax_policy()).probe("external_url", "http://no-such-host.invalid/a.mp3"); },
               "video_unavailable_probe");
  EXPECT_EQ(work_files(), 0u);
}

TEST_F(MediaProbeTest, ExternalUrlTimeoutsAreProbeProxyConnectivity) {
  MediaProbeOptions total;
  total.download.total_timeout = std::chrono::seconds(2);
  auto t0 = std::chrono::steady_clock::now();
  Error e = expect_error([&] { probe_with(lax_policy(), total).probe("external_url", url("/slow")); },
                         "probe_proxy_connectivity");
  EXPECT_EQ(e.http_status(), 503);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15));

  MediaProbeOptions low_speed;
  low_speed.download.low_speed_bytes_per_second = 1000;
  low_speed.download.low_speed_window = std::chrono::seconds(1);
  t0 = std::chrono::steady_clock::now();
  expect_error([&] { probe_with(lax_policy(), low_speed).probe("external_url", url("/slow")); },
               "probe_proxy_connectivity");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15));
  EXPECT_EQ(work_files(), 0u);
}

TEST_F(MediaProbeTest, ExternalUrlTooLargeIsInvalidRequestOnUrl) {
  MediaProbeOptions small;
  small.download.max_bytes = 1000;  // speech.mp3 is several KB, with Content-Length
  Error e = expect_error([&] { probe_with(lax_policy(), small).probe("external_url", url("/files/speech.mp3")); },
                         "invalid_request");
  EXPECT_EQ(e.extras().value("field", ""), "url");
  EXPECT_NE(e.message().find("larger than 1000 bytes"), std::string::npos) << e.message();
  MediaProbeOptions streamed;
  streamed.download.max_bytes = 100000;  // /stream-big sends 800 KB without Content-Length
  Error s = expect_error([&] { probe_with(lax_policy(), streamed).probe("external_url", url("/stream-big")); },
                         "invalid_request");
  EXPECT_EQ(s.extras().value("field", ""), "url");
  EXPECT_NE(s.message().find("larger than 100000 bytes"), std::string::npos) << s.message();
  EXPECT_EQ(work_files(), 0u);
}

// ---- URL policy ---------------------------------------------------------------------------

TEST_F(MediaProbeTest, LoopbackRefusedBeforeAnyConnectionWhenPrivateNotAllowed) {
  Json before = server_counts();
  for (const std::string& u :
       {url("/files/speech.mp3"), "http://localhost:" + std::to_string(g_port) + "/files/speech.mp3"}) {
    Error e = expect_error([&] { probe_with(UrlPolicy{}).probe("external_url", u); }, "invalid_request");
    EXPECT_EQ(e.extras().value("field", ""), "url");
    Error y = expect_error([&] { probe_with(UrlPolicy{}).probe("video_site", u); }, "invalid_request");
    EXPECT_EQ(y.extras().value("field", ""), "url");
  }
  Json after = server_counts();
  // Each /counts fetch is one connection and is not counted as a request.
  EXPECT_EQ(after["connections"].get<int>(), before["connections"].get<int>() + 1);
  EXPECT_EQ(after["requests"].get<int>(), before["requests"].get<int>());
  EXPECT_EQ(work_files(), 0u);
}

TEST_F(MediaProbeTest, RedirectToPrivateAddressIsRefusedWhenPrivateNotAllowed) {
  const std::string self = "127.0.0.1:" + std::to_string(g_port);
  for (const std::string& target :
       {std::string("http://169.254.169.254/latest/meta-data/"), std::string("http://10.0.0.1/a.mp3"),
        "http://localhost:" + std::to_string(g_port) + "/files/speech.mp3",
        "http://127.0.0.2:" + std::to_string(g_port) + "/files/speech.mp3", std::string("http://[::1]/a.mp3"),
        std::string("ftp://" + self + "/a.mp3")}) {
    std::string u = url("/redirect/2?to=" + target);
    Error e = expect_error([&] { probe_with(server_only_policy()).probe("external_url", u); }, "invalid_request");
    EXPECT_EQ(e.extras().value("field", ""), "url") << target;
  }
  // With allow_private the same private redirect is followed (the check is what refused it).
  auto ok = probe_with(lax_policy())
                .probe("external_url",
                       url("/redirect/2?to=http://localhost:" + std::to_string(g_port) + "/files/speech.mp3"));
  EXPECT_NEAR(ok.duration_seconds, g_speech_duration, 0.2);
}

TEST_F(MediaProbeTest, ConnectGuardStopsDnsRebinding) {
  // The name passed the check earlier; now it resolves to loopback. CURLOPT_RESOLVE
  // stands in for the rebinding DNS server.
  Json before = server_counts();
  auto fetch = [&](const UrlPolicy& policy, bool* refused) {
    CURL* c = curl_easy_init();
    std::string u = "http://rebind.example.com:" + std::to_string(g_port) + "/files/speech.mp3";
    std::string pin = "rebind.example.com:" + std::to_string(g_port) + ":127.0.0.1";
    curl_slist* resolve = curl_slist_append(nullptr, pin.c_str());
    curl_easy_setopt(c, CURLOPT_URL, u.c_str());
    curl_easy_setopt(c, CURLOPT_RESOLVE, resolve);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(
        c, CURLOPT_WRITEFUNCTION, +[](char*, size_t s, size_t n, void*) { return s * n; });
    CurlConnectGuard guard(policy);
    guard.attach(c);
    CURLcode rc = curl_easy_perform(c);
    *refused = guard.refused();
    curl_slist_free_all(resolve);
    curl_easy_cleanup(c);
    return rc;
  };
  bool refused = false;
  EXPECT_EQ(fetch(UrlPolicy{}, &refused), CURLE_COULDNT_CONNECT);
  EXPECT_TRUE(refused);
  Json mid = server_counts();
  EXPECT_EQ(mid["connections"].get<int>(), before["connections"].get<int>() + 1);  // only the /counts fetch
  EXPECT_EQ(fetch(lax_policy(), &refused), CURLE_OK);
  EXPECT_FALSE(refused);
}

TEST_F(MediaProbeTest, UnknownSourceIsInvalidRequestOnSource) {
  Error e =
      expect_error([&] { probe_with(lax_policy()).probe("upload", url("/files/speech.mp3")); }, "invalid_request");
  EXPECT_EQ(e.extras().value("field", ""), "source");
}

// ---- probe_file -------------------------------------------------------------------------------

TEST_F(MediaProbeTest, ProbeFileLocal) {
  auto r = probe_file((g_files / "speech.mp3").string());
  EXPECT_NEAR(r.duration_seconds, g_speech_duration, 0.2);
  EXPECT_FALSE(r.title);
  EXPECT_EQ(r.local_path, (g_files / "speech.mp3").string());
  Error e = expect_error([&] { probe_file((g_files / "text.mp3").string()); }, "invalid_request");
  EXPECT_EQ(e.extras().value("field", ""), "upload_id");
  Error m = expect_error([&] { probe_file((g_files / "speech.mp3").string(), "upload_id", "/nonexistent/ffprobe"); },
                         "probe_runtime_misconfigured");
  EXPECT_EQ(m.http_status(), 503);
  // A name that looks like an option or a protocol is still read as a local file.
  fs::copy_file(g_files / "speech.mp3", work_ / "-i");
  auto dash = probe_file((work_ / "-i").string());
  EXPECT_NEAR(dash.duration_seconds, g_speech_duration, 0.2);
}

// ---- yt-dlp: the real one, generic extractor on the local server ------------------------------------

TEST_F(MediaProbeTest, YtdlpGenericExtractorOnDirectMediaLink) {
  MediaProbeOptions o;
  o.ytdlp = "yt-dlp";
  auto r = probe_with(lax_policy(), o).probe("video_site", url("/files/speech.mp3"));
  EXPECT_NEAR(r.duration_seconds, g_speech_duration, 0.2);
  ASSERT_TRUE(r.title);
  EXPECT_EQ(*r.title, "speech");  // yt-dlp's title for a direct link
  EXPECT_TRUE(fs::exists(r.local_path));
  auto p = probe_with(lax_policy(), o).probe("platform_url", url("/files/titled.mp3"));
  ASSERT_TRUE(p.title);
  EXPECT_EQ(*p.title, "Hello Title");
}

TEST_F(MediaProbeTest, YtdlpRealErrorsMapToSpecCodes) {
  MediaProbeOptions o;
  o.ytdlp = "yt-dlp";
  expect_error([&] { probe_with(lax_policy(), o).probe("video_site", url("/status/404")); }, "video_unavailable_probe");
  Error busy =
      expect_error([&] { probe_with(lax_policy(), o).probe("video_site", url("/status/429")); }, "source_busy");
  EXPECT_GE(busy.extras().value("retry_after", 0), 1);
  EXPECT_LE(busy.extras().value("retry_after", 0), 300);
}

// ---- yt-dlp: a fake binary for the platform's messages ---------------------------------------------

TEST_F(MediaProbeTest, YtdlpStderrMapping) {
  struct Case {
    const char* stderr_text;
    const char* code;
    int status;
  };
  const Case cases[] = {
      {"ERROR: [youtube] dQw4w9WgXcQ: Private video. Sign in if you've been granted access to this video",
       "video_private", 400},
      {"ERROR: [youtube] abc: Join this channel to get access to members-only content like this video, and other "
       "exclusive perks.",
       "video_members_only", 400},
      {"ERROR: [youtube] abc: Sign in to confirm your age. This video may be inappropriate for some users.",
       "video_age_restricted", 400},
      {"ERROR: [youtube] abc: Video unavailable. This video has been removed by the uploader",
       "video_unavailable_probe", 400},
      {"ERROR: [youtube] abc: Video unavailable", "video_unavailable_probe", 400},
      {"ERROR: Unsupported URL: https://example.com/page", "video_unavailable_probe", 400},
      {"ERROR: [vimeo] 123: Unable to extract info section; please report this issue", "video_unavailable_probe", 400},
      {"ERROR: [tiktok] 1: This post does not exist", "video_unavailable_probe", 400},
      {"ERROR: [youtube] abc: Unable to download API page: HTTP Error 429: Too Many Requests", "source_busy", 503},
      {"ERROR: [youtube] abc: Sign in to confirm you\xE2\x80\x99re not a bot. Use --cookies", "source_busy", 503},
      {"ERROR: [youtube] abc: Unable to download webpage: ('Unable to connect to proxy', OSError('Tunnel connection "
       "failed: 403 Forbidden'))",
       "probe_proxy_connectivity", 503},
      {"ERROR: [youtube] abc: Unable to download webpage: HTTP Error 407: Proxy Authentication Required",
       "probe_proxy_auth_quota", 503},
      {"Traceback (most recent call last):\n  File \"/usr/bin/yt-dlp\", line 5\nModuleNotFoundError: No module named "
       "'yt_dlp'",
       "probe_runtime_misconfigured", 503},
  };
  for (const auto& c : cases) {
    write_file(g_bin / "stderr.txt", std::string(c.stderr_text) + "\n");
    Error e =
        expect_error([&] { probe_with(lax_policy(), fake_ytdlp_options()).probe("video_site", url("/v")); }, c.code);
    EXPECT_EQ(e.http_status(), c.status) << c.stderr_text;
    if (std::string(c.code) == "source_busy") {
      EXPECT_GE(e.extras().value("retry_after", 0), 1);
      EXPECT_LE(e.extras().value("retry_after", 0), 300);
    }
    EXPECT_EQ(classify_ytdlp_error(c.stderr_text), c.code);
  }
}

TEST_F(MediaProbeTest, YtdlpFoundOnPathAndGivenUrlAsOneArgument) {
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  ::setenv("PATH", (g_bin.string() + ":" + saved).c_str(), 1);
  write_file(g_bin / "stderr.txt", "ERROR: [youtube] x: Private video\n");
  // Shell metacharacters in the URL must reach yt-dlp verbatim, never a shell.
  const fs::path marker = g_root / "pwned";
  std::string u = url("/watch?v=1;$(touch${IFS}" + marker.string() + ")&x=`touch${IFS}" + marker.string() + "`");
  MediaProbeOptions o;
  o.ytdlp = "yt-dlp";
  expect_error([&] { probe_with(lax_policy(), o).probe("platform_url", u); }, "video_private");
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_FALSE(fs::exists(marker));
  std::string args = read_file(g_bin / "args.txt");
  EXPECT_EQ(args, "--dump-single-json\n--no-playlist\n--no-warnings\n--socket-timeout\n20\n--\n" + u + "\n");
}

TEST_F(MediaProbeTest, YtdlpMetadataGivesDurationWithoutDownload) {
  write_file(g_bin / "stdout.json", R"({"_type":"video","title":"A Talk","duration":123.5,"url":"http://10.0.0.1/x"})");
  auto r = probe_with(lax_policy(), fake_ytdlp_options()).probe("video_site", url("/watch?v=1"));
  EXPECT_DOUBLE_EQ(r.duration_seconds, 123.5);
  ASSERT_TRUE(r.title);
  EXPECT_EQ(*r.title, "A Talk");
  EXPECT_TRUE(r.local_path.empty());
  EXPECT_EQ(work_files(), 0u);
}

TEST_F(MediaProbeTest, YtdlpOddOutputs) {
  write_file(g_bin / "stdout.json", "null");
  expect_error([&] { probe_with(lax_policy(), fake_ytdlp_options()).probe("video_site", url("/v")); },
               "probe_runtime_misconfigured");
  write_file(g_bin / "stdout.json", R"({"_type":"playlist","title":"Channel","entries":[]})");
  expect_error([&] { probe_with(lax_policy(), fake_ytdlp_options()).probe("video_site", url("/v")); },
               "video_unavailable_probe");
  write_file(g_bin / "stdout.json", R"({"_type":"video","title":"Live","is_live":true})");
  expect_error([&] { probe_with(lax_policy(), fake_ytdlp_options()).probe("video_site", url("/v")); },
               "video_unavailable_probe");
  // A direct media URL in the metadata is fetched through the same policy.
  write_file(g_bin / "stdout.json",
             R"({"_type":"video","title":"T","url":"http://169.254.169.254/latest","protocol":"http"})");
  Error e = expect_error([&] { probe_with(lax_policy(), fake_ytdlp_options()).probe("video_site", url("/v")); },
                         "invalid_request");
  EXPECT_EQ(e.extras().value("field", ""), "url");
}

TEST_F(MediaProbeTest, YtdlpMissingOrHangingBinary) {
  MediaProbeOptions missing;
  missing.ytdlp = (g_root / "no-such-yt-dlp").string();
  Error m = expect_error([&] { probe_with(lax_policy(), missing).probe("video_site", url("/v")); },
                         "probe_runtime_misconfigured");
  EXPECT_EQ(m.http_status(), 503);

  write_file(g_bin / "sleep", "");
  MediaProbeOptions hang = fake_ytdlp_options();
  hang.ytdlp_timeout = std::chrono::seconds(1);
  auto t0 = std::chrono::steady_clock::now();
  Error t =
      expect_error([&] { probe_with(lax_policy(), hang).probe("video_site", url("/v")); }, "probe_proxy_connectivity");
  EXPECT_EQ(t.http_status(), 503);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST_F(MediaProbeTest, YtdlpBinaryByPath) {
  MediaProbeOptions o;
  o.ytdlp = (g_bin / "yt-dlp").string();
  write_file(g_bin / "stderr.txt", "ERROR: [youtube] x: Sign in to confirm your age\n");
  expect_error([&] { probe_with(lax_policy(), o).probe("video_site", url("/v")); }, "video_age_restricted");
}

// ---- HttpClient::post (what webhooks use) -----------------------------------------------------------

TEST_F(MediaProbeTest, HttpClientPost) {
  HttpClient client(lax_policy());
  auto r = client.post(url("/echo"), {{"Content-Type", "application/json"}, {"X-Service-Signature", "t=1,v1=ab"}},
                       R"({"event":"webhook.test"})", std::chrono::seconds(5));
  EXPECT_EQ(r.status, 200);
  Json body = Json::parse(r.body);
  EXPECT_EQ(body["body"], R"({"event":"webhook.test"})");
  EXPECT_EQ(body["signature"], "t=1,v1=ab");
  EXPECT_EQ(body["content_type"], "application/json");
  // Redirects are not followed for posts.
  EXPECT_EQ(client.post(url("/moved"), {}, "{}", std::chrono::seconds(5)).status, 302);
  try {
    client.post("http://127.0.0.1:" + std::to_string(closed_port()) + "/", {}, "{}", std::chrono::seconds(5));
    ADD_FAILURE() << "expected a network failure";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpError::Kind::kUnreachable);
  }
  Json before = server_counts();
  HttpClient strict{UrlPolicy{}};
  try {
    strict.post(url("/echo"), {}, "{}", std::chrono::seconds(5));
    ADD_FAILURE() << "expected a refusal";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpError::Kind::kRefused);
  }
  EXPECT_EQ(server_counts()["requests"].get<int>(), before["requests"].get<int>());
}

}  // namespace
}  // namespace scribe::media
