#include "api/realtime/session_view.h"

#include "domain/money.h"
#include "domain/pricing.h"

namespace scribe::api::realtime {

std::string websocket_url(const Config& config, const std::string& path) {
  std::string base = config.public_url;
  if (base.rfind("https://", 0) == 0) base = "wss://" + base.substr(8);
  else if (base.rfind("http://", 0) == 0) base = "ws://" + base.substr(7);
  return base + path;
}

Json ticket_view(const Config& config, const commands::SessionTicket& t) {
  return Json{{"session_id", t.session_id},
              {"transcription_id", t.transcription_id},
              {"status", "live"},
              {"cap_minutes", t.cap_minutes},
              {"ticket", t.ticket},
              {"ticket_expires_at", to_iso8601(t.ticket_expires_at)},
              {"websocket_url", websocket_url(config, "/api/v1/realtime/ws")},
              {"held_usd", money::to_usd(t.held)}};
}

}  // namespace scribe::api::realtime
