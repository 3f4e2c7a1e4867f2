// A strict multipart/form-data parser (RFC 7578) for uploads. Parts are views into the body, so a
// 100 MB upload is not copied.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace imago::fetch
