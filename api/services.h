#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "api/authenticator.h"
#include "api/principal.h"
#include "api/rate_limiter.h"
#include "common/config.h"
#include "api/http.h"
#include "common/db.h"
#include "common/error.h"
#include "common/url_policy.h"
#include "eventstore/event_store.h"

namespace scribe {
class ThreadPool;
}

namespace scribe::api {

// The long-lived parts every handler may use. Built once by `scribe serve`.
class WaitRegistry;
namespace realtime {
class LiveRegistry;
}

struct ProbedMedia {
  double duration_seconds = 0;
  std::optional<std::string> title;
};

struct Services {
  Config config;
  db::Pool& pool;
  // What commands append through: built with the inline projections, so a
  // handler reads its own writes from the read models.
  eventstore::EventStore store;
  RateLimiter limiter;
  Authenticator authenticator;
  // Refuses (400 invalid_request naming `field`) URLs the service must not
  // fetch or call: malformed, not http(s), or private/loopback/internal.
  std::function<void(const std::string& url, const std::string& field)> check_url{};
  // Duration and title of a link source (download or yt-dlp); throws the
  // spec's probe and video codes.
  std::function<ProbedMedia(const std::string& source, const std::string& url)> probe{};
  // Duration of a completed upload (ffprobe of the stored file); throws 400
  // invalid_request on upload_id when it is not playable media.
  std::function<ProbedMedia(const std::string& upload_id)> probe_upload{};
  WaitRegistry* waits = nullptr;
  // The realtime sessions connected to this process (api/realtime/); null
  // where the server runs none (tests of other routes).
  realtime::LiveRegistry* realtime = nullptr;
  ThreadPool* workers = nullptr;  // set by ApiApp
  // A REST request on a principal's behalf from inside the server (MCP tools;
  // ApiApp::call): `req` needs method, target, headers and body. The
  // responder runs exactly once, on this thread for synchronous routes.
  std::function<void(const Principal&, Request, Responder)> call{};
  // Renders an error in the envelope for handlers that answer asynchronously.
  std::function<Response(const std::string& request_id, const Error& err)> render_error{};
  // The operator's outbound URL policy (SCRIBE_ALLOW_PRIVATE_URLS, allowed
  // endpoints, CA file) for what the API layer fetches itself: OAuth client
  // metadata documents (api/oauth/clients.h).
  UrlPolicy outbound{};
};

}  // namespace scribe::api
