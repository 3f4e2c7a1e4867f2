// Self-hosted session meters on SQLite (the shared store of store/sql/).
#pragma once
#include <memory>

#include "store/live_meter_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<LiveMeterStore> make_live_meter_store(Db& db, Clock& clock);

}  // namespace imago::sqlite
