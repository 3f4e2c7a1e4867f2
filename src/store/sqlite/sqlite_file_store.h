#pragma once
#include <memory>

#include "store/file_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<FileStore> make_file_store(Db& db, Clock& clock);

// Inside a write transaction (agent artifacts are registered with the outcome that made them).
void insert_file(Conn& c, const FileRecord& f);
// Deletes the agent's file records and returns their blob keys.
std::vector<std::string> delete_agent_files(Conn& c, const std::string& account_id,
                                            const std::string& agent_code);
// Deletes the given file records (replaced artifacts) and returns their blob keys.
std::vector<std::string> delete_files(Conn& c, const std::vector<std::string>& ids);

}  // namespace imago::sqlite
