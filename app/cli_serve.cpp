// `scribe serve` and `scribe worker`.
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "api/api_app.h"
#include "api/idempotency.h"
#include "api/upload_store.h"
#include "api/handlers/handlers.h"
#include "api/http_server.h"
#include "api/metrics_listener.h"
#include "api/openai/answer.h"
#include "api/oauth/handlers.h"
#include "api/oauth/token_verifier.h"
#include "api/wait_registry.h"
#include "domain/events.h"
#include "eventstore/event_store.h"
#include "eventstore/subscription.h"
#include "app/cli.h"
#include "common/object_store.h"
#include "common/url_policy.h"
#include "media/media_probe.h"
#include "domain/pipelines.h"
#include "speech/openai_asr_engine.h"
#include "speech/pocketsphinx_engine.h"
#include "speech/speech_profile.h"
#include "workers/realtime_sweeper.h"
#include "api/realtime/live_registry.h"
#include "workers/clip_worker.h"
#include "workers/webhook_dispatcher.h"
#include "workers/worker.h"
#include "common/log.h"
#include "domain/limits.h"
#include "eventstore/migrator.h"
#include "projections/inline_projections.h"
#include "projections/runner.h"
#include "projections/transcription_partials.h"

namespace scribe::app {
namespace {

const char* kServeHelp =
    "usage: scribe serve [options]\n"
    "\n"
    "Serves the HTTP API and runs the projectors, pipeline workers and webhook\n"
    "senders in one process. SIGTERM or SIGINT stops accepting, finishes in-flight\n"
    "requests, then exits.\n"
    "\n"
    "options:\n"
    "  --port-file PATH     write the port actually bound to PATH once listening\n"
    "  --metrics-port-file PATH  write the metrics port actually bound to PATH once listening\n"
    "  --no-projectors      do not run the asynchronous projectors in this process\n"
    "  --no-workers         do not run pipeline workers in this process\n"
    "  --no-migrate         do not apply pending migrations at start\n"
    "  --config FILE        settings file (NAME=value lines; env SCRIBE_CONFIG)\n"
    "\n"
    "Settings (flag, or the environment variable, or the file's NAME=value; a flag\n"
    "wins over the environment, which wins over the file):\n";

const char* kWorkerHelp =
    "usage: scribe worker [options]\n"
    "\n"
    "Runs the background roles without HTTP: the asynchronous projectors and the\n"
    "pipeline workers. Several workers may run against one database; each\n"
    "projection is advanced by one process at a time, and each job is claimed by\n"
    "one worker under a lease (a killed worker's job is taken again when its lease\n"
    "expires).\n"
    "\n"
    "options:\n"
    "  --no-projectors      do not run the asynchronous projectors\n"
    "  --no-migrate         do not apply pending migrations at start\n"
    "  and every setting's flag (see `scribe serve --help` or docs/configuration.md)\n";

// Blocks SIGINT/SIGTERM in every thread so that one thread can sigwait for them.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

std::vector<std::unique_ptr<projections::ProjectionRunner>> start_projectors(const Config& cfg) {
  std::vector<std::unique_ptr<projections::ProjectionRunner>> runners;
  for (auto* p : projections::all()) {
    if (p->is_inline()) continue;
    runners.push_back(std::make_unique<projections::ProjectionRunner>(cfg.database_url, *p));
    runners.back()->start();
  }
  return runners;
}

// Link sources: the URL policy and the media probe. The preview step (probe
// inside POST /transcriptions and /quotes) is bounded by the spec's 45 s; past
// that it is 503 internal_error with retry_after, nothing started or charged.
void wire_media(api::Services& services, const Settings& settings) {
  const UrlPolicy policy = settings.outbound;
  services.check_url = [policy](const std::string& url, const std::string& field) { policy.check(url, field); };
  services.outbound = policy;
  auto options = settings.media;
  const auto preview = std::chrono::seconds(limits::kPreviewStepTimeoutSeconds);
  options.download.total_timeout = std::min(options.download.total_timeout, preview);
  options.ytdlp_timeout = std::min(options.ytdlp_timeout, preview);
  options.ffprobe_timeout = std::min(options.ffprobe_timeout, preview);
  auto work_dir = std::filesystem::path(settings.work_dir) / "probe";
  std::filesystem::create_directories(work_dir);
  auto probe = std::make_shared<media::MediaProbe>(policy, work_dir.string(), options);
  services.probe_upload = [options](const std::string& upload_id) -> api::ProbedMedia {
    auto path = object_store().local_path("uploads/" + upload_id);
    if (!path) throw Error::invalid("upload_id", "upload '" + upload_id + "' has no stored file");
    auto result = media::probe_file(*path, "upload_id", options.ffprobe, options.ffprobe_timeout);
    return {result.duration_seconds, result.title};
  };
  services.probe = [probe, preview](const std::string& source, const std::string& url) -> api::ProbedMedia {
    auto started = std::chrono::steady_clock::now();
    try {
      auto result = probe->probe(source, url);
      // The pipeline fetches the media itself when the job runs; the preview
      // keeps only what it measured.
      if (!result.local_path.empty()) std::filesystem::remove(result.local_path);
      return {result.duration_seconds, result.title};
    } catch (const Error& err) {
      if (err.http_status() >= 500 && std::chrono::steady_clock::now() - started >= preview - std::chrono::seconds(1))
        throw Error("internal_error", "looking up the link took longer than 45 s; nothing was started or charged",
                    {{"retry_after", 30}}, 503);
      throw;
    }
  };
}

// The recognizers, one per pipeline: PocketSphinx for `standard`, and an
// operator's OpenAI-compatible server (SCRIBE_OPENAI_ASR_URL) as its own
// pipeline, which the catalogue then lists. Engines load their models lazily.
workers::Worker::Engines configure_engines(const Settings& settings) {
  workers::Worker::Engines engines;
  auto standard = std::make_shared<speech::PocketSphinxFactory>(settings.pocketsphinx);
  const auto* profile = speech::find_speech_profile(standard->options().profile);
  pipelines::set_standard_profile(profile->name, profile->description);
  engines[pipelines::kDefaultPipeline] = std::make_shared<speech::EnginePool>(standard);
  if (!settings.openai_asr.base_url.empty()) {
    pipelines::set_external_languages(settings.openai_asr.languages);
    engines[pipelines::kExternalPipeline] =
        std::make_shared<speech::EnginePool>(std::make_shared<speech::OpenAiAsrEngineFactory>(settings.openai_asr));
  }
  return engines;
}

// The pipeline workers, with the media fetcher's own (longer) download
// limits rather than the 45 s preview bound.
std::unique_ptr<workers::Worker> start_workers(const Settings& settings, const eventstore::EventStore& store,
                                               workers::Worker::Engines engines) {
  const auto& options = settings.worker;
  if (options.slots == 0) return nullptr;
  auto media_dir = std::filesystem::path(options.work_dir) / "media";
  std::filesystem::create_directories(media_dir);
  auto media = std::make_shared<media::MediaProbe>(settings.outbound, media_dir.string(), settings.media);
  auto worker =
      std::make_unique<workers::Worker>(settings.server.database_url, store, std::move(engines), media, options);
  worker->start();
  return worker;
}

std::unique_ptr<workers::ClipWorker> start_clip_workers(const Settings& settings, const eventstore::EventStore& store) {
  const auto& options = settings.worker;
  if (options.clip_slots == 0) return nullptr;
  auto media_dir = std::filesystem::path(options.work_dir) / "media";
  std::filesystem::create_directories(media_dir);
  auto media = std::make_shared<media::MediaProbe>(settings.outbound, media_dir.string(), settings.media);
  auto worker = std::make_unique<workers::ClipWorker>(settings.server.database_url, store, media, options);
  worker->start();
  return worker;
}

// Now and then deletes expired unfinished uploads with their staging files,
// the draft text of transcriptions finished 10 minutes before,
// and idempotency entries past their 24 h. Staging files live on this
// server's disk (uploads::staging_dir), so this runs where the HTTP API runs;
// several servers on one database only repeat each other's deletes.
class Housekeeping {
 public:
  // An unfinished upload is kept this long past its expiry, so a PATCH or PUT
  // that began just before the expiry can still finish writing.
  static constexpr int64_t kGraceSeconds = 3600;

