// Stored files: uploads and every artifact the service keeps for an agent (input image, video and
// audio, the .imx model, gesture clips, the dynamics model). A file's id is unguessable and its
// URL is {public_url}/v1/files/{id}.{ext}; downloading needs the owner's api-secret.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago {

struct FileRecord {
  std::string id;  // "file_" + 20 base62 characters
  std::string account_id;
  std::optional<std::string> agent_code;  // set for agent artifacts (deleted with the agent)
  std::string purpose;                    // "upload", "input", "model", "clip", "dynamics", "knowledge"
  std::string blob_key;
  std::string kind;  // "image", "video", "audio", "model", "other"
  std::string mime;
  std::string ext;  // without dot
  int64_t size = 0;
  std::optional<std::string> original_name;
  std::optional<std::string> source_url;
  int64_t created_at = 0;  // Unix seconds
};

// Path of a file's download URL: "/v1/files/file_abc.png" (the id is the unguessable part).
inline std::string file_url_path(const std::string& id, const std::string& ext) {
  return "/v1/files/" + id + (ext.empty() ? "" : "." + ext);
}

// Blob key of an agent's file: under its account, because agent codes are per account (blobs
// written before per-account codes keep their "agents/{code}/..." key, which the file record holds).
inline std::string agent_blob_key(const std::string& account_id, const std::string& code,
                                  const std::string& id, const std::string& ext) {
  return "agents/" + account_id + "/" + code + "/" + id + (ext.empty() ? "" : "." + ext);
}

class FileStore {
 public:
  virtual ~FileStore() = default;
  virtual Status insert(const FileRecord& f) = 0;
  // kNotFound for a missing file or another account's.
  virtual Result<FileRecord> get(const std::string& account_id, const std::string& id) = 0;
  // Removes the record; returns it so the caller can delete the blob.
  virtual Result<FileRecord> remove(const std::string& account_id, const std::string& id) = 0;
  // Bytes the account keeps in files of every purpose (uploads, inputs, models, clips): what its
  // storage quota counts (limits/storage_quota.h).
  virtual Result<int64_t> usage_bytes(const std::string& account_id) = 0;
  // The agent's files of one purpose, oldest first (ties by id): its knowledge documents.
  virtual Result<std::vector<FileRecord>> list_agent_files(const std::string& account_id,
                                                           const std::string& agent_code,
                                                           const std::string& purpose) = 0;
};

}  // namespace imago
