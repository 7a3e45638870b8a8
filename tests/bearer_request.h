#pragma once
#include <string>

#include "api/http.h"

// A GET /api/v1/me request carrying `token` as its Bearer credential from
// `remote`: what the authenticator's unit and database tests feed it.
namespace scribe::testing {

inline api::Request bearer_request(const std::string& token, const std::string& remote = "192.0.2.1") {
  api::Request r;
  r.method = "GET";
  r.target = "/api/v1/me";
  r.remote = remote;
  r.headers["authorization"] = "Bearer " + token;
  return r;
}

}  // namespace scribe::testing
