// Blobs in PostgreSQL, so a cluster needs nothing but the database (cluster mode; the filesystem
// store stays for single nodes). A blob is a row in `blobs` naming its current version, and chunks
// of exactly kPgBlobChunkBytes (the last one shorter) in `blob_chunks`.
//
// A write streams: each chunk is read from the source into one buffer and inserted by its own
// statement under a fresh version that no reader can see yet (a `blob_writes` row names it); one
// short transaction then swaps the version into `blobs` and deletes the previous version's chunks.
// So readers see the old or the new content, never a mix; no SQL value or libpq buffer holds more
// than one chunk; no connection is held while the source produces bytes; and a failed write deletes
// its chunks. A write whose node died half way is swept by the next node that starts after
// kPgBlobWriteSweepAfterS. A read fetches one chunk (or the part of it asked for) per statement.
#pragma once
#include <memory>

#include "blobs/blob_store.h"

namespace imago {

namespace pg {
class Db;
}

inline constexpr size_t kPgBlobChunkBytes = kBlobChunkBytes;
inline constexpr int64_t kPgBlobWriteSweepAfterS = 3600;

std::unique_ptr<BlobStore> make_pg_blob_store(pg::Db& db);

}  // namespace imago
