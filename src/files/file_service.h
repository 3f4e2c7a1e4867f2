// Stored files as a domain, without HTTP: writing a blob and its record as one step (a failed
// record removes the blob again), uploads (storage quota, type sniffing, size limits, URLs fetched
// through the SSRF guard), downloads and deleting an upload. Handlers in src/api parse the
// request, call this and render the view.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "blobs/blob_store.h"
#include "store/file_store.h"
#include "util/clock.h"
#include "util/spool.h"
#include "util/status.h"

namespace imago {
class JobStore;
namespace fetch {
class Fetcher;
}
}  // namespace imago

namespace imago::files {

// Writes the blob `f.blob_key` from `source`, sets `f.size` to the bytes written, then records the
// file through `record` (FileStore::insert when empty, or a store operation that records it in a
// larger transaction). When recording fails the blob is removed: nothing is left of the file. The
// one implementation of this sequence; every writer of a file record goes through it.
Status write_file(BlobStore& blobs, FileStore& files, FileRecord& f, const BlobSource& source,
                  const std::function<Status(const FileRecord&)>& record = {});

// What an upload request carries, as the handler parsed it: the bytes (a part of the request body
// or decoded from it) or a URL for the service to fetch.
struct UploadInput {
  std::string owned;  // decoded bytes, when they are not a part of the request body
  // The file inside the request body (a multipart part, in memory or in the request's spool file,
  // read piece by piece); empty: `owned`.
  BodyBytes bytes;
  std::optional<std::string> url;          // file_url: fetched here
  std::optional<std::string> name;         // file_name
  std::optional<std::string> wanted_type;  // file_type: image, video, audio (auto: none)
};

struct Download {
  FileRecord file;
  std::unique_ptr<BlobReader> reader;
};

struct FileServiceDeps {
  BlobStore* blobs = nullptr;
  FileStore* files = nullptr;
  JobStore* jobs = nullptr;  // retries of blob deletions that failed
  const fetch::Fetcher* fetcher = nullptr;
  Clock* clock = nullptr;
};

inline constexpr int kUploadFetchTimeoutMs = 60000;

class FileService {
 public:
  explicit FileService(FileServiceDeps deps) : d_(deps) {}

  // An upload of the account, limited by `quota_bytes` (0: unlimited). An account at its quota
  // is refused before `read` runs, so nothing is read or fetched for it; the size is checked
  // again once known (concurrent uploads may overshoot by what is in flight). Errors carry the
  // codes of the API (kUnsupportedMedia, kTooLarge, kQuotaExceeded, kInvalidArgument).
  Result<FileRecord> upload(const std::string& account_id, int64_t quota_bytes,
                            const std::function<Result<UploadInput>()>& read);

  // The file and an open reader of its blob; kNotFound for a missing file or another account's.
  Result<Download> open(const std::string& account_id, const std::string& id);

  // Deletes an upload (agent files go with their agent: kConflict). The record goes first; a
  // blob that cannot be deleted now is left to a retried job.
  Status remove_upload(const std::string& account_id, const std::string& id);

 private:
  Result<std::string> fetch_url(const std::string& url);

  FileServiceDeps d_;
};

}  // namespace imago::files
