// `imagod migrate`: applies pending schema migrations (or, with --status, only lists them) on the
// configured database, SQLite or PostgreSQL, under the same lock a starting node takes.
#pragma once

namespace imago {

int migrate_main(int argc, char** argv);

}  // namespace imago
