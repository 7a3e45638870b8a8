// GET /docs/errors: the page every error envelope's doc_url points into
// ({public_url}/docs/errors#<code>). One section per code of the spec's
// Errors table, rendered from common/error_codes.cpp so the page, the HTTP
// statuses and the envelope cannot drift apart. Public and static; built once.
#include <string>
#include <string_view>

#include "api/handlers/handlers.h"
#include "common/error_codes.h"
#include "common/text.h"

namespace scribe::api {
namespace {

std::string render_page() {
  std::string html =
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Scribe API errors</title>\n"
      "<style>body{font-family:sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
      "section{border-top:1px solid #ccc;padding:.5rem 0}code{background:#f4f4f4;padding:0 .2rem}</style>\n"
      "</head>\n<body>\n<h1>Scribe API errors</h1>\n"
      "<p>Every error answers with the envelope <code>{\"error\": {\"code\", \"message\", \"request_id\", "
      "\"doc_url\", ...}}</code>; <code>request_id</code> also arrives as the <code>X-Request-Id</code> header. "
      "<code>code</code> is stable; <code>message</code> is for humans. Each section below is one code.</p>\n";
  html += "<ul>\n";
  for (const auto& e : error_codes())
    html += "<li><a href=\"#" + html_escape(e.code) + "\">" + html_escape(e.code) + "</a> (" +
            std::to_string(e.status) + ")</li>\n";
  html += "</ul>\n";
  for (const auto& e : error_codes()) {
    html += "<section id=\"" + html_escape(e.code) + "\">\n<h2><code>" + html_escape(e.code) + "</code></h2>\n";
    html += "<p><strong>HTTP status:</strong> " + std::to_string(e.status) + "</p>\n";
    html += "<p><strong>Meaning:</strong> " + html_escape(e.meaning) + "</p>\n";
    html += "<p><strong>What to do:</strong> " + html_escape(e.what_to_do) + "</p>\n</section>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace

Response ErrorDocsHandler::handle(RequestContext&) {
  static const std::string page = render_page();
  Response r;
  r.content_type = "text/html; charset=utf-8";
  r.body = page;
  return r;
}

}  // namespace scribe::api
