// This node's own list of the sessions it runs (docs/sessions.md, "When a node dies"): one small
// JSON file per session in a local directory, written when the session starts, touched while it
// runs, removed once its end (and its recording's upload) reached the database. A node killed
// with sessions running leaves these files behind; when it starts again, Rooms::recover() ends
// those sessions with reason `shutdown` at the time the file was last touched and uploads what
// their recorders had flushed. Single-process by design: the directory belongs to one node.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "store/session_store.h"

namespace imago::live {

class SessionJournal {
 public:
  explicit SessionJournal(std::string dir);  // empty: keeps nothing

  bool enabled() const { return !dir_.empty(); }
  // Writes the session's file (atomically: a crash mid-write leaves no half file). Best effort:
  // a failure is logged, the session runs on.
  void opened(const SessionRecord& s);
  // The session is still alive now: the file's modification time is its last sign of life.
  void alive(const std::string& session_id);
  void closed(const std::string& session_id);

  struct Leftover {
    SessionRecord record;
    int64_t last_alive_us = 0;  // Unix microseconds
  };
  // The files left behind (unreadable ones are removed and logged).
  std::vector<Leftover> leftovers() const;

 private:
  std::string path_of(const std::string& session_id) const;
  std::string dir_;
};

}  // namespace imago::live