  Housekeeping(std::string url, int interval_seconds) : url_(std::move(url)), interval_(interval_seconds) {
    if (interval_ > 0) thread_ = std::thread([this] { run(); });
  }
  ~Housekeeping() { stop(); }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::unique_ptr<pqxx::connection> conn;
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      try {
        if (!conn) conn = db::open_connection(url_);
        // Bounded per round, so one round cannot run for long.
        int uploads = 0, keys = 0, drafts = 0;
        for (int n = -1; n != 0 && uploads < 100'000;) uploads += n = api::uploads::sweep_expired(*conn, kGraceSeconds);
        for (int n = -1; n != 0 && keys < 1'000'000;) keys += n = api::Idempotency::purge_expired(*conn);
        for (int n = -1; n != 0 && drafts < 1'000'000;)
          drafts += n = projections::partials::sweep(*conn, draft::kKeepSecondsAfterFinish);
        // OAuth: expired codes, tokens, sessions and sign-in failures; clients unused for 30 days.
        static const eventstore::EventStore store(projections::inline_projections());
        const int oauth = api::oauth::housekeeping(store, *conn);
        if (uploads + keys + drafts + oauth > 0)
          log::info("housekeeping", {{"expired_uploads", uploads},
                                     {"expired_idempotency_keys", keys},
                                     {"draft_rows", drafts},
                                     {"oauth_rows", oauth}});
      } catch (const std::exception& e) {
        conn.reset();
        log::warn("housekeeping failed", {{"error", e.what()}});
      }
      lock.lock();
      cv_.wait_for(lock, std::chrono::seconds(interval_), [this] { return stop_; });
    }
  }

