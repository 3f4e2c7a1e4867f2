#pragma once
#include <memory>

#include "store/account_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<AccountStore> make_account_store(Db& db, Clock& clock);

}  // namespace imago::sqlite
