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

Result<std::vector<FormPartBytes>> parse_multipart(const BodyBytes& body, std::string_view boundary) {
  std::string delim = "--" + std::string(boundary);
  std::vector<FormPartBytes> parts;
  auto first = body.find(delim, 0);
  if (!first.ok()) return first.status();
  if (*first < 0) return Status::Invalid("multipart body has no boundary line");
  int64_t pos = *first + static_cast<int64_t>(delim.size());
  const std::string next_delim = "\r\n" + delim;
  while (true) {
    auto after = body.text(pos, 2);
    if (!after.ok()) return after.status();
    if (*after == "--") return parts;  // closing delimiter
    if (*after != "\r\n") return Status::Invalid("malformed multipart boundary line");
    pos += 2;
    // The header section is read whole, so it is bounded; the data is only ever a range.
    auto head = body.text(pos, kMaxPartHeaderBytes);
    if (!head.ok()) return head.status();
    size_t header_end = head->find("\r\n\r\n");
    if (header_end == std::string::npos) return Status::Invalid("malformed multipart part headers");
    FormPartBytes part;
    bool has_disposition = false;
    for (auto line : split(std::string_view(*head).substr(0, header_end), '\n')) {
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
    int64_t data_start = pos + static_cast<int64_t>(header_end) + 4;
    auto data_end = body.find(next_delim, data_start);
    if (!data_end.ok()) return data_end.status();
    if (*data_end < 0) return Status::Invalid("multipart body is truncated");
    part.data = body.slice(data_start, *data_end - data_start);
    parts.push_back(std::move(part));
    pos = *data_end + static_cast<int64_t>(next_delim.size());
  }
}

Result<std::vector<FormPart>> parse_multipart(std::string_view body, std::string_view boundary) {
  auto ranges = parse_multipart(BodyBytes(body), boundary);
  if (!ranges.ok()) return ranges.status();
  std::vector<FormPart> parts;
  parts.reserve(ranges->size());
  for (auto& r : *ranges) {
    parts.push_back(
        FormPart{std::move(r.name), std::move(r.filename), std::move(r.content_type), r.data.view()});
  }
  return parts;
}

}  // namespace imago::fetch
