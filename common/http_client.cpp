#include "common/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>

#include "common/text.h"

namespace scribe {

// State of one request/response exchange.
struct HttpExchange {
  long status = 0;
  std::map<std::string, std::string> headers;
  std::FILE* file = nullptr;   // where a 2xx body goes; null: keep it in `body`
  bool keep_2xx_body = false;  // a 2xx body goes to `body`, up to max_bytes (HttpClient::get)
  int64_t max_bytes = INT64_MAX;
  int64_t written = 0;
  std::string body;
  bool too_large = false;
  bool io_error = false;
  bool stopped_early = false;  // we stopped reading a body we do not need
};

namespace {

constexpr std::size_t kBodyCap = 64 * 1024;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_header(char* data, size_t size, size_t n, void* userp) {
  auto* ex = static_cast<HttpExchange*>(userp);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new (possibly interim) response
    ex->headers.clear();
    auto sp = line.find(' ');
    if (sp != std::string::npos) ex->status = std::strtol(line.c_str() + sp + 1, nullptr, 10);
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    const std::string_view field = line;
    ex->headers[to_lower(trim(field.substr(0, colon)))] = trim(field.substr(colon + 1));
  }
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* userp) {
  auto* ex = static_cast<HttpExchange*>(userp);
  size_t len = size * n;
  bool success = ex->status >= 200 && ex->status < 300;
  if (ex->file && success) {
    if (ex->written + static_cast<int64_t>(len) > ex->max_bytes) {
      ex->too_large = true;
      return 0;
    }
    if (std::fwrite(data, 1, len, ex->file) != len) {
      ex->io_error = true;
      return 0;
    }
    ex->written += static_cast<int64_t>(len);
    return len;
  }
  if (ex->keep_2xx_body && success) {
    if (static_cast<int64_t>(ex->body.size() + len) > ex->max_bytes) {
      ex->too_large = true;
      return 0;
    }
    ex->body.append(data, len);
    return len;
  }
  // Redirect and error bodies, and post responses: keep the start, stop reading after.
  if (ex->body.size() + len > kBodyCap) {
    ex->body.append(data, kBodyCap - ex->body.size());
    ex->stopped_early = true;
    return 0;
  }
  ex->body.append(data, len);
  return len;
}

struct CurlDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

std::unique_ptr<CURL, CurlDeleter> new_handle(const ParsedUrl& url, const std::string& user_agent,
                                              const std::string& ca_file, CurlConnectGuard& guard, HttpExchange& ex,
                                              char* errbuf) {
  global_init();
  std::unique_ptr<CURL, CurlDeleter> h(curl_easy_init());
  if (!h) throw HttpError(HttpError::Kind::kLocalIo, "could not create an HTTP handle");
  CURL* c = h.get();
  std::string u = url.to_string();
  curl_easy_setopt(c, CURLOPT_URL, u.c_str());  // libcurl copies strings
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROXY, "");  // never a proxy from the environment
  curl_easy_setopt(c, CURLOPT_USERAGENT, user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
  if (!ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, ca_file.c_str());
  guard.attach(c);
  return h;
}

// Maps a failed transfer to an HttpError; returns normally when the failure
// was our own early stop of a body we did not need.
void check_result(CURLcode rc, const HttpExchange& ex, const CurlConnectGuard& guard, const std::string& url,
                  const char* errbuf) {
  if (rc == CURLE_OK) return;
  std::string detail = errbuf && *errbuf ? errbuf : curl_easy_strerror(rc);
  if (rc == CURLE_WRITE_ERROR) {
    if (ex.too_large) throw HttpError(HttpError::Kind::kTooLarge, "response body exceeds the size limit");
    if (ex.io_error) throw HttpError(HttpError::Kind::kLocalIo, "could not write the downloaded file");
    if (ex.stopped_early) return;
  }
  if (rc == CURLE_FILESIZE_EXCEEDED) {
    if (ex.status >= 200 && ex.status < 300) {
      throw HttpError(HttpError::Kind::kTooLarge, "response body exceeds the size limit");
    }
    return;  // an oversized error body: the status is what matters
  }
  if (guard.refused()) {
    throw HttpError(HttpError::Kind::kRefused,
                    "connection to non-public address " + guard.refused_address() + " refused");
  }
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      throw HttpError(HttpError::Kind::kTimeout, url + ": " + detail);
    case CURLE_UNSUPPORTED_PROTOCOL:
      throw HttpError(HttpError::Kind::kRefused, url + ": " + detail);
    default:
      throw HttpError(HttpError::Kind::kUnreachable, url + ": " + detail);
  }
}

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// A policy refusal; a name that does not resolve is a network failure (the
// registration-time check already refused it), not a refusal.
HttpError refusal(const UrlViolation& v, const std::string& what) {
  if (v.kind == UrlViolation::Kind::kUnresolvable) return HttpError(HttpError::Kind::kUnreachable, what + v.reason);
  return HttpError(HttpError::Kind::kRefused, what + v.reason);
}

}  // namespace

std::optional<int> parse_retry_after(const std::string& value_in) {
  const std::string value(trim(value_in));
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), ::isdigit)) {
    if (value.size() > 9) return INT_MAX;
    return std::stoi(value);
  }
  time_t t = curl_getdate(value.c_str(), nullptr);
  if (t == -1) return std::nullopt;
  long long diff = static_cast<long long>(t) - static_cast<long long>(std::time(nullptr));
  return static_cast<int>(std::clamp<long long>(diff, 0, INT_MAX));
}

