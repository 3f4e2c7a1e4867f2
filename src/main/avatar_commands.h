// `imagod imx ...` and `imagod render ...` subcommands. argv holds the words after the
// subcommand (argv[0] is the first argument, e.g. "info"). Return a process exit code.
#pragma once

namespace imago {

int imx_main(int argc, char** argv);
int render_main(int argc, char** argv);

}  // namespace imago
