#include "api/oauth/clients.h"

#include <stdexcept>
#include <variant>

#include "commands/oauth_commands.h"
#include "common/db.h"
#include "common/http_client.h"
#include "common/log.h"
#include "domain/limits.h"
#include "domain/oauth.h"
#include "domain/oauth_client.h"

namespace scribe::api::oauth {
namespace {

const db::Statement kClient{"oauth_clients.select",
                            "select kind, client_name, redirect_uris::text from oauth_clients "
                            "where client_id = $1 and deleted_at is null"};
const db::Statement kCachedDocument{"oauth_client_documents.select",
                                    "select document::text from oauth_client_documents "
                                    "where url = $1 and expires_at > now()"};
const db::Statement kStoreDocument{"oauth_client_documents.upsert",
                                   "insert into oauth_client_documents(url, document, fetched_at, expires_at) "
                                   "values ($1, $2::jsonb, now(), now() + make_interval(secs => $3)) "
                                   "on conflict (url) do update set document = excluded.document, "
                                   "fetched_at = excluded.fetched_at, expires_at = excluded.expires_at"};

Client console(const Services& services) {
  return {std::string(scribe::oauth::kConsoleClientId),
          "first_party",
          "scribe console",
          {scribe::oauth::console_redirect_uri(services.config.public_url)}};
}

std::optional<Client> stored_client(pqxx::connection& conn, const std::string& client_id) {
  pqxx::nontransaction txn(conn);
  auto rows = txn.exec_prepared(kClient.name, client_id);
  if (rows.empty()) return std::nullopt;
  const auto& r = rows[0];
  Client c{client_id, r[0].as<std::string>(), std::nullopt, {}};
  if (!r[1].is_null()) c.client_name = r[1].as<std::string>();
  for (const auto& u : Json::parse(r[2].as<std::string>())) c.redirect_uris.push_back(u.get<std::string>());
  return c;
}

std::string describe_fetch_failure(const std::exception& e) {
  if (const auto* h = dynamic_cast<const HttpError*>(&e)) {
    switch (h->kind()) {
      case HttpError::Kind::kRefused:
        return "its URL is not allowed (private, loopback or link-local addresses are not fetched)";
      case HttpError::Kind::kTooManyRedirects:
      case HttpError::Kind::kBadRedirect:
        return "it answered with a redirect (redirects are not followed)";
      case HttpError::Kind::kTooLarge:
        return "it is larger than " + std::to_string(limits::kOAuthCimdMaxBytes) + " bytes";
      case HttpError::Kind::kTimeout:
        return "it did not arrive within " + std::to_string(limits::kOAuthCimdTimeoutSeconds) + " seconds";
      default:
        return "it could not be fetched";
    }
  }
  return e.what();
}

}  // namespace

FetchedDocument fetch_metadata_document(const Services& services, const std::string& url) {
  UrlPolicy policy = services.outbound;
  if (services.config.oauth_cimd_allow_private) policy.allow_private = true;
  HttpClient client(policy, "scribe-oauth/1");
  DownloadLimits bounds;
  bounds.max_bytes = static_cast<int64_t>(limits::kOAuthCimdMaxBytes);
  bounds.total_timeout = std::chrono::seconds(limits::kOAuthCimdTimeoutSeconds);
  bounds.connect_timeout = std::chrono::seconds(limits::kOAuthCimdTimeoutSeconds);
  bounds.low_speed_window = std::chrono::seconds(limits::kOAuthCimdTimeoutSeconds);
  bounds.max_redirects = 0;  // the document is at its URL or nowhere
  const FetchResult res = client.get(url, bounds);
  if (res.status != 200) throw std::runtime_error("it answered HTTP " + std::to_string(res.status) + ", not 200");
  FetchedDocument out;
  try {
    out.document = Json::parse(res.body);
  } catch (const Json::exception&) {
    throw std::runtime_error("it is not JSON");
  }
  auto cc = res.headers.find("cache-control");
  out.cache_seconds = scribe::oauth::cache_seconds(cc == res.headers.end() ? "" : cc->second);
  return out;
}

ClientLookup client_for_authorization(Services& services, pqxx::connection& conn, const std::string& client_id) {
  if (client_id == scribe::oauth::kConsoleClientId) return {console(services), ""};
  if (!scribe::oauth::is_metadata_document_url(client_id)) {
    if (auto c = stored_client(conn, client_id); c && c->kind == "dcr") return {c, ""};
    return {std::nullopt, "This application is not registered with this service (unknown client_id)."};
  }
  Json document;
  {
    pqxx::nontransaction txn(conn);
    auto rows = txn.exec_prepared(kCachedDocument.name, client_id);
    if (!rows.empty()) document = Json::parse(rows[0][0].as<std::string>());
  }
  if (document.is_null()) {
    try {
      auto fetched = fetch_metadata_document(services, client_id);
      document = std::move(fetched.document);
      // Cached only once it is known to be a valid document (below).
      auto checked = scribe::oauth::check_metadata_document(document, client_id);
      if (auto* err = std::get_if<scribe::oauth::MetadataError>(&checked))
        return {std::nullopt, "The application's client metadata document is not valid: " + err->description + "."};
      pqxx::nontransaction txn(conn);
      txn.exec_prepared(kStoreDocument.name, client_id, document.dump(), fetched.cache_seconds);
    } catch (const std::exception& e) {
      log::info("oauth client metadata document refused", {{"client_id", client_id}, {"error", e.what()}});
      return {std::nullopt,
              "The application's client metadata document could not be used: " + describe_fetch_failure(e) + "."};
    }
  }
  auto checked = scribe::oauth::check_metadata_document(document, client_id);
  if (auto* err = std::get_if<scribe::oauth::MetadataError>(&checked))
    return {std::nullopt, "The application's client metadata document is not valid: " + err->description + "."};
  const auto& meta = std::get<scribe::oauth::ClientMetadata>(checked);
  scribe::oauth::ClientRecord record{client_id, scribe::oauth::ClientKind::Cimd, meta.client_name, meta.redirect_uris,
                                     meta.application_type};
  commands::register_client(services.store, conn, record, {"oauth", ""});
  return {Client{client_id, "cimd", meta.client_name, meta.redirect_uris}, ""};
}

std::optional<Client> client_for_token(Services& services, pqxx::connection& conn, const std::string& client_id) {
  if (client_id == scribe::oauth::kConsoleClientId) return console(services);
  return stored_client(conn, client_id);
}

}  // namespace scribe::api::oauth
