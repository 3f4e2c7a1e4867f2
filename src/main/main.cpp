// imagod: the Imago server and its tools. One binary, one subcommand per role.
#include <cstring>
#include <iostream>

#include "main/admin_command.h"
#include "main/app.h"
#include "main/migrate_command.h"
#ifdef IMAGO_HAVE_AVATAR
#include "main/avatar_commands.h"
#endif
#ifdef IMAGO_HAVE_JOBS
#include "main/worker_command.h"
#endif

namespace {

constexpr const char* kUsage = R"(imagod: self-hostable avatar agent service

Usage: imagod COMMAND [options]

Commands:
  serve      run the HTTP API (and, by default, job workers)   imagod serve --help
  worker     run job workers only (scale generation separately)
  admin      manage accounts, plans, credits and keys           imagod admin --help
  migrate    apply or list database schema migrations           imagod migrate --help
  imx        inspect, verify or build .imx avatar models        imagod imx --help
  render     render an .imx model to MP4                        imagod render --help
  version    print the version
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string cmd = argv[1];
  int sub_argc = argc - 2;
  char** sub_argv = argv + 2;
  if (cmd == "serve") return imago::serve_main(sub_argc, sub_argv);
  if (cmd == "admin") return imago::admin_main(sub_argc, sub_argv);
  if (cmd == "migrate") return imago::migrate_main(sub_argc, sub_argv);
#ifdef IMAGO_HAVE_JOBS
  if (cmd == "worker") return imago::worker_main(sub_argc, sub_argv);
#endif
#ifdef IMAGO_HAVE_AVATAR
  if (cmd == "imx") return imago::imx_main(sub_argc, sub_argv);
  if (cmd == "render") return imago::render_main(sub_argc, sub_argv);
#endif
  if (cmd == "version" || cmd == "--version") {
    std::cout << "imagod 0.1.0\n";
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "imagod: unknown command '" << cmd << "'\n\n" << kUsage;
  return 2;
}
