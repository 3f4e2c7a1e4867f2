// File records on SQLite (the shared store of store/sql/).
#pragma once
#include <memory>

#include "store/file_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<FileStore> make_file_store(Db& db, Clock& clock);

}  // namespace imago::sqlite
