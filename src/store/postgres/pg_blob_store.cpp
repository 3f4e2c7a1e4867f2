#include "store/postgres/pg_blob_store.h"

#include <algorithm>

#include "store/postgres/db.h"
#include "util/log.h"

namespace imago {

namespace {

Status bad_key(std::string_view key) {
  return Status::Invalid("invalid blob key: " + std::string(key));
}

class PgBlobReader final : public BlobReader {
 public:
  PgBlobReader(pg::Db& db, std::string key, int64_t size, int64_t version)
      : db_(db), key_(std::move(key)), size_(size), version_(version) {}
  int64_t size() const override { return size_; }

  Result<std::string> read(int64_t offset, size_t max) override {
    if (offset < 0) return Status::Invalid("negative blob offset");
    if (offset >= size_ || max == 0) return std::string();
    const int64_t n = offset / static_cast<int64_t>(kPgBlobChunkBytes);
    const int64_t in_chunk = offset % static_cast<int64_t>(kPgBlobChunkBytes);
    const int64_t want =
        std::min<int64_t>({static_cast<int64_t>(std::min(max, kBlobChunkBytes)),
                           static_cast<int64_t>(kPgBlobChunkBytes) - in_chunk, size_ - offset});
    // substring() of an uncompressed (EXTERNAL) bytea reads only the slices it needs.
    return db_.once([&](sql::Connection& c) -> Result<std::string> {
      auto q = c.query(
          "SELECT substring(data FROM ? FOR ?) FROM blob_chunks WHERE key = ? AND version = ? AND n = ?",
          in_chunk + 1, want, key_, version_, n);
      // The version was replaced (or deleted) since open(): fail rather than mix two versions.
      if (!q.step()) return Status::Conflict("blob " + key_ + " changed while it was being read");
      std::string out = q.col_blob(0);
      if (static_cast<int64_t>(out.size()) != want)
        return Status::Internal("blob " + key_ + " chunk " + std::to_string(n) + " has the wrong size");
      return out;
    });
  }

 private:
  pg::Db& db_;
  std::string key_;
  int64_t size_, version_;
};

class PgBlobStore final : public BlobStore {
 public:
  explicit PgBlobStore(pg::Db& db) : db_(db) { sweep_abandoned_writes(); }

  Status put_from(std::string_view key, const BlobSource& source) override {
    if (!valid_blob_key(key)) return bad_key(key);
    auto version = db_.once([&](sql::Connection& c) -> Result<int64_t> {
      return c.number(
          "INSERT INTO blob_writes(version, key, started_at)"
          " VALUES(nextval('blob_versions'), ?, EXTRACT(EPOCH FROM now())::bigint) RETURNING version",
          key);
    });
    if (!version.ok()) return version.status();
    Status st = write_chunks(key, *version, source);
    if (!st.ok()) {
      // Nothing of a failed write stays; if even this fails, the sweep at a later start does it.
      Status d = discard(*version);
      if (!d.ok())
        log::warn("blob_write_cleanup_failed", {{"key", std::string(key)}, {"error", d.message()}});
    }
    return st;
  }

  Result<std::unique_ptr<BlobReader>> open(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.once([&](sql::Connection& c) -> Result<std::unique_ptr<BlobReader>> {
      auto h = c.query("SELECT size, version FROM blobs WHERE key = ?", key);
      if (!h.step()) return Status::NotFound("blob not found: " + std::string(key));
      return std::unique_ptr<BlobReader>(new PgBlobReader(db_, std::string(key), h.col_int(0), h.col_int(1)));
    });
  }

  // One REPEATABLE READ snapshot for the header and every chunk, so an overwrite that deletes this
  // version's chunks meanwhile cannot fail the read (a BlobReader reads chunk by chunk instead).
  Result<std::string> get(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.read([&](sql::Connection& c) -> Result<std::string> {
      auto h = c.query("SELECT size, chunks, version FROM blobs WHERE key = ?", key);
      if (!h.step()) return Status::NotFound("blob not found: " + std::string(key));
      const int64_t size = h.col_int(0), chunks = h.col_int(1), version = h.col_int(2);
      std::string out;
      out.reserve(static_cast<size_t>(size));
      for (int64_t i = 0; i < chunks; ++i) {
        auto q =
            c.query("SELECT data FROM blob_chunks WHERE key = ? AND version = ? AND n = ?", key, version, i);
        if (!q.step())
          return Status::Internal("blob " + std::string(key) + " is missing chunk " + std::to_string(i));
        out += q.col_blob(0);
      }
      if (static_cast<int64_t>(out.size()) != size)
        return Status::Internal("blob " + std::string(key) + " has the wrong size");
      return out;
    });
  }

