// Webhooks on SQLite (the shared store of store/sql/).
#pragma once
#include <memory>

#include "store/sqlite/db.h"
#include "store/webhook_store.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<WebhookStore> make_webhook_store(Db& db, Clock& clock);

}  // namespace imago::sqlite
