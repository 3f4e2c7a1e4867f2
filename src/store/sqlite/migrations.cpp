#include "store/sqlite/migrations.h"

namespace imago::sqlite {

std::vector<Migration> all_migrations() {
  std::vector<Migration> out;
  // Add one line per subsystem, in version-range order (see migrations.h).
  for (auto& m : core_migrations()) out.push_back(m);
  for (auto& m : speech_migrations()) out.push_back(m);
  for (auto& m : agent_migrations()) out.push_back(m);
  for (auto& m : webhook_migrations()) out.push_back(m);
  for (auto& m : live_migrations()) out.push_back(m);
  for (auto& m : member_migrations()) out.push_back(m);
  return out;
}

}  // namespace imago::sqlite