  std::string url_;
  int interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

void prepare_database(const Config& cfg, bool migrate) {
  if (!migrate) return;
  auto conn = db::open_connection(cfg.database_url, false);
  eventstore::migrate(*conn);
}

}  // namespace

int serve(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {"port-file", "metrics-port-file", "no-projectors", "no-workers", "no-migrate"});
  if (args.help) {
    std::cout << kServeHelp << settings_help();
    return 0;
  }
  const Settings settings = load_settings(args).settings;
  const Config& cfg = settings.server;
  std::string metrics_host;
  uint16_t metrics_port = 0;
  if (!metrics_disabled(cfg.metrics_addr)) parse_listen_address(cfg.metrics_addr, metrics_host, metrics_port);
  log::init(cfg.log_level);

  sigset_t signals = block_stop_signals();
  configure_storage(settings);
  prepare_database(cfg, !args.flag("no-migrate"));
  // Every append of this process (the handlers' commands, the workers'
  // outcomes) goes through this store, and so feeds the inline projections.
  const eventstore::EventStore store(projections::inline_projections());
  auto engines = configure_engines(settings);

  db::Pool pool(cfg.database_url, cfg.db_pool_size);
  api::WaitRegistry waits;
  // OAuth access tokens are checked against their rows on every request
  // (api/oauth/token_verifier.h), so a revocation holds on every process at once.
  api::oauth::TokenVerifier oauth_tokens;
  api::Services services{cfg, pool, store, api::RateLimiter(cfg.rate_limit_per_minute),
                         api::Authenticator(&oauth_tokens)};
  services.waits = &waits;
  wire_media(services, settings);
  api::ApiApp app(services, cfg.db_pool_size);
  // Long-polls are woken by the events themselves: this subscription starts at
  // the head of the log and notifies the waiters of each finished transcription.
  eventstore::GlobalPosition head;
  {
    auto conn = db::open_connection(cfg.database_url);
    pqxx::read_transaction txn(*conn);
    head = eventstore::EventStore::head(txn);
  }
  eventstore::Subscription wakeups(cfg.database_url, head, [&](const eventstore::RecordedEvent& e) {
    if (e.type == events::kTranscriptionCompleted || e.type == events::kTranscriptionFailed ||
        e.type == events::kTranscriptionDeleted)
      waits.notify(api::WaitHandler::key(e.data.at("transcription_id").get<int64_t>()));
    if (e.type == events::kClipCompleted || e.type == events::kClipFailed)
      waits.notify(api::GetClipHandler::key(e.data.at("clip_id").get<int64_t>()));
  });
  wakeups.start();
  // Streams of POST /v1/audio/transcriptions are woken by the draft text the
  // workers record, in this process or another.
  api::openai::DraftWakeups draft_wakeups(cfg.database_url, waits);
  api::register_routes(app);
  // Realtime streams connected to this process (api/realtime/): recognized on
  // threads of their own, with the offline pipeline's model and the fast
  // realtime profile (speech/streaming_recognizer.h).
  api::realtime::LiveSettings live;
  live.threads = cfg.realtime_threads;
  live.heartbeat_seconds = cfg.realtime_heartbeat_seconds;
  live.idle_seconds = cfg.realtime_idle_seconds;
  live.stale_seconds = cfg.realtime_stale_seconds;
  live.pace.max_ahead_seconds = cfg.realtime_max_ahead_seconds;
  live.pace.warn_ahead_seconds = cfg.realtime_max_ahead_seconds / 2.0;
  // Declared before the server, so destroyed after it: a stream's last steps
  // (its audio stored) run on the registry's threads, which drain when it goes.
  auto live_sessions = std::make_unique<api::realtime::LiveRegistry>(services, live, settings.pocketsphinx);
  services.realtime = live_sessions.get();
  api::HttpServer server(
      cfg.listen_host, cfg.listen_port, cfg.io_threads, limits::kMaxJsonBodyBytes,
      [&](api::Request req, api::Responder respond) { app.dispatch(std::move(req), std::move(respond)); },
      [&](const api::Request& req, const Error& err) { return app.render_error(req, err); });
  server.set_streaming(
      [&](const std::string& method, const std::string& target) { return app.streams(method, target); },
      [&](api::Request head, std::function<void(api::StreamPlan)> done) {
        app.prepare_stream(std::move(head), std::move(done));
      });
  // The bound port (with --port 0), for absolute-form targets naming the listener.
  services.config.listen_port = server.port();
  if (!cfg.public_url_given)
    services.config.public_url = "http://" + cfg.listen_host + ":" + std::to_string(server.port());

