#pragma once
#include <memory>

#include "store/sqlite/db.h"
#include "store/voice_store.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<VoiceStore> make_sqlite_voice_store(Db& db, Clock& clock);

}  // namespace imago::sqlite
