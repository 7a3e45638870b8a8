// `scribe admin`: the dashboard operations the API itself does not expose.
// Every one is a command that appends events; none writes a table directly.
#include <iostream>

#include "api/dashboard/connected_apps.h"
#include "api/oauth/credentials.h"
#include "app/cli.h"
#include "commands/account_commands.h"
#include "commands/realtime_commands.h"
#include "common/db.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sql_time.h"
#include "projections/inline_projections.h"

namespace scribe::app {
namespace {

const char* kHelp =
    "usage: scribe admin <resource> <verb> [options]\n"
    "\n"
    "  account create --email E [--plan P] [--balance-usd X]   prints the new account id\n"
    "  account show --account ID\n"
    "  plan set --account ID --plan P           P: free (pay-as-you-go), starter, pro, business, enterprise\n"
    "  wallet topup --account ID --usd X [--reference TEXT]\n"
    "  key create --account ID [--name N] [--permission full|read_only|agent]\n"
    "             [--monthly-cap-usd X] [--expires-in-days D | --expires-at ISO8601]\n"
    "                                            prints the key once; only its SHA-256 is stored\n"
    "  key list --account ID\n"
    "  key revoke --key ID\n"
    "  set-password --email E                   reads the password (one line, at least 10 characters) from\n"
    "                                            stdin; the person signs in with it on the /oauth pages\n"
    "  apps list --email E                      the OAuth apps connected to the account (holding a grant)\n"
    "  apps revoke --email E --client C         disconnects app C: revokes its grants (its tokens stop\n"
    "                                            working at once on every process) and withdraws consent\n"
    "  realtime grant|revoke --key ID           realtime sessions for API key ID (internal beta)\n"
    "  realtime grant|revoke --account ID       realtime sessions for the account's console sign-in\n"
    "\n"
    "Add --json for machine-readable output.\n"
    "\noptions:\n";

const db::Statement kListKeys{"admin.list_keys",
                              "select id, name, key_prefix, permission, monthly_cap_micros, "
                              SCRIBE_SQL_ISO_S("expires_at") ", revoked_at is not null, " SCRIBE_SQL_ISO_S("created_at")
                              " from api_keys where account_id = $1 order by id"};
const db::Statement kAccountByEmail{"admin.account_by_email", "select id from accounts where lower(email) = lower($1)"};
const db::Statement kShowAccount{"admin.show_account",
                                 "select id, email, plan, balance_micros from accounts where id = $1"};

plans::Tier parse_plan(const std::string& s) {
  auto t = plans::parse(s);
  if (!t) throw std::invalid_argument("unknown plan '" + s + "'");
  return *t;
}

money::Micros parse_usd(const std::string& s, const std::string& option) {
  const auto v = whole_number(s);
  auto m = v ? money::from_usd(*v) : std::nullopt;
  if (!m) throw std::invalid_argument("--" + option + " must be a number of US dollars");
  return *m;
}

int64_t parse_id(const std::string& s, const std::string& option) {
  try {
    std::size_t used = 0;
    long long v = std::stoll(s, &used);
    if (used == s.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--" + option + " must be a positive integer");
}

int64_t account_by_email(pqxx::connection& conn, const std::string& email) {
  pqxx::nontransaction txn(conn);
  auto r = txn.exec_prepared(kAccountByEmail.name, email);
  if (r.empty()) throw Error::not_found("account with this email");
  return r[0][0].as<int64_t>();
}

void print(bool json, const Json& value, const std::string& text) {
  if (json) std::cout << value.dump() << "\n";
  else std::cout << text << "\n";
}

}  // namespace

int admin(int argc, char** argv) {
  auto args = parse(argc, argv, 2,
                    {"email", "plan", "balance-usd", "account", "usd", "reference", "name", "permission",
                     "monthly-cap-usd", "expires-in-days", "expires-at", "key", "client", "json"});
  // `set-password` is the one command of a single word.
  if (args.positional.size() == 1 && args.positional[0] == "set-password") args.positional.push_back("");
  if (args.help || args.positional.size() != 2) {
    std::cout << kHelp << kCommonHelp;
    return args.help ? 0 : 2;
  }
  const Settings settings = load_settings(args).settings;
  const Config& cfg = settings.server;
  configure_storage(settings);
  log::init(cfg.log_level == "info" ? "warn" : cfg.log_level);
  const eventstore::EventStore store(projections::inline_projections());
  auto conn = db::open_connection(cfg.database_url);
  const bool json = args.flag("json");
  const std::string what = args.positional[0] + " " + args.positional[1];
  const commands::Meta meta{"admin", ""};
  try {
    if (what == "account create") {
      auto plan = parse_plan(args.get("plan").value_or("free"));
      int64_t id = commands::open_account(store, *conn, args.require("email"), plan, meta);
      if (auto b = args.get("balance-usd"))
        if (auto m = parse_usd(*b, "balance-usd"); m > 0)
          commands::deposit(store, *conn, id, m, "initial balance", meta);
      print(json, {{"account_id", id}}, "account " + std::to_string(id));
    } else if (what == "account show") {
      pqxx::read_transaction txn(*conn);
      auto r = txn.exec_prepared(kShowAccount.name, parse_id(args.require("account"), "account"));
      if (r.empty()) throw Error::not_found("account");
      Json j = {{"account_id", r[0][0].as<int64_t>()},
                {"email", r[0][1].c_str()},
                {"plan", r[0][2].c_str()},
                {"wallet_balance_usd", money::to_usd(r[0][3].as<int64_t>())}};
      print(json, j, j.dump(2));
    } else if (what == "plan set") {
      commands::change_plan(store, *conn, parse_id(args.require("account"), "account"),
                            parse_plan(args.require("plan")), meta);
      print(json, {{"ok", true}}, "plan changed");
    } else if (what == "wallet topup") {
      auto amount = parse_usd(args.require("usd"), "usd");
      commands::deposit(store, *conn, parse_id(args.require("account"), "account"), amount,
                        args.get("reference").value_or("admin top-up"), meta);
      print(json, {{"ok", true}}, "wallet topped up");
    } else if (what == "key create") {
      auto permission = apikey::parse_permission(args.get("permission").value_or("full"));
      if (!permission) throw std::invalid_argument("--permission must be full, read_only or agent");
      std::optional<money::Micros> cap;
      if (auto c = args.get("monthly-cap-usd")) cap = parse_usd(*c, "monthly-cap-usd");
      std::optional<TimePoint> expires;
      if (auto d = args.get("expires-in-days")) {
        expires = now() + std::chrono::hours(24) * parse_id(*d, "expires-in-days");
      } else if (auto e = args.get("expires-at")) {
        expires = parse_iso8601(*e);
        if (!expires) throw std::invalid_argument("--expires-at must be an ISO 8601 timestamp");
      }
      auto created = commands::create_key(store, *conn, parse_id(args.require("account"), "account"),
                                          args.get("name").value_or("default"), *permission, cap, expires, meta);
      print(json, {{"key_id", created.key_id}, {"api_key", created.plaintext}},
            "key " + std::to_string(created.key_id) + ": " + created.plaintext +
                "\n(shown once; store it now, only its SHA-256 is kept)");
    } else if (what == "key list") {
      pqxx::read_transaction txn(*conn);
      Json list = Json::array();
      for (const auto& r : txn.exec_prepared(kListKeys.name, parse_id(args.require("account"), "account"))) {
        list.push_back({{"key_id", r[0].as<int64_t>()},
                        {"name", r[1].c_str()},
                        {"prefix", r[2].c_str()},
                        {"permission", r[3].c_str()},
                        {"monthly_cap_usd", r[4].is_null() ? Json(nullptr) : Json(money::to_usd(r[4].as<int64_t>()))},
                        {"expires_at", r[5].is_null() ? Json(nullptr) : Json(r[5].c_str())},
                        {"revoked", r[6].as<bool>()},
                        {"created_at", r[7].c_str()}});
      }
      print(json, list, list.dump(2));
    } else if (what == "key revoke") {
      commands::revoke_key(store, *conn, parse_id(args.require("key"), "key"), meta);
      print(json, {{"ok", true}}, "key revoked");
    } else if (what == "set-password ") {
      std::string password;
      if (!std::getline(std::cin, password)) throw std::invalid_argument("no password on stdin");
      if (!password.empty() && password.back() == '\r') password.pop_back();
      const int64_t account =
          api::oauth::set_password(*conn, args.require("email"), password, cfg.password_hash_cost_log2);
      print(json, {{"ok", true}, {"account_id", account}}, "password set for account " + std::to_string(account));
    } else if (what == "apps list") {
      Json apps = api::dashboard::list_connected_apps(*conn, account_by_email(*conn, args.require("email")));
      print(json, apps, apps.dump(2));
    } else if (what == "apps revoke") {
      const std::string client = args.require("client");
      api::dashboard::disconnect_app(store, *conn, account_by_email(*conn, args.require("email")), client, meta);
      print(json, {{"ok", true}}, "app " + client + " disconnected");
    } else if (what == "realtime grant" || what == "realtime revoke") {
      // Per key, or the account's own flag for its console sign-in; decided
      // on the account stream (ApiKeyRealtimeGranted/Revoked, AccountRealtime*).
      const bool grant = args.positional[1] == "grant";
      std::optional<int64_t> key;
      int64_t account = 0;
      if (auto k = args.get("key")) {
        key = parse_id(*k, "key");
        auto owner = commands::account_of_key(*conn, *key);
        if (!owner) throw Error::not_found("API key");
        account = *owner;
      } else {
        account = parse_id(args.require("account"), "account");
      }
      const bool changed = commands::set_realtime_access(store, *conn, account, key, grant, meta);
      print(json, {{"ok", true}, {"changed", changed}},
            std::string("realtime ") + (grant ? "granted" : "revoked") + (changed ? "" : " (unchanged)"));
    } else {
      throw std::invalid_argument("unknown admin command '" + what + "'");
    }
  } catch (const Error& err) {
    if (json) std::cout << Json{{"error", {{"code", err.code()}, {"message", err.message()}}}}.dump() << "\n";
    std::cerr << "scribe admin: " << err.code() << ": " << err.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace scribe::app
