// Which node runs which live room, and how REST commands reach rooms on other nodes
// (docs/live-protocol.md, "Rooms across nodes"). src/live/ talks to this interface only, so it does
// not know whether it runs alone or in a cluster:
//   - single node (SQLite): every room is local; claims always succeed and nothing is remote;
//   - cluster (PostgreSQL): room ownership is a lease row the owning node renews; a command for a
//     room on another node is written as a durable row and pg_notify carries only its id; each
//     node reads the rows addressed to it by id, so it catches up after a reconnect.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago {

struct RoomLease {
  std::string account_id, room_id, agent_code, session_id;
  std::string node_url;  // where other nodes reach the owner (viewer relay); may be empty
  std::string details;   // the room's state as a JSON object, for listings on other nodes
};

// A room with a live lease on another node.
struct RemoteRoom {
  std::string node_id, session_id, room_id;
  std::string node_url;  // the owner's node URL, empty when it has none
  std::string agent_code;
  // The owner's last snapshot of the room's state (a JSON object, "{}" when it has none), written
  // at the claim and at every lease renewal, and when it was written (database clock, unix ms).
  std::string details;
  int64_t details_at_ms = 0;
};

// A session whose node stopped renewing its room's lease (docs/sessions.md, "When a node dies"):
// the lease row itself, or the record a claim of its room by another session left of it.
struct LapsedLease {
  std::string account_id, room_id, session_id, node_id;
  int64_t renewed_us = 0;  // its last renewal (database clock, unix microseconds)
};

// A command addressed to one session (kind: speak, add_context, interrupt, trigger_dynamics).
struct RoomCommand {
  int64_t id = 0;
  std::string session_id;
  std::string kind;
  std::string text;
};

struct RoomDirectoryHandlers {
  // A command for one of this node's sessions (called from the directory's own thread).
  std::function<void(const RoomCommand&)> command;
  // This node no longer holds the lease of `session_id` (it expired and another node took the
  // room, or the row is gone): the session must end.
  std::function<void(const std::string& session_id)> lease_lost;
  // The state of this node's running rooms (session id -> JSON object), published with each lease
  // renewal so other nodes can list them (GET /v1/rooms). Called from the directory's thread.
  std::function<std::map<std::string, std::string>()> details;
};

class RoomDirectory {
 public:
  virtual ~RoomDirectory() = default;
  // Starts delivering commands and renewing leases. Call once, before claim().
  virtual void start(RoomDirectoryHandlers handlers) = 0;
  // Stops the directory's threads; no handler runs after it returns.
  virtual void stop() = 0;
  // This node starts the room: true when it now owns (account, room) (a lease it renews until
  // release()), false when another node holds a live lease on it. With `max_account_rooms` > 0,
  // kRateLimited when the account already holds that many live leases on other rooms (on every
  // node together): the count and the claim are one atomic step, so concurrent claims for one
  // account never pass it.
  virtual Result<bool> claim(const RoomLease& lease, int max_account_rooms = 0) = 0;
  // The session ended on this node: its lease goes at once.
  virtual void release(const RoomLease& lease) = 0;
  // Rooms of the account (optionally only those running `agent_code`, optionally only `room_id`)
  // with a live lease on another node.
  virtual Result<std::vector<RemoteRoom>> remote_rooms(const std::string& account_id,
                                                       const std::optional<std::string>& agent_code,
                                                       const std::optional<std::string>& room_id) = 0;
  // Writes one durable command per room and wakes the owning nodes.
  virtual Status send(const std::vector<RemoteRoom>& to, const std::string& kind,
                      const std::string& text) = 0;
  // Sessions of other nodes whose lease expired and was last renewed more than `grace_us` ago,
  // both measured on the database's clock (so the nodes' clocks may disagree), at most `limit`.
  // Empty on a single node: its own journal ends its sessions (recover()).
  virtual Result<std::vector<LapsedLease>> lapsed(int64_t grace_us, int limit) = 0;
  // The sweep is done with `l` (its session ended, by it or before): its record goes, unless the
  // lease was renewed since (then its node lives, and the lease stays its).
  virtual void forget(const LapsedLease& l) = 0;
  // This node's id in the directory ("local" on a single node).
  virtual std::string node_id() const = 0;
};

// The refusal of a claim past max_account_rooms (kRateLimited), the same on every directory.
Status account_limit_status(int max_account_rooms);

// The single-node directory: every room is this node's; it counts the leases it holds per account
// for max_account_rooms.
std::unique_ptr<RoomDirectory> make_local_room_directory();

}  // namespace imago
