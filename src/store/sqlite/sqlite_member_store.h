#pragma once
#include <memory>

#include "store/device_grant_store.h"
#include "store/member_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<MemberStore> make_member_store(Db& db, Clock& clock);
std::unique_ptr<DeviceGrantStore> make_device_grant_store(Db& db);

}  // namespace imago::sqlite