HttpClient::HttpClient(UrlPolicy policy, std::string user_agent)
    : policy_(std::move(policy)), user_agent_(std::move(user_agent)) {}

DownloadResult HttpClient::download(const std::string& url, const std::string& path,
                                    const DownloadLimits& limits) const {
  // The destination file; removed again unless the download completes.
  struct OutFile {
    std::FILE* f = nullptr;
    std::string path;
    bool keep = false;
    ~OutFile() {
      if (f) std::fclose(f);
      if (!keep) std::remove(path.c_str());
    }
  } out{nullptr, path};
  ParsedUrl first;
  if (auto why = policy_.violation(url, &first)) throw refusal(*why, "url ");
  out.f = std::fopen(path.c_str(), "wb");
  if (!out.f) throw HttpError(HttpError::Kind::kLocalIo, "could not create " + path);

  HttpExchange ex;
  ex.file = out.f;
  DownloadResult result = get_following(first, limits, ex);
  std::FILE* f = out.f;
  out.f = nullptr;
  bool flushed = std::fflush(f) == 0;
  if (std::fclose(f) != 0 || !flushed) throw HttpError(HttpError::Kind::kLocalIo, "could not write " + path);
  out.keep = true;
  return result;
}

FetchResult HttpClient::get(const std::string& url, const DownloadLimits& limits) const {
  ParsedUrl first;
  if (auto why = policy_.violation(url, &first)) throw refusal(*why, "url ");
  HttpExchange ex;
  ex.keep_2xx_body = true;
  FetchResult result;
  static_cast<DownloadResult&>(result) = get_following(first, limits, ex);
  result.body = std::move(ex.body);
  result.headers = std::move(ex.headers);
  return result;
}

DownloadResult HttpClient::get_following(const ParsedUrl& first, const DownloadLimits& limits,
                                         HttpExchange& out) const {
  ParsedUrl current = first;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + limits.total_timeout;
  CurlConnectGuard guard(policy_);
  for (int hop = 0;; ++hop) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (remaining.count() <= 0) throw HttpError(HttpError::Kind::kTimeout, "download time limit reached");

    HttpExchange ex;
    ex.file = out.file;
    ex.keep_2xx_body = out.keep_2xx_body;
    ex.max_bytes = limits.max_bytes;
    char errbuf[CURL_ERROR_SIZE] = {0};
    guard.reset();
    auto h = new_handle(current, user_agent_, policy_.ca_file, guard, ex, errbuf);
    CURL* c = h.get();
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(remaining.count()));
    curl_easy_setopt(
        c, CURLOPT_CONNECTTIMEOUT_MS,
        static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(limits.connect_timeout).count()));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, limits.low_speed_bytes_per_second);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(limits.low_speed_window.count()));
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limits.max_bytes));

    CURLcode rc = curl_easy_perform(c);
    check_result(rc, ex, guard, current.to_string(), errbuf);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status == 0) status = ex.status;

    if (is_redirect(status)) {
      char* location = nullptr;
      curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location);
      if (!location || !*location) {
        throw HttpError(HttpError::Kind::kBadRedirect, "redirect without a Location header");
      }
      if (hop + 1 > limits.max_redirects) {
        throw HttpError(HttpError::Kind::kTooManyRedirects,
                        "more than " + std::to_string(limits.max_redirects) + " redirects");
      }
      std::string next = location;
      ParsedUrl parsed;
      if (auto why = policy_.violation(next, &parsed)) throw refusal(*why, "redirect target ");
      current = parsed;
      continue;
    }

    DownloadResult result;
    result.status = status;
    result.final_url = current.to_string();
    if (auto it = ex.headers.find("retry-after"); it != ex.headers.end()) {
      result.retry_after = parse_retry_after(it->second);
    }
    out.body = std::move(ex.body);
    out.headers = std::move(ex.headers);
    return result;
  }
}

HttpResponse HttpClient::post(const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers,
                              const std::string& body, std::chrono::milliseconds timeout) const {
  ParsedUrl parsed;
  if (auto why = policy_.violation(url, &parsed)) throw refusal(*why, "url ");
  HttpExchange ex;
  char errbuf[CURL_ERROR_SIZE] = {0};
  CurlConnectGuard guard(policy_);
  auto h = new_handle(parsed, user_agent_, policy_.ca_file, guard, ex, errbuf);
  CURL* c = h.get();
  std::unique_ptr<curl_slist, SlistDeleter> list;
  for (const auto& [name, value] : headers) {
    std::string line = name + ": " + value;
    curl_slist* next = curl_slist_append(list.get(), line.c_str());
    if (!next) throw HttpError(HttpError::Kind::kLocalIo, "out of memory");
    list.release();
    list.reset(next);
  }
  // No "Expect: 100-continue" round trip.
  curl_slist* next = curl_slist_append(list.get(), "Expect:");
  if (next) {
    list.release();
    list.reset(next);
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()));
  CURLcode rc = curl_easy_perform(c);
  check_result(rc, ex, guard, parsed.to_string(), errbuf);
  HttpResponse resp;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  if (resp.status == 0) resp.status = ex.status;
  resp.body = std::move(ex.body);
  return resp;
}

}  // namespace scribe
