#pragma once
#include <memory>

#include "store/sqlite/db.h"
#include "store/webhook_store.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<WebhookStore> make_webhook_store(Db& db, Clock& clock);

// Inside a write transaction: one delivery (and delivery job) per active subscription of the
// account that wants `event`. Returns the delivery ids.
std::vector<std::string> enqueue_webhook_event(Conn& c, const std::string& account_id,
                                               const std::string& event, const std::string& data_json,
                                               int64_t now_us);

}  // namespace imago::sqlite
