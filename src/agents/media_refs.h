// Media parameters of generation requests resolved against the caller's stored files: an
// /v1/files URL (or bare file id) of the caller's own upload becomes that file; any other http(s)
// URL is kept to be fetched by the job through the SSRF guard; inline base64 / data: URIs are
// decoded and sniffed now.
#pragma once
#include <optional>
#include <string>

#include "fetch/media_input.h"
#include "store/file_store.h"

namespace imago::agents {

struct ResolvedMedia {
  std::optional<FileRecord> file;    // an existing file of the caller
  std::optional<std::string> url;    // an external URL for the job to fetch
  std::optional<std::string> bytes;  // inline data (caller stores it)
  std::optional<fetch::Sniffed> type;
};

// kInvalidArgument naming `field` for anything unusable (including another account's file),
// kTooLarge when inline data exceeds the kind's limit.
Result<ResolvedMedia> resolve_media_param(FileStore& files, const std::string& public_url,
                                          const std::string& account_id, std::string_view field,
                                          std::string_view value, fetch::MediaKind kind);

// The file id in "/v1/files/<id>[.<ext>]" URLs and bare ids ("file_" + 20 base62), or nullopt.
std::optional<std::string> file_id_from_ref(const std::string& public_url, std::string_view value);

}  // namespace imago::agents
