#include <map>
#include <mutex>
#include <set>

#include "store/room_directory.h"

namespace imago {

namespace {

// One process owns every room: there is nobody to lease against and nowhere to send commands.
// It still counts the rooms each account holds, for the per-account share of claims.
class LocalRoomDirectory final : public RoomDirectory {
 public:
  void start(RoomDirectoryHandlers) override {}
  void stop() override {}
  Result<bool> claim(const RoomLease& l, int max_account_rooms) override {
    std::lock_guard lock(mu_);
    auto& held = held_[l.account_id];
    if (max_account_rooms > 0 && !held.count(l.room_id) &&
        static_cast<int>(held.size()) >= max_account_rooms) {
      return account_limit_status(max_account_rooms);
    }
    held[l.room_id] = l.session_id;
    return true;
  }
  void release(const RoomLease& l) override {
    std::lock_guard lock(mu_);
    auto it = held_.find(l.account_id);
    if (it == held_.end()) return;
    auto room = it->second.find(l.room_id);
    if (room != it->second.end() && room->second == l.session_id) it->second.erase(room);
    if (it->second.empty()) held_.erase(it);
  }
  Result<std::vector<RemoteRoom>> remote_rooms(const std::string&, const std::optional<std::string>&,
                                               const std::optional<std::string>&) override {
    return std::vector<RemoteRoom>{};
  }
  Status send(const std::vector<RemoteRoom>& to, const std::string&, const std::string&) override {
    if (!to.empty()) return Status::Internal("a single node has no remote rooms");
    return Status::Ok();
  }
  Result<std::vector<LapsedLease>> lapsed(int64_t, int) override { return std::vector<LapsedLease>{}; }
  void forget(const LapsedLease&) override {}
  std::string node_id() const override { return "local"; }

 private:
  std::mutex mu_;
  std::map<std::string, std::map<std::string, std::string>> held_;  // account -> room -> session
};

}  // namespace

Status account_limit_status(int max_account_rooms) {
  return Status(Code::kRateLimited, "This account already runs " + std::to_string(max_account_rooms) +
                                        " live sessions, its share of the live capacity");
}

std::unique_ptr<RoomDirectory> make_local_room_directory() {
  return std::make_unique<LocalRoomDirectory>();
}

}  // namespace imago
