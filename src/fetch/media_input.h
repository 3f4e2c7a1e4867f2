// Decoding of media parameters (`image`, `video`, `audio` of /v1/agent/generate, `image_url` of
// /v1/dynamics/generate, upload bodies): an http(s) URL, raw base64, or a `data:` URI. Inline data
// is decoded, size-checked and sniffed at once; URLs are only checked for syntax here and fetched
// later by the job (fetch_media).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "fetch/fetcher.h"
#include "fetch/sniff.h"
#include "util/status.h"

namespace imago::fetch {

struct MediaParam {
  bool is_url = false;
  std::string url;              // when is_url
  std::string bytes;            // when inline
  std::optional<Sniffed> type;  // when inline
};

// `field` names the parameter in error messages. Errors are kInvalidArgument naming the field
// (bad syntax, bad base64, unsupported content, wrong kind) or kTooLarge (over the kind's limit).
Result<MediaParam> parse_media_param(std::string_view field, std::string_view value, MediaKind expected);

// Decodes base64 or a data: URI (no URLs); `max` bounds the decoded size.
Result<std::string> decode_inline_data(std::string_view field, std::string_view value, size_t max);

// Checks that `bytes` sniff as `expected` and fit its limit.
Result<Sniffed> check_media(std::string_view field, std::string_view bytes, MediaKind expected);

bool looks_like_url(std::string_view value);

// Fetches a media URL through the guard and checks its content. Errors carry a message fit for an
// agent's error_message ("image: ..."); kUnavailable marks a transient failure (network, 5xx).
struct FetchedMedia {
  std::string bytes;
  Sniffed type;
};
Result<FetchedMedia> fetch_media(const Fetcher& fetcher, std::string_view field, const std::string& url,
                                 MediaKind expected, int timeout_ms = 60000);

}  // namespace imago::fetch