  std::unique_ptr<api::MetricsListener> metrics;
  if (!metrics_disabled(cfg.metrics_addr)) {
    try {
      metrics = std::make_unique<api::MetricsListener>(metrics_host, metrics_port, services);
    } catch (const std::exception& e) {
      // Stop rather than serve without the metrics the operator asked for.
      throw std::runtime_error("metrics listener " + cfg.metrics_addr + ": " + e.what() +
                               " (set SCRIBE_METRICS_ADDR or --metrics-addr, or off)");
    }
    metrics->start();
  }

  std::vector<std::unique_ptr<projections::ProjectionRunner>> runners;
  if (!args.flag("no-projectors")) runners = start_projectors(cfg);
  std::unique_ptr<workers::Worker> workers;
  std::unique_ptr<workers::ClipWorker> clip_workers;
  if (!args.flag("no-workers")) {
    workers = start_workers(settings, store, std::move(engines));
    clip_workers = start_clip_workers(settings, store);
  }
  auto hooks = settings.webhooks;
  hooks.public_url = services.config.public_url;  // the bound port's, with --port 0
  workers::WebhookDispatcher dispatcher(cfg.database_url, hooks, settings.outbound);
  dispatcher.start();
  Housekeeping housekeeping(cfg.database_url, settings.housekeeping_seconds);
  workers::RealtimeSweeper realtime_sweeper(cfg.database_url, cfg.realtime_stale_seconds);

  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    log::info("stopping", {{"signal", sig}});
    // Long-polls answer now (_timed_out: true) instead of holding the drain.
    waits.stop();
    // Realtime clients are told first (resumable), while their sockets are open.
    live_sessions->shut_down();
    server.shutdown();
  });
  // Before the API's port file, which callers wait for.
  if (auto v = args.get("metrics-port-file"); v && metrics) {
    std::ofstream(*v + ".tmp") << metrics->port() << "\n";
    std::rename((*v + ".tmp").c_str(), v->c_str());
  }
  if (auto v = args.get("port-file")) {
    std::ofstream(*v + ".tmp") << server.port() << "\n";
    std::rename((*v + ".tmp").c_str(), v->c_str());
  }
  log::info("listening", {{"host", cfg.listen_host},
                          {"port", server.port()},
                          {"metrics", metrics ? metrics_host + ":" + std::to_string(metrics->port()) : "off"},
                          {"pid", static_cast<int>(getpid())}});
  server.run();
  if (metrics) metrics->stop();
  if (clip_workers) clip_workers->request_stop();  // no new render while the jobs drain
  if (workers) workers->stop();
  if (clip_workers) clip_workers->stop();
  dispatcher.stop();
  housekeeping.stop();
  realtime_sweeper.stop();
  wakeups.stop();
  draft_wakeups.stop();
  for (auto& r : runners) r->stop();
  if (signal_thread.joinable()) {
    pthread_kill(signal_thread.native_handle(), SIGTERM);
    signal_thread.join();
  }
  log::info("stopped");
  return 0;
}

