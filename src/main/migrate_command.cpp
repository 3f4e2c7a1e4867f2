#include "main/migrate_command.h"

#include <boost/json.hpp>
#include <cstdlib>
#include <iostream>

#include "config/config.h"
#include "store/stores.h"
#include "util/clock.h"
#include "util/random.h"

namespace imago {

namespace {

constexpr const char* kUsage =
    R"(Usage: imagod migrate [--database URL | --data-dir DIR] [--status] [--show-admin-token]

Applies every schema migration the database does not have yet, then prints each one as JSON
lines: {"version":..,"name":..,"applied":true|false,"applied_at":..}. Nodes also migrate when
they start (one at a time, under a database lock), so this is for doing it ahead of a rollout.

  --database URL       sqlite:PATH or postgres://... (IMAGO_DATABASE_URL; default sqlite:DATA_DIR/imago.db)
  --data-dir DIR       (IMAGO_DATA_DIR; default var)
  --status             list only; change nothing
  --show-admin-token   PostgreSQL: print the cluster's admin token (created if missing)
)";

}  // namespace

int migrate_main(int argc, char** argv) {
  Config cfg;
  if (const char* d = std::getenv("IMAGO_DATA_DIR"); d && *d) cfg.data_dir = d;
  bool status_only = false, show_token = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "imagod migrate: " << name << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--database")
      cfg.database_url = value("--database");
    else if (a == "--data-dir")
      cfg.data_dir = value("--data-dir");
    else if (a == "--status")
      status_only = true;
    else if (a == "--show-admin-token")
      show_token = true;
    else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "imagod migrate: unknown option '" << a << "'\n\n" << kUsage;
      return 2;
    }
  }
  if (cfg.database_url.empty()) {
    if (const char* d = std::getenv("IMAGO_DATABASE_URL"); d && *d) cfg.database_url = d;
  }
  finalize_config(cfg);
  auto list = migrations_of(cfg.database_url, !status_only);
  if (!list.ok()) {
    std::cerr << "imagod migrate: " << list.status().message() << "\n";
    return 1;
  }
  for (const auto& m : *list) {
    boost::json::object o{{"version", m.version}, {"name", m.name}, {"applied", m.applied}};
    if (m.applied) o["applied_at"] = m.applied_at;
    std::cout << boost::json::serialize(o) << "\n";
  }
  if (show_token) {
    auto stores = open_stores(cfg.database_url, SystemClock::instance());
    if (!stores.ok()) {
      std::cerr << "imagod migrate: " << stores.status().message() << "\n";
      return 1;
    }
    auto token = stores->shared_secret("admin_token", [] { return "imago_admin_" + random_base62(43); });
    if (!token.ok() || !token->has_value()) {
      std::cerr << "imagod migrate: --show-admin-token needs a PostgreSQL database (SQLite keeps it in "
                << cfg.data_dir << "/admin.token)\n";
      return 1;
    }
    std::cout << boost::json::serialize(boost::json::object{{"admin_token", **token}}) << "\n";
  }
  return 0;
}

}  // namespace imago
