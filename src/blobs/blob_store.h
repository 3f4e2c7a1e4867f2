// Blob storage for uploads, agent inputs, .imx models, videos and gesture clips. Keys are relative
// paths of safe characters ("agents/acct_x/A12BCD3456/file_y.imx"); the filesystem implementation
// keeps them under <data_dir>/blobs, the PostgreSQL one (cluster mode) in the database as chunks.
//
// Large blobs are streamed: a write pulls its bytes from a BlobSource into a buffer the store owns
// (at most kBlobChunkBytes at a time), a read hands out ranges of at most one chunk. No
// implementation ever holds a whole 100 MB video in one buffer; put()/get() are the small-blob
// conveniences built on the same two operations.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "util/status.h"

namespace imago {

// The most a store asks a source for, or returns from one read, at once.
inline constexpr size_t kBlobChunkBytes = 1 << 20;

// Fills `buf` with up to `cap` bytes of the blob being written and returns how many it wrote;
// 0 means the end. An error aborts the write (nothing becomes visible).
using BlobSource = std::function<Result<size_t>(char* buf, size_t cap)>;

// Wraps bytes already in memory.
BlobSource blob_source_of(std::string_view data);

// An opened blob: one version of it, even when the key is overwritten meanwhile (the filesystem
// keeps the replaced file's inode open; PostgreSQL keeps the version's chunks until the overwrite
// deletes them, after which a read fails rather than mix two versions).
class BlobReader {
 public:
  virtual ~BlobReader() = default;
  virtual int64_t size() const = 0;
  // Up to `max` bytes (capped at kBlobChunkBytes) from `offset`; empty at or past the end.
  virtual Result<std::string> read(int64_t offset, size_t max) = 0;
};

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  // Writes the blob from `source`, chunk by chunk. Atomic: readers see either the old content or
  // the whole new content, never part of it; when the source or the store fails nothing is left.
  virtual Status put_from(std::string_view key, const BlobSource& source) = 0;
  // kNotFound when absent.
  virtual Result<std::unique_ptr<BlobReader>> open(std::string_view key) = 0;
  // Deleting a missing key succeeds (deletes are retried and must be idempotent).
  virtual Status remove(std::string_view key) = 0;
  virtual Result<bool> exists(std::string_view key) = 0;
  // Size in bytes; kNotFound when absent.
  virtual Result<int64_t> size(std::string_view key) = 0;

  // Small blobs (models, images, clips the caller needs whole anyway). get() returns one whole
  // version even while the key is overwritten.
  Status put(std::string_view key, std::string_view data) { return put_from(key, blob_source_of(data)); }
  virtual Result<std::string> get(std::string_view key);
};

// Keys: 1-200 characters of [A-Za-z0-9._-] separated by '/', no empty, "." or ".." segments.
bool valid_blob_key(std::string_view key);

// Blobs as files under `root` (created if needed). Writes go to a temporary file in the same
// directory, are fsynced, then renamed over the destination.
Result<std::unique_ptr<BlobStore>> make_fs_blob_store(const std::string& root);

}  // namespace imago
