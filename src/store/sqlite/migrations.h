// Schema migrations for the SQLite store, in version order. Each subsystem owns a version range so
// parallel work never collides:
//   1-99 core (accounts, keys, ledger)   100-199 speech (voices)
//   200-299 agents, files, jobs, dynamics  300-399 webhooks   400-499 live sessions
//   500-599 members, dashboard sessions, CLI device grants
#pragma once
#include <vector>

#include "store/sqlite/db.h"

namespace imago::sqlite {

std::vector<Migration> all_migrations();

// Per-subsystem lists, each defined in that subsystem's sqlite store file.
std::vector<Migration> core_migrations();
std::vector<Migration> speech_migrations();
std::vector<Migration> agent_migrations();
std::vector<Migration> webhook_migrations();
std::vector<Migration> live_migrations();
std::vector<Migration> member_migrations();

}  // namespace imago::sqlite
