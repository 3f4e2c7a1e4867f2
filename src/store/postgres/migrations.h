// Schema migrations for the PostgreSQL store: the SQLite versions (store/sqlite/migrations.h) in
// PostgreSQL's dialect, plus 500-599 for cluster state (shared rate limits, blobs, secrets).
#pragma once
#include <vector>

#include "store/postgres/db.h"

namespace imago::pg {

std::vector<Migration> all_migrations();

}  // namespace imago::pg
