// The ledger on SQLite (the shared store of store/sql/; apply_ledger_op, which other stores call
// inside their own transactions, is in store/sql/sql_stores.h).
#pragma once
#include <memory>

#include "store/ledger_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<LedgerStore> make_ledger_store(Db& db, Clock& clock);

}  // namespace imago::sqlite
