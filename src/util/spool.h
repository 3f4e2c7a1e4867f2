// Large request bodies on disk instead of in memory. A SpoolFile is a temporary file that has no
// name from the moment it exists (O_TMPFILE, or created and unlinked at once where the filesystem
// lacks it): whatever happens to the request (the client leaves mid-body, the handler fails, the
// process is killed) nothing is left behind once its descriptor closes.
//
// BodyBytes is how handlers see a body or a part of one: a view of bytes in memory (small bodies)
// or a byte range of a SpoolFile (large ones). Both are read in bounded pieces, so code written
// against BodyBytes never holds more than one piece of a 100 MB upload.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "util/status.h"

namespace imago {

class SpoolFile {
 public:
  // A new, empty, nameless file in `dir` (created if missing).
  static Result<std::unique_ptr<SpoolFile>> create(const std::string& dir);
  ~SpoolFile();
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  // Where it was created: more spool files for the same request go there too.
  const std::string& dir() const { return dir_; }
  Status append(const char* data, size_t n);
  int64_t size() const { return size_; }
  // Up to `cap` bytes from `offset` (fewer only at the end of the file).
  Result<size_t> read_at(int64_t offset, char* buf, size_t cap) const;

  // Spool files open in this process right now: tests check that an aborted upload closed its own.
  static int64_t open_count();

 private:
  SpoolFile(int fd, std::string dir) : fd_(fd), dir_(std::move(dir)) {}
  int fd_;
  std::string dir_;
  int64_t size_ = 0;
};

class BodyBytes {
 public:
  BodyBytes() = default;
  explicit BodyBytes(std::string_view mem) : mem_(mem), size_(static_cast<int64_t>(mem.size())) {}
  BodyBytes(std::shared_ptr<const SpoolFile> file, int64_t offset, int64_t size)
      : file_(std::move(file)), offset_(offset), size_(size) {}
  static BodyBytes whole(std::shared_ptr<const SpoolFile> file) {
    int64_t n = file->size();
    return BodyBytes(std::move(file), 0, n);
  }

  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool in_memory() const { return !file_; }
  // The bytes themselves; only for in_memory() ranges (empty otherwise).
  std::string_view view() const { return mem_; }

  // Up to `cap` bytes from `pos` (relative to this range); 0 at or past the end.
  Result<size_t> read(int64_t pos, char* buf, size_t cap) const;
  // At most `max` bytes from `pos` as a string (headers, small form fields, magic bytes).
  Result<std::string> text(int64_t pos, size_t max) const;
  // Position of `needle` (non-empty, at most 256 bytes) at or after `from`, or -1. A file range
  // is scanned in bounded windows.
  Result<int64_t> find(std::string_view needle, int64_t from) const;
  BodyBytes slice(int64_t pos, int64_t n) const;

 private:
  std::string_view mem_;
  std::shared_ptr<const SpoolFile> file_;
  int64_t offset_ = 0;
  int64_t size_ = 0;
};

}  // namespace imago
