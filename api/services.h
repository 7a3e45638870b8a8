#pragma once
#include <memory>

#include "api/authenticator.h"
#include "api/rate_limiter.h"
#include "common/config.h"
#include "common/db.h"

namespace scribe::api {

// The long-lived parts every handler may use. Built once by `scribe serve`.
struct Services {
  Config config;
  db::Pool& pool;
  RateLimiter limiter;
  Authenticator authenticator;
};

}  // namespace scribe::api
