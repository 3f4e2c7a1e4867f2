// `imagod worker`: a process that only runs jobs (no HTTP), sharing the database and blob
// directory with `imagod serve --no-workers` nodes. Takes the same flags as serve.
#pragma once

namespace imago {

int worker_main(int argc, char** argv);

}  // namespace imago
