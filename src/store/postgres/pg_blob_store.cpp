#include "store/postgres/pg_blob_store.h"

#include "store/postgres/db.h"

namespace imago {

namespace {

Status bad_key(std::string_view key) {
  return Status::Invalid("invalid blob key: " + std::string(key));
}

class PgBlobStore final : public BlobStore {
 public:
  explicit PgBlobStore(pg::Db& db) : db_(db) {}

  Status put(std::string_view key, std::string_view data) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.write([&](pg::Conn& c) -> Status {
      auto v = c.prepare("SELECT nextval('blob_versions')");
      v.step();
      const int64_t version = v.col_int(0);
      int n = 0;  // an empty blob has no chunks
      for (size_t off = 0; off < data.size(); off += kPgBlobChunkBytes, ++n) {
        c.prepare("INSERT INTO blob_chunks(key, version, n, data) VALUES(?, ?, ?, ?)")
            .bind(1, key)
            .bind(2, version)
            .bind(3, n)
            .bind_bytes(4, data.substr(off, kPgBlobChunkBytes))
            .run();
      }
      // Swap the new version in; the row lock orders concurrent puts of one key.
      c.prepare(
           "INSERT INTO blobs(key, size, chunks, version, created_at)"
           " VALUES(?, ?, ?, ?, EXTRACT(EPOCH FROM now())::bigint)"
           " ON CONFLICT (key) DO UPDATE SET size = EXCLUDED.size, chunks = EXCLUDED.chunks,"
           "  version = EXCLUDED.version, created_at = EXCLUDED.created_at")
          .bind(1, key)
          .bind(2, static_cast<int64_t>(data.size()))
          .bind(3, n)
          .bind(4, version)
          .run();
      c.prepare("DELETE FROM blob_chunks WHERE key = ? AND version <> ?").bind(1, key).bind(2, version).run();
      return Status::Ok();
    });
  }

  Result<std::string> get(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    // One snapshot for the header and every chunk; chunks are fetched one at a time.
    return db_.read([&](pg::Conn& c) -> Result<std::string> {
      auto h = c.prepare("SELECT size, chunks, version FROM blobs WHERE key = ?");
      h.bind(1, key);
      if (!h.step()) return Status::NotFound("blob not found: " + std::string(key));
      const int64_t size = h.col_int(0), chunks = h.col_int(1), version = h.col_int(2);
      std::string out;
      out.reserve(static_cast<size_t>(size));
      for (int64_t i = 0; i < chunks; ++i) {
        auto q = c.prepare("SELECT data FROM blob_chunks WHERE key = ? AND version = ? AND n = ?");
        q.bind(1, key).bind(2, version).bind(3, i);
        if (!q.step())
          return Status::Internal("blob " + std::string(key) + " is missing chunk " + std::to_string(i));
        out += q.col_bytes(0);
      }
      if (static_cast<int64_t>(out.size()) != size)
        return Status::Internal("blob " + std::string(key) + " has the wrong size");
      return out;
    });
  }

  Status remove(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.write([&](pg::Conn& c) -> Status {
      c.prepare("DELETE FROM blobs WHERE key = ?").bind(1, key).run();
      c.prepare("DELETE FROM blob_chunks WHERE key = ?").bind(1, key).run();
      return Status::Ok();
    });
  }

  Result<bool> exists(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.once([&](pg::Conn& c) {
      auto q = c.prepare("SELECT 1 FROM blobs WHERE key = ?");
      q.bind(1, key);
      return q.step();
    });
  }

  Result<int64_t> size(std::string_view key) override {
    if (!valid_blob_key(key)) return bad_key(key);
    return db_.once([&](pg::Conn& c) -> Result<int64_t> {
      auto q = c.prepare("SELECT size FROM blobs WHERE key = ?");
      q.bind(1, key);
      if (!q.step()) return Status::NotFound("blob not found: " + std::string(key));
      return q.col_int(0);
    });
  }

 private:
  pg::Db& db_;
};

}  // namespace

std::unique_ptr<BlobStore> make_pg_blob_store(pg::Db& db) {
  return std::make_unique<PgBlobStore>(db);
}

}  // namespace imago
