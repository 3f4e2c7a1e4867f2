// Blob storage for uploads, agent inputs, .imx models and gesture clips. Keys are relative paths
// of safe characters ("agents/acct_x/A12BCD3456/file_y.imx"); the filesystem implementation keeps them
// under <data_dir>/blobs, a PostgreSQL implementation (cluster mode) will keep them in the database.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "util/status.h"

namespace imago {

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  // Atomic: readers see either the old content or the whole new content.
  virtual Status put(std::string_view key, std::string_view data) = 0;
  // kNotFound when absent.
  virtual Result<std::string> get(std::string_view key) = 0;
  // Deleting a missing key succeeds (deletes are retried and must be idempotent).
  virtual Status remove(std::string_view key) = 0;
  virtual Result<bool> exists(std::string_view key) = 0;
  // Size in bytes; kNotFound when absent.
  virtual Result<int64_t> size(std::string_view key) = 0;
};

// Keys: 1-200 characters of [A-Za-z0-9._-] separated by '/', no empty, "." or ".." segments.
bool valid_blob_key(std::string_view key);

// Blobs as files under `root` (created if needed). Writes go to a temporary file in the same
// directory, are fsynced, then renamed over the destination.
Result<std::unique_ptr<BlobStore>> make_fs_blob_store(const std::string& root);

}  // namespace imago
