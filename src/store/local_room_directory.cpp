#include "store/room_directory.h"

namespace imago {

namespace {

// One process owns every room: there is nobody to lease against and nowhere to send commands.
class LocalRoomDirectory final : public RoomDirectory {
 public:
  void start(RoomDirectoryHandlers) override {}
  void stop() override {}
  Result<bool> claim(const RoomLease&) override { return true; }
  void release(const RoomLease&) override {}
  Result<std::vector<RemoteRoom>> remote_rooms(const std::string&, const std::optional<std::string>&,
                                               const std::optional<std::string>&) override {
    return std::vector<RemoteRoom>{};
  }
  Status send(const std::vector<RemoteRoom>& to, const std::string&, const std::string&) override {
    if (!to.empty()) return Status::Internal("a single node has no remote rooms");
    return Status::Ok();
  }
  std::string node_id() const override { return "local"; }
};

}  // namespace

std::unique_ptr<RoomDirectory> make_local_room_directory() {
  return std::make_unique<LocalRoomDirectory>();
}

}  // namespace imago
