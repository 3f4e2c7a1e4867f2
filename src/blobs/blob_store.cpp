#include "blobs/blob_store.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace imago {

bool valid_blob_key(std::string_view key) {
  if (key.empty() || key.size() > 200 || key.front() == '/' || key.back() == '/') return false;
  size_t seg_start = 0;
  for (size_t i = 0; i <= key.size(); ++i) {
    if (i == key.size() || key[i] == '/') {
      std::string_view seg = key.substr(seg_start, i - seg_start);
      if (seg.empty() || seg == "." || seg == "..") return false;
      seg_start = i + 1;
      continue;
    }
    char c = key[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

BlobSource blob_source_of(std::string_view data) {
  auto pos = std::make_shared<size_t>(0);
  return [data, pos](char* buf, size_t cap) -> Result<size_t> {
    const size_t n = std::min(cap, data.size() - *pos);
    std::memcpy(buf, data.data() + *pos, n);
    *pos += n;
    return n;
  };
}

Result<std::string> BlobStore::get(std::string_view key) {
  auto r = open(key);
  if (!r.ok()) return r.status();
  BlobReader& reader = **r;
  std::string out;
  out.reserve(static_cast<size_t>(reader.size()));
  while (static_cast<int64_t>(out.size()) < reader.size()) {
    auto piece = reader.read(static_cast<int64_t>(out.size()), kBlobChunkBytes);
    if (!piece.ok()) return piece.status();
    if (piece->empty()) return Status::Internal("blob " + std::string(key) + " ended early");
    out += *piece;
  }
  return out;
}

}  // namespace imago
