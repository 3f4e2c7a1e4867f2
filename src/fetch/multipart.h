// A strict multipart/form-data parser (RFC 7578) for uploads. Parts are views into the body, so a
// 100 MB upload is not copied; over a spooled body (BodyBytes of a file) they are byte ranges of
// the file, found by scanning it in bounded windows.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/spool.h"
#include "util/status.h"

namespace imago::fetch {

struct FormPart {
  std::string name;                     // from Content-Disposition
  std::optional<std::string> filename;  // present for file fields
  std::string content_type;             // as declared (never trusted for typing)
  std::string_view data;
};

// Extracts the boundary parameter of a Content-Type header value.
std::optional<std::string> multipart_boundary(std::string_view content_type_header);
Result<std::vector<FormPart>> parse_multipart(std::string_view body, std::string_view boundary);

// The same over a body in memory or in a spool file: each part's data is a range of `body`.
struct FormPartBytes {
  std::string name;
  std::optional<std::string> filename;
  std::string content_type;
  BodyBytes data;
};
Result<std::vector<FormPartBytes>> parse_multipart(const BodyBytes& body, std::string_view boundary);

// The most a part's header section may take (the limit applies to spooled and in-memory bodies).
inline constexpr size_t kMaxPartHeaderBytes = 16 * 1024;

}  // namespace imago::fetch
