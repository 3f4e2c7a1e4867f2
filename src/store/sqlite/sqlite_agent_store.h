#pragma once
#include <memory>

#include "store/agent_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<AgentStore> make_agent_store(Db& db, Clock& clock);

}  // namespace imago::sqlite