  Status remove(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.write([&](sql::Connection& c) -> Status {
      auto version = c.first(sql::int_col, "DELETE FROM blobs WHERE key = ? RETURNING version", key);
      if (version) c.run("DELETE FROM blob_chunks WHERE key = ? AND version = ?", key, *version);
      return Status::Ok();
    });
  }

  Result<bool> exists(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.once([&](sql::Connection& c) { return c.exists("SELECT 1 FROM blobs WHERE key = ?", key); });
  }

  Result<int64_t> size(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.once([&](sql::Connection& c) {
      return sql::found(c.first(sql::int_col, "SELECT size FROM blobs WHERE key = ?", key),
                        Status::NotFound("blob not found: " + std::string(key)));
    });
  }

 private:
  Status write_chunks(std::string_view key, int64_t version, const BlobSource& source) {
    std::string buf(kPgBlobChunkBytes, '\0');
    int64_t size = 0;
    int n = 0;  // an empty blob has no chunks
    for (bool end = false; !end;) {
      // Fill the chunk completely (only the last one is shorter): the reader finds an offset's
      // chunk by division.
      size_t filled = 0;
      while (filled < buf.size()) {
        auto got = source(buf.data() + filled, buf.size() - filled);
        if (!got.ok()) return got.status();
        if (*got > buf.size() - filled) return Status::Internal("blob source overran its buffer");
        if (*got == 0) {
          end = true;
          break;
        }
        filled += *got;
      }
      if (filled == 0) break;
      Status st = db_.once([&](sql::Connection& c) -> Status {
        c.query("INSERT INTO blob_chunks(key, version, n, data) VALUES(?, ?, ?, ?)", key, version, n)
            .bind_blob(4, std::string_view(buf.data(), filled))
            .run();
        return Status::Ok();
      });
      if (!st.ok()) return st;
      size += static_cast<int64_t>(filled);
      ++n;
    }
    // The swap: the row lock on `blobs` orders concurrent puts of one key (the last swap wins);
    // only the version it replaces is deleted, never the chunks of a put still in progress.
    return db_.write([&](sql::Connection& c) -> Status {
      if (c.run("DELETE FROM blob_writes WHERE version = ?", version) != 1)
        return Status::Unavailable("blob write of " + std::string(key) + " was swept as abandoned");
      auto previous = c.first(sql::int_col, "SELECT version FROM blobs WHERE key = ? FOR UPDATE", key);
      c.run(
          "INSERT INTO blobs(key, size, chunks, version, created_at)"
          " VALUES(?, ?, ?, ?, EXTRACT(EPOCH FROM now())::bigint)"
          " ON CONFLICT (key) DO UPDATE SET size = EXCLUDED.size, chunks = EXCLUDED.chunks,"
          "  version = EXCLUDED.version, created_at = EXCLUDED.created_at",
          key, size, n, version);
      if (previous) c.run("DELETE FROM blob_chunks WHERE key = ? AND version = ?", key, *previous);
      return Status::Ok();
    });
  }

  Status discard(int64_t version) {
    return db_.write([&](sql::Connection& c) -> Status {
      c.run("DELETE FROM blob_chunks WHERE version = ?", version);
      c.run("DELETE FROM blob_writes WHERE version = ?", version);
      return Status::Ok();
    });
  }

  // Writes started long ago whose node never finished them (killed mid-upload).
  void sweep_abandoned_writes() {
    auto swept = db_.write([&](sql::Connection& c) -> Result<int64_t> {
      return c.run(
          "WITH gone AS (DELETE FROM blob_writes WHERE started_at < EXTRACT(EPOCH FROM now())::bigint - ?"
          " RETURNING version) DELETE FROM blob_chunks WHERE version IN (SELECT version FROM gone)",
          kPgBlobWriteSweepAfterS);
    });
    if (!swept.ok())
      log::warn("blob_sweep_failed", {{"error", swept.status().message()}});
    else if (*swept > 0)
      log::info("blob_writes_swept", {{"chunks", *swept}});
  }

  pg::Db& db_;
};

}  // namespace

std::unique_ptr<BlobStore> make_pg_blob_store(pg::Db& db) {
  return std::make_unique<PgBlobStore>(db);
}

}  // namespace imago
