// The stores only a cluster has, on PostgreSQL (the table stores are store/sql/sql_stores.h):
// shared secrets and the room directory; blobs and rate limits are pg_blob_store.h and
// pg_rate_limiter.h.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/postgres/db.h"
#include "store/room_directory.h"
#include "store/secret_store.h"

namespace imago::pg {

// NOTIFY channel that wakes idle job workers on every node (payload: the lane).
inline constexpr const char* kJobsChannel = "imago_jobs";

std::unique_ptr<SecretStore> make_secret_store(Db& db);

// NOTIFY channel that wakes a node when a room command is written (payload: the command id).
inline constexpr const char* kRoomsChannel = "imago_rooms";
struct RoomDirectoryOptions {
  int64_t lease_us = 15'000'000;  // a room's lease lasts this long past its last renewal
  int64_t renew_us = 3'000'000;   // the owner renews its leases this often
  int64_t poll_us = 1'000'000;    // commands are read at least this often without a NOTIFY
};
std::unique_ptr<RoomDirectory> make_room_directory(Db& db, RoomDirectoryOptions options = {});

}  // namespace imago::pg
