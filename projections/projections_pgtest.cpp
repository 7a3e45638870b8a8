// Projections against a real PostgreSQL: a rebuilt projection equals the live
// one (library and CLI), the wallet auditor notices a tampered read model, and
// a projector killed with SIGKILL mid-way resumes without losing or repeating
// an event.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "commands/account_commands.h"
#include "domain/events.h"
#include "eventstore/event_store.h"
#include "projections/projection.h"
#include "projections/runner.h"
#include "tests/pg_fixture.h"

extern char** environ;

namespace scribe::projections {
namespace {

using namespace std::chrono_literals;
using Snapshot = std::map<std::string, std::vector<std::string>>;

const commands::Meta kMeta{"admin", ""};

class ProjectionsTest : public testing::PgTest {
 public:
  static void SetUpTestSuite() {
    PgTest::SetUpTestSuite();
    // The scribe binary reads its database from the environment.
    ::setenv("SCRIBE_DATABASE_URL", testing::database_url().c_str(), 1);
  }
};

std::string scribe_bin() {
  if (const char* b = std::getenv("SCRIBE_BIN"); b && *b) return b;
  // pg_tests and scribe are built side by side.
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto candidate = self.parent_path() / "scribe";
    if (std::filesystem::exists(candidate)) return candidate.string();
  }
  return "";
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

CliResult run_cli(const std::string& args) {
  CliResult r;
  const std::string bin = scribe_bin();
  if (bin.empty()) {
    r.output = "SCRIBE_BIN is not set and no scribe binary sits beside pg_tests";
    return r;
  }
  FILE* p = ::popen((shell_quote(bin) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

Projection& wallet_ledger() {
  Projection* p = find("wallet_ledger");
  if (!p) throw std::runtime_error("no wallet_ledger projection");
  return *p;
}

int64_t query_int(pqxx::connection& conn, const std::string& sql) {
  pqxx::nontransaction txn(conn);
  auto r = txn.exec(sql);
  return r[0][0].is_null() ? 0 : r[0][0].as<int64_t>();
}

// Runs the projection until nothing is left behind its checkpoint (bounded).
void catch_up_fully(pqxx::connection& conn, Projection& p) {
  auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    ProjectionRunner::catch_up(conn, p, 500);
    {
      pqxx::read_transaction txn(conn);
      if (lag(txn, p.name()) == 0) return;
    }
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("projection did not catch up");
    std::this_thread::sleep_for(20ms);
  }
}

Snapshot snapshot(pqxx::connection& conn) {
  Snapshot s;
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(conn);
  for (auto* p : all()) {
    for (const auto& table : p->tables()) {
      auto& rows = s[table];
      for (const auto& r : txn.exec("select t::text from " + txn.quote_name(table) + " t order by 1"))
        rows.emplace_back(r[0].c_str());
    }
  }
  return s;
}

void expect_same(const Snapshot& before, const Snapshot& after, const std::string& what) {
  ASSERT_EQ(before.size(), after.size()) << what;
  for (const auto& [table, rows] : before) {
    auto it = after.find(table);
    ASSERT_NE(it, after.end()) << what << ": table " << table << " missing";
    const auto& other = it->second;
    EXPECT_EQ(rows.size(), other.size()) << what << ": " << table << " row count";
    for (std::size_t i = 0; i < std::min(rows.size(), other.size()); ++i) {
      if (rows[i] != other[i]) {
        ADD_FAILURE() << what << ": " << table << " differs at row " << i << "\n  live:    " << rows[i]
                      << "\n  rebuilt: " << other[i];
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------

TEST_F(ProjectionsTest, RebuiltProjectionsEqualTheLiveOnes) {
  auto conn = connect();
  using plans::Tier;
  const int64_t a1 = commands::open_account(store(), *conn, unique("rebuild-a") + "@example.com", Tier::Free, kMeta);
  const int64_t a2 = commands::open_account(store(), *conn, unique("rebuild-b") + "@Example.com", Tier::Starter, kMeta);
  commands::deposit(store(), *conn, a1, 2'500'000, "top-up 1", kMeta);
  commands::deposit(store(), *conn, a2, 300, "top-up 2", kMeta);
  commands::deposit(store(), *conn, a1, 1'000'000, "top-up 3", kMeta);
  auto k1 =
      commands::create_key(store(), *conn, a1, "full key", apikey::Permission::Full, std::nullopt, std::nullopt, kMeta);
  auto k2 = commands::create_key(store(), *conn, a1, "read key", apikey::Permission::ReadOnly, 5'000'000, std::nullopt,
                                 kMeta);
  auto k3 = commands::create_key(store(), *conn, a2, "agent key", apikey::Permission::Agent, 1'000'000,
                                 now() + std::chrono::hours(24), kMeta);
  commands::revoke_key(store(), *conn, k2.key_id, kMeta);
  commands::change_plan(store(), *conn, a1, Tier::Pro, kMeta);
  commands::change_plan(store(), *conn, a2, Tier::Business, kMeta);
  commands::change_plan(store(), *conn, a2, Tier::Free, kMeta);
  commands::deposit(store(), *conn, a2, 700, "top-up 4", kMeta);
  // Every asynchronous projection, not only the ledger: other tests of the
  // run leave events (transcriptions with callbacks, webhooks) that the
  // outbox must have projected before the live tables are compared.
  for (auto* p : all())
    if (!p->is_inline()) catch_up_fully(*conn, *p);

  // The live read models say what the commands did.
  const std::string ids = std::to_string(a1) + "," + std::to_string(a2);
  EXPECT_EQ(query_int(*conn, "select balance_micros from accounts where id = " + std::to_string(a1)), 3'500'000);
  EXPECT_EQ(query_int(*conn, "select balance_micros from accounts where id = " + std::to_string(a2)), 1'000);
  EXPECT_EQ(query_int(*conn, "select count(*) from accounts where id = " + std::to_string(a1) + " and plan = 'pro'"),
            1);
  EXPECT_EQ(query_int(*conn, "select count(*) from accounts where id = " + std::to_string(a2) + " and plan = 'free'"),
            1);
  EXPECT_EQ(query_int(*conn, "select count(*) from api_keys where account_id in (" + ids + ")"), 3);
  EXPECT_EQ(query_int(*conn, "select count(*) from api_keys where revoked_at is not null and id = " +
                                 std::to_string(k2.key_id)),
            1);
  EXPECT_EQ(query_int(*conn, "select count(*) from api_keys where revoked_at is null and id in (" +
                                 std::to_string(k1.key_id) + "," + std::to_string(k3.key_id) + ")"),
            2);
  EXPECT_EQ(query_int(*conn, "select count(*) from api_keys where id = " + std::to_string(k3.key_id) +
                                 " and permission = 'agent' and monthly_cap_micros = 1000000 and expires_at > now()"),
            1);
  EXPECT_EQ(query_int(*conn, "select count(*) from wallet_ledger where account_id in (" + ids + ")"), 4);
  EXPECT_EQ(query_int(*conn, "select balance_after_micros from wallet_ledger where account_id = " + std::to_string(a1) +
                                 " order by event_position desc limit 1"),
            3'500'000);

  const Snapshot live = snapshot(*conn);
  for (const char* table : {"accounts", "api_keys", "wallet_ledger"}) {
    ASSERT_TRUE(live.count(table)) << table << " is not owned by any projection";
    EXPECT_FALSE(live.at(table).empty()) << table;
  }

  // Library rebuild, one projection at a time.
  int64_t events_total = query_int(*conn, "select count(*) from events");
  const int64_t ledger_oid = query_int(*conn, "select 'wallet_ledger'::regclass::oid::bigint");
  for (auto* p : all()) {
    int64_t n = rebuild(*conn, *p);
    EXPECT_EQ(n, events_total) << p->name() << " replayed a different number of events";
  }
  expect_same(live, snapshot(*conn), "after projections::rebuild");
  {
    pqxx::read_transaction txn(*conn);
    EXPECT_EQ(lag(txn, "wallet_ledger"), 0);
  }
  // The ledger went through the bulk path: a new table was swapped in, with
  // the old one's indexes under their old names, and no shadow table is left.
  EXPECT_NE(query_int(*conn, "select 'wallet_ledger'::regclass::oid::bigint"), ledger_oid);
  EXPECT_EQ(query_int(*conn,
                      "select count(*) from pg_indexes where tablename = 'wallet_ledger' and indexname in "
                      "('wallet_ledger_pkey', 'wallet_ledger_account')"),
            2);
  EXPECT_EQ(query_int(*conn, "select count(*) from pg_indexes where tablename = 'wallet_ledger'"), 2);
  EXPECT_EQ(query_int(*conn,
                      "select count(*) from pg_constraint where conrelid = 'wallet_ledger'::regclass "
                      "and contype = 'p' and conname = 'wallet_ledger_pkey'"),
            1);
  EXPECT_EQ(query_int(*conn, "select count(*) from pg_class where relname like 'wallet\\_ledger\\_\\_rebuild%'"), 0);
  // The checkpoint it set lets the live runner continue on top of it.
  commands::deposit(store(), *conn, a1, 5, "top-up after the rebuild", kMeta);
  for (auto* p : all())
    if (!p->is_inline()) catch_up_fully(*conn, *p);
  EXPECT_EQ(query_int(*conn, "select balance_after_micros from wallet_ledger where account_id = " + std::to_string(a1) +
                                 " order by event_position desc limit 1"),
            3'500'005);
  const Snapshot live_after = snapshot(*conn);
  for (auto* p : all()) rebuild(*conn, *p);
  expect_same(live_after, snapshot(*conn), "after a second projections::rebuild");

  // Operator rebuild through the CLI.
  auto cli = run_cli("projections rebuild all");
  EXPECT_EQ(cli.exit_code, 0) << cli.output;
  for (auto* p : all()) EXPECT_NE(cli.output.find("rebuilt " + p->name() + ":"), std::string::npos) << cli.output;
  expect_same(live_after, snapshot(*conn), "after 'scribe projections rebuild all'");

  auto bad = run_cli("projections rebuild no_such_projection");
  EXPECT_NE(bad.exit_code, 0) << bad.output;
}

TEST_F(ProjectionsTest, AuditDetectsATamperedReadModel) {
  auto conn = connect();
  const int64_t a =
      commands::open_account(store(), *conn, unique("audit-a") + "@example.com", plans::Tier::Free, kMeta);
  const int64_t b =
      commands::open_account(store(), *conn, unique("audit-b") + "@example.com", plans::Tier::Free, kMeta);
  commands::deposit(store(), *conn, a, 1'000'000, "t1", kMeta);
  commands::deposit(store(), *conn, a, 234, "t2", kMeta);
  commands::deposit(store(), *conn, b, 50, "t3", kMeta);
  catch_up_fully(*conn, wallet_ledger());
  const std::string sa = std::to_string(a);
  const std::string sb = std::to_string(b);

  auto clean = run_cli("audit wallet --account " + sa);
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_NE(clean.output.find("audited 1 account(s): 0 difference(s)"), std::string::npos) << clean.output;

  // A read model that disagrees with the events.
  {
    pqxx::work txn(*conn);
    txn.exec("update accounts set balance_micros = balance_micros + 1 where id = " + sa);
    txn.commit();
  }
  auto tampered = run_cli("audit wallet --account " + sa);
  EXPECT_NE(tampered.exit_code, 0) << tampered.output;
  EXPECT_NE(tampered.output.find("account " + sa + ":"), std::string::npos) << tampered.output;
  EXPECT_NE(tampered.output.find("1000234"), std::string::npos) << tampered.output;
  EXPECT_NE(tampered.output.find("1000235"), std::string::npos) << tampered.output;
  // Another account is not affected.
  EXPECT_EQ(run_cli("audit wallet --account " + sb).exit_code, 0);

  {
    pqxx::work txn(*conn);
    txn.exec("update accounts set balance_micros = balance_micros - 1 where id = " + sa);
    txn.commit();
  }
  auto fixed = run_cli("audit wallet --account " + sa);
  EXPECT_EQ(fixed.exit_code, 0) << fixed.output;

  // A tampered ledger is noticed too, and undoing the change clears it.
  const std::string last_of_a = "(select max(event_position) from wallet_ledger where account_id = " + sa + ")";
  {
    pqxx::work txn(*conn);
    txn.exec("update wallet_ledger set balance_after_micros = balance_after_micros + 5 where event_position = " +
             last_of_a);
    txn.commit();
  }
  auto ledger = run_cli("audit wallet --account " + sa);
  EXPECT_NE(ledger.exit_code, 0) << ledger.output;
  EXPECT_NE(ledger.output.find("account " + sa + ": wallet_ledger"), std::string::npos) << ledger.output;
  {
    pqxx::work txn(*conn);
    txn.exec("update wallet_ledger set balance_after_micros = balance_after_micros - 5 where event_position = " +
             last_of_a);
    txn.commit();
  }
  auto restored = run_cli("audit wallet --account " + sa);
  EXPECT_EQ(restored.exit_code, 0) << restored.output;

  // A missing ledger row is a difference as well.
  {
    pqxx::work txn(*conn);
    txn.exec("create temp table audit_saved as select * from wallet_ledger where account_id = " + sb);
    txn.exec("delete from wallet_ledger where account_id = " + sb);
    txn.commit();
  }
  auto missing = run_cli("audit wallet --account " + sb);
  EXPECT_NE(missing.exit_code, 0) << missing.output;
  EXPECT_NE(missing.output.find("account " + sb + ": wallet_ledger has 0 entries"), std::string::npos)
      << missing.output;
  {
    pqxx::work txn(*conn);
    txn.exec("insert into wallet_ledger select * from audit_saved");
    txn.exec("drop table audit_saved");
    txn.commit();
  }
  EXPECT_EQ(run_cli("audit wallet --account " + sb).exit_code, 0);
}

// ---------------------------------------------------------------------------
// SIGKILL in the middle of projecting

class Worker {
 public:
  explicit Worker(const std::string& log_path) {
    const std::string bin = scribe_bin();
    if (bin.empty()) throw std::runtime_error("SCRIBE_BIN is not set");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> args = {bin, "worker", "--no-migrate"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = posix_spawn(&pid_, bin.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("posix_spawn failed: " + std::to_string(rc));
  }
  ~Worker() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
    }
  }
  bool exited() {
    int status;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      status_ = status;
      return true;
    }
    return pid_ <= 0;
  }
  // Sends the signal and reaps the process; returns its wait status.
  int signal_and_wait(int sig) {
    if (pid_ <= 0) return status_;
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    status_ = status;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

std::string file_text(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  return out.size() > 4000 ? out.substr(out.size() - 4000) : out;
}

TEST_F(ProjectionsTest, ProjectorKilledMidwayResumesExactlyOnce) {
  auto conn = connect();
  ASSERT_FALSE(scribe_bin().empty()) << "set SCRIBE_BIN to the scribe binary";
  catch_up_fully(*conn, wallet_ledger());  // only this test's events will be behind

  constexpr int kAccounts = 3;
  constexpr int kTotal = 30'000;
  constexpr int kBatch = 1'000;
  std::vector<int64_t> accounts;
  for (int i = 0; i < kAccounts; ++i)
    accounts.push_back(commands::open_account(store(), *conn, unique("kill-" + std::to_string(i)) + "@example.com",
                                              plans::Tier::Free, kMeta));
  std::string ids;
  for (auto id : accounts) ids += (ids.empty() ? "" : ",") + std::to_string(id);

  // The deposits, appended while no projector runs.
  std::map<int64_t, int64_t> sums;
  std::vector<int64_t> positions;
  for (int b = 0; b < kTotal / kBatch; ++b) {
    const int64_t account = accounts[static_cast<std::size_t>(b % kAccounts)];
    std::vector<eventstore::NewEvent> batch;
    for (int i = 0; i < kBatch; ++i) {
      const int64_t amount = 1 + (b * kBatch + i) % 997;
      sums[account] += amount;
      batch.push_back({events::kWalletDeposited,
                       Json{{"account_id", account}, {"amount_micros", amount}, {"reference", "bulk"}},
                       kMeta.to_json()});
    }
    pqxx::work txn(*conn);
    for (const auto& e : store().append(txn, account::stream_id(account), eventstore::ExpectedVersion::any(), batch))
      positions.push_back(e.global.position);
    txn.commit();
  }
  ASSERT_EQ(positions.size(), static_cast<std::size_t>(kTotal));
  {
    pqxx::read_transaction txn(*conn);
    ASSERT_GE(lag(txn, "wallet_ledger"), kTotal);
  }

  const std::string ledger_count = "select count(*) from wallet_ledger where account_id in (" + ids + ")";
  // Rows projected, and deposits at or before the checkpoint: one statement, one snapshot.
  const std::string consistency =
      "select (" + ledger_count +
      "), (select count(*) from events e, projection_checkpoints c where c.name = 'wallet_ledger' "
      "and e.type = 'WalletDeposited' and e.stream_id in (select 'account-' || x from unnest(array[" +
      ids + "]::bigint[]) x) and (e.tx, e.position) <= (c.last_tx, c.last_position))";
  const std::string log_path = "/tmp/scribe-kill-worker-" + std::to_string(::getpid()) + ".log";
  std::remove(log_path.c_str());

  // Kill the projector at three points: as soon as anything is projected, past a third, past two thirds.
  const int64_t thresholds[] = {1, kTotal / 3, 2 * kTotal / 3};
  int64_t previous = 0;
  for (int64_t threshold : thresholds) {
    Worker worker(log_path);
    auto deadline = std::chrono::steady_clock::now() + 30s;
    int64_t seen = 0;
    while ((seen = query_int(*conn, ledger_count)) < threshold) {
      ASSERT_FALSE(worker.exited()) << "worker exited early:\n" << file_text(log_path);
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "worker made no progress:\n" << file_text(log_path);
      std::this_thread::sleep_for(1ms);
    }
    int status = worker.signal_and_wait(SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
    EXPECT_EQ(WTERMSIG(status), SIGKILL);

    pqxx::result r;
    {
      pqxx::nontransaction txn(*conn);
      r = txn.exec(consistency);
    }
    const int64_t rows = r[0][0].as<int64_t>();
    const int64_t covered = r[0][1].as<int64_t>();
    EXPECT_EQ(rows, covered) << "ledger rows and checkpoint disagree after SIGKILL at " << threshold;
    EXPECT_GE(rows, threshold);
    EXPECT_GE(rows, previous);
    ASSERT_LT(rows, kTotal) << "the projector finished before it could be killed; raise kTotal";
    previous = rows;
  }

  // A fresh worker finishes the job and stops cleanly on SIGTERM.
  {
    Worker worker(log_path);
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (query_int(*conn, ledger_count) < kTotal) {
      ASSERT_FALSE(worker.exited()) << "worker exited early:\n" << file_text(log_path);
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "worker did not finish:\n" << file_text(log_path);
      std::this_thread::sleep_for(10ms);
    }
    int status = worker.signal_and_wait(SIGTERM);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << "\n" << file_text(log_path);
  }
  catch_up_fully(*conn, wallet_ledger());

  // Exactly once: one ledger row per deposit event, at that event's position.
  EXPECT_EQ(query_int(*conn, ledger_count), kTotal);
  {
    pqxx::read_transaction txn(*conn);
    std::vector<int64_t> projected;
    for (const auto& row :
         txn.exec("select event_position from wallet_ledger where account_id in (" + ids + ") order by 1"))
      projected.push_back(row[0].as<int64_t>());
    std::vector<int64_t> expected = positions;
    std::sort(expected.begin(), expected.end());
    EXPECT_TRUE(projected == expected) << projected.size() << " ledger positions vs " << expected.size() << " appended";
    // Every running balance is the sum of the amounts up to it.
    EXPECT_EQ(txn.exec("select count(*) from (select balance_after_micros, sum(amount_micros) over "
                       "(partition by account_id order by event_position) as running from wallet_ledger "
                       "where account_id in (" +
                       ids + ")) x where balance_after_micros <> running")[0][0]
                  .as<int64_t>(),
              0);
  }
  for (int64_t account : accounts) {
    const std::string id = std::to_string(account);
    EXPECT_EQ(query_int(*conn, "select balance_after_micros from wallet_ledger where account_id = " + id +
                                   " order by event_position desc limit 1"),
              sums[account])
        << "account " << id;
    EXPECT_EQ(query_int(*conn, "select count(*) from wallet_ledger where account_id = " + id), kTotal / kAccounts);
    EXPECT_EQ(query_int(*conn, "select balance_micros from accounts where id = " + id), sums[account]);
    auto audit = run_cli("audit wallet --account " + id);
    EXPECT_EQ(audit.exit_code, 0) << audit.output;
  }
  std::remove(log_path.c_str());
}

}  // namespace
}  // namespace scribe::projections
