#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "api/http_server.h"
#include "api/services.h"

namespace scribe::api {

// GET /metrics on a listener of its own (SCRIBE_METRICS_ADDR, loopback by
// default), not on the API port: the scrape shows routes, request counts,
// projection lag and pool use, which are for the operator, not for whoever
// can reach the API. One I/O thread; a scrape runs on it (it reads two
// numbers from the database), so a slow scrape never holds up API requests.
// Anything but GET or HEAD /metrics is 404 (405 for another method).
class MetricsListener {
 public:
  MetricsListener(const std::string& host, uint16_t port, Services& services);
  ~MetricsListener();
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  uint16_t port() const { return server_->port(); }
  // Starts serving on its own thread.
  void start();
  void stop();

 private:
  void handle(Request req, Responder respond);

  Services& services_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

}  // namespace scribe::api
