// `imagod serve`: builds every service from the configuration, serves HTTP until SIGTERM/SIGINT,
// then shuts down in order (stop accepting, finish requests, stop workers, close the database).
#pragma once
#include <memory>

#include "config/config.h"
#include "util/status.h"

namespace imago {

class App {
 public:
  static Result<std::unique_ptr<App>> create(Config config);
  ~App();
  // Serves until stopped; returns the process exit code.
  int run();

 private:
  struct Parts;
  App() = default;
  std::unique_ptr<Parts> p_;
};

// Where the first start puts the first account's API secret (mode 0600, in the data directory)
// when stderr is not a terminal: never in the log.
inline constexpr const char* kBootstrapSecretFile = "bootstrap-api-secret";
// The owner's one-time dashboard link while the only account has no member (docs/dashboard.md).
inline constexpr const char* kFirstRunLinkFile = "first-run-link";

// Reads the admin token from the config (IMAGO_ADMIN_TOKEN) or <data_dir>/admin.token, creating
// the file (mode 0600, 256 random bits) when neither exists.
Status resolve_admin_token(const Config& config, std::string* token);

int serve_main(int argc, char** argv);

}  // namespace imago
