// The job queue on SQLite (the shared store of store/sql/).
#pragma once
#include <memory>

#include "store/job_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<JobStore> make_job_store(Db& db, Clock& clock);

}  // namespace imago::sqlite