int worker(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {"no-migrate", "no-projectors"});
  if (args.help) {
    std::cout << kWorkerHelp;
    return 0;
  }
  const Settings settings = load_settings(args).settings;
  const Config& cfg = settings.server;
  log::init(cfg.log_level);
  sigset_t signals = block_stop_signals();
  configure_storage(settings);
  prepare_database(cfg, !args.flag("no-migrate"));
  const eventstore::EventStore store(projections::inline_projections());
  std::vector<std::unique_ptr<projections::ProjectionRunner>> runners;
  if (!args.flag("no-projectors")) runners = start_projectors(cfg);
  auto workers = start_workers(settings, store, configure_engines(settings));
  auto clip_workers = start_clip_workers(settings, store);
  workers::WebhookDispatcher dispatcher(cfg.database_url, settings.webhooks, settings.outbound);
  dispatcher.start();
  log::info("worker started",
            {{"projectors", runners.size()}, {"pipeline", workers != nullptr}, {"clips", clip_workers != nullptr}});
  int sig = 0;
  sigwait(&signals, &sig);
  log::info("stopping", {{"signal", sig}});
  if (clip_workers) clip_workers->request_stop();
  if (workers) workers->stop();
  if (clip_workers) clip_workers->stop();
  dispatcher.stop();
  for (auto& r : runners) r->stop();
  return 0;
}

int routes(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {});
  if (args.help) {
    std::cout << "usage: scribe routes\n\nPrints every METHOD and path pattern the server serves.\n";
    return 0;
  }
  const Config cfg = load_settings(args).settings.server;
  db::Pool pool(cfg.database_url, 1);  // never connects: nothing is dispatched
  const eventstore::EventStore store(projections::inline_projections());
  api::Services services{cfg, pool, store, api::RateLimiter(cfg.rate_limit_per_minute), api::Authenticator()};
  api::ApiApp app(services, 1);
  api::register_routes(app);
  for (const auto& r : app.router().routes()) std::cout << r.method << " " << r.pattern << "\n";
  return 0;
}

int migrate(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {});
  if (args.help) {
    std::cout << "usage: scribe migrate [options]\n\nApplies pending migrations (safe to run twice).\n\noptions:\n"
              << kCommonHelp;
    return 0;
  }
  const Config cfg = load_settings(args).settings.server;
  log::init(cfg.log_level);
  auto conn = db::open_connection(cfg.database_url, false);
  int n = eventstore::migrate(*conn);
  std::cout << "applied " << n << " migration(s)\n";
  return 0;
}

}  // namespace scribe::app
