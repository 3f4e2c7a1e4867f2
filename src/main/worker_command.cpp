#include "main/worker_command.h"

#include <csignal>
#include <iostream>

#include "config/config.h"
#include "jobs/runtime.h"
#include "store/stores.h"
#include "util/log.h"

namespace imago {

int worker_main(int argc, char** argv) {
  Config cfg;
  bool help = false;
  Status st = parse_config(argc, argv, cfg, &help);
  if (help) {
    std::cout << "Usage: imagod worker [options]\n\n"
              << "Runs job workers (agent generation, dynamics, webhook deliveries, blob cleanup) without\n"
              << "serving HTTP. Point it at the same --data-dir / --database as the serving nodes;\n"
              << "--public-url must match theirs (it appears in webhook payloads).\n\n"
              << config_help();
    return 0;
  }
  if (!st.ok()) {
    std::cerr << "imagod worker: " << st.message() << "\n";
    return 2;
  }
  finalize_config(cfg);
  log::Level level;
  if (log::parse_level(cfg.log_level, &level)) log::set_level(level);

  // Block the stop signals before any thread starts so that only sigwait() sees them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  Clock& clock = SystemClock::instance();
  auto stores = open_stores(cfg.database_url, clock);
  if (!stores.ok()) {
    std::cerr << "imagod worker: " << stores.status().message() << "\n";
    return 1;
  }
  auto rt = jobs::Runtime::create(cfg, *stores, clock);
  if (!rt.ok()) {
    std::cerr << "imagod worker: " << rt.status().message() << "\n";
    return 1;
  }
  (*rt)->start_workers();
  log::info("worker_ready", {{"data_dir", cfg.data_dir}, {"job_workers", cfg.job_workers}});
  int sig = 0;
  sigwait(&set, &sig);
  log::info("worker_stopping", {{"signal", sig}});
  // Running jobs finish (generation takes seconds); a second signal is not awaited: kill -9
  // remains safe because leases expire and another worker takes the job over.
  (*rt)->stop_workers();
  log::info("worker_stopped", {});
  return 0;
}

}  // namespace imago
