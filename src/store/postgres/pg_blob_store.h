// Blobs in PostgreSQL, so a cluster needs nothing but the database (cluster mode; the filesystem
// store stays for single nodes). A blob is a row in `blobs` naming its current version and chunks
// of at most 1 MiB in `blob_chunks`: a put writes a new version chunk by chunk and swaps it in with
// one row update in the same transaction, so readers see the old or the new content, never a mix,
// and no SQL value or libpq buffer ever holds more than one chunk.
#pragma once
#include <memory>

#include "blobs/blob_store.h"

namespace imago {

namespace pg {
class Db;
}

inline constexpr size_t kPgBlobChunkBytes = 1 << 20;

std::unique_ptr<BlobStore> make_pg_blob_store(pg::Db& db);

}  // namespace imago
