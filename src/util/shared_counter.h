// A 64-bit counter kept in a small file and mapped into every process that opens the file, so an
// increment by one process is seen by the others at once, and reading it costs no system call.
// It needs a local file system (as SQLite's WAL index does); contents are lost with the file.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "util/status.h"

namespace imago {

class SharedCounter {
 public:
  // Opens (creating if missing) the counter file at `path`. A file it creates gets the
  // permission bits of `like` when that file exists (e.g. the database the counter belongs to),
  // so every user who may write the one may write the other.
  static Result<std::unique_ptr<SharedCounter>> open(const std::string& path, const std::string& like = "");
  ~SharedCounter();
  SharedCounter(const SharedCounter&) = delete;
  SharedCounter& operator=(const SharedCounter&) = delete;

  // Acquire: what the incrementing process wrote before its increment is visible after a load
  // that sees the increment.
  uint64_t load() const;
  // Release, see load().
  void increment();

 private:
  explicit SharedCounter(uint64_t* word) : word_(word) {}
  uint64_t* word_;  // in a MAP_SHARED page
};

}  // namespace imago
