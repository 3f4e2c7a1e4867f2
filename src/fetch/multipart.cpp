#include "fetch/multipart.h"

#include "util/strings.h"

namespace imago::fetch {

namespace {

// Value of `key=` in a header's parameter list; handles quoted values.
std::optional<std::string> header_param(std::string_view header, std::string_view key) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t semi = header.find(';', pos);
    if (semi == std::string_view::npos) break;
    size_t start = semi + 1;
    while (start < header.size() && header[start] == ' ') ++start;
    size_t eq = header.find('=', start);
    if (eq == std::string_view::npos) break;
    std::string_view k = trim(header.substr(start, eq - start));
    size_t vstart = eq + 1;
    std::string value;
    size_t next;
    if (vstart < header.size() && header[vstart] == '"') {
      size_t i = vstart + 1;
      while (i < header.size() && header[i] != '"') {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value.push_back(header[i]);
        ++i;
      }
      next = i + 1;
    } else {
      size_t end = header.find(';', vstart);
      if (end == std::string_view::npos) end = header.size();
      value = std::string(trim(header.substr(vstart, end - vstart)));
      next = end;
    }
    if (iequals(k, key)) return value;
    pos = next;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> multipart_boundary(std::string_view content_type_header) {
  auto semi = content_type_header.find(';');
  if (!iequals(trim(content_type_header.substr(0, semi)), "multipart/form-data")) return std::nullopt;
  auto b = header_param(content_type_header, "boundary");
  if (!b || b->empty() || b->size() > 70) return std::nullopt;
  return b;
}

Result<std::vector<FormPart>> parse_multipart(std::string_view body, std::string_view boundary) {
  std::string delim = "--" + std::string(boundary);
  std::vector<FormPart> parts;
  size_t pos = body.find(delim);
  if (pos == std::string_view::npos) return Status::Invalid("multipart body has no boundary line");
  pos += delim.size();
  const std::string next_delim = "\r\n" + delim;
  while (true) {
    if (body.substr(pos, 2) == "--") return parts;  // closing delimiter
    if (body.substr(pos, 2) != "\r\n") return Status::Invalid("malformed multipart boundary line");
    pos += 2;
    size_t header_end = body.find("\r\n\r\n", pos);
    if (header_end == std::string_view::npos) return Status::Invalid("malformed multipart part headers");
    FormPart part;
    bool has_disposition = false;
    for (auto line : split(body.substr(pos, header_end - pos), '\n')) {
      line = trim(line);
      if (line.empty()) continue;
      auto colon = line.find(':');
      if (colon == std::string_view::npos) return Status::Invalid("malformed multipart header line");
      std::string_view name = trim(line.substr(0, colon));
      std::string_view value = trim(line.substr(colon + 1));
      if (iequals(name, "content-disposition")) {
        has_disposition = true;
        auto n = header_param(value, "name");
        if (!n) return Status::Invalid("multipart part without a name");
        part.name = *n;
        part.filename = header_param(value, "filename");
      } else if (iequals(name, "content-type")) {
        part.content_type = std::string(value);
      }
    }
    if (!has_disposition) return Status::Invalid("multipart part without Content-Disposition");
    size_t data_start = header_end + 4;
    size_t data_end = body.find(next_delim, data_start);
    if (data_end == std::string_view::npos) return Status::Invalid("multipart body is truncated");
    part.data = body.substr(data_start, data_end - data_start);
    parts.push_back(std::move(part));
    pos = data_end + next_delim.size();
  }
}

}  // namespace imago::fetch
