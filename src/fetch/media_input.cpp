#include "fetch/media_input.h"

#include "util/base64.h"
#include "util/image_size.h"
#include "util/strings.h"

namespace imago::fetch {

namespace {

std::string mb(size_t bytes) {
  return std::to_string(bytes >> 20) + " MB";
}

}  // namespace

bool looks_like_url(std::string_view value) {
  std::string head = to_lower(value.substr(0, 8));
  return head.rfind("http://", 0) == 0 || head.rfind("https://", 0) == 0 ||
         head.find("://") != std::string::npos || head.rfind("file:", 0) == 0 || head.rfind("ftp:", 0) == 0;
}

Result<std::string> decode_inline_data(std::string_view field, std::string_view value, size_t max) {
  std::string f(field);
  std::string_view payload = value;
  if (value.size() >= 5 && iequals(value.substr(0, 5), "data:")) {
    auto comma = value.find(',');
    if (comma == std::string_view::npos) return Status::Invalid(f + ": malformed data: URI");
    std::string meta = to_lower(value.substr(5, comma - 5));
    if (meta.size() < 7 || meta.substr(meta.size() - 7) != ";base64") {
      return Status::Invalid(f + ": data: URI must be base64-encoded (;base64)");
    }
    payload = value.substr(comma + 1);
  }
  // Base64 is 4 characters per 3 bytes: refuse before decoding anything far too large.
  if (payload.size() / 4 * 3 > max + 3 + max / 64) {
    return Status(Code::kTooLarge, f + ": data is larger than " + mb(max));
  }
  auto decoded = base64_decode(payload);
  if (!decoded) return Status::Invalid(f + " must be an http(s) URL or base64 data");
  if (decoded->empty()) return Status::Invalid(f + ": data is empty");
  if (decoded->size() > max) return Status(Code::kTooLarge, f + ": data is larger than " + mb(max));
  return std::move(*decoded);
}

Result<Sniffed> check_media(std::string_view field, std::string_view bytes, MediaKind expected) {
  std::string f(field);
  auto t = sniff(bytes);
  if (!t) {
    return Status(Code::kUnsupportedMedia,
                  f + ": unsupported content (expected " + std::string(media_kind_name(expected)) + ")");
  }
  if (t->kind != expected) {
    return Status(Code::kUnsupportedMedia,
                  f + ": expected " + std::string(media_kind_name(expected)) + " content but got " + t->mime);
  }
  size_t max = max_bytes_for(expected);
  if (bytes.size() > max) return Status(Code::kTooLarge, f + ": " + t->mime + " is larger than " + mb(max));
  // Decompression bombs: the pixel count the header declares, before anything decodes it.
  if (expected == MediaKind::kImage)
    if (auto s = check_image_size(bytes, f); !s.ok()) return s;
  return *t;
}

Result<MediaParam> parse_media_param(std::string_view field, std::string_view value, MediaKind expected) {
  std::string f(field);
  MediaParam out;
  std::string_view v = trim(value);
  if (v.empty()) return Status::Invalid(f + " must not be empty");
  if (looks_like_url(v)) {
    auto u = parse_fetch_url(v);
    if (!u.ok()) return Status::Invalid(f + ": " + u.status().message());
    out.is_url = true;
    out.url = std::string(v);
    return out;
  }
  auto bytes = decode_inline_data(field, v, max_bytes_for(expected));
  if (!bytes.ok()) return bytes.status();
  auto t = check_media(field, *bytes, expected);
  if (!t.ok()) {
    // In a JSON parameter a wrong type is a validation error, not a 415 of the request itself.
    if (t.status().code() == Code::kUnsupportedMedia) return Status::Invalid(t.status().message());
    return t.status();
  }
  out.bytes = std::move(bytes).value();
  out.type = *t;
  return out;
}

Result<FetchedMedia> fetch_media(const Fetcher& fetcher, std::string_view field, const std::string& url,
                                 MediaKind expected, int timeout_ms) {
  std::string f(field);
  FetchRequest req;
  req.url = url;
  req.max_bytes = max_bytes_for(expected);
  req.timeout_ms = timeout_ms;
  auto r = fetcher.fetch(req);
  if (!r.ok()) return Status(r.status().code(), f + ": " + r.status().message());
  if (r->status >= 500 || r->status == 429 || r->status == 408) {
    return Status::Unavailable(f + ": " + url_without_secrets(url) + " answered HTTP " +
                               std::to_string(r->status));
  }
  if (r->status < 200 || r->status >= 300) {
    return Status::Invalid(f + ": " + url_without_secrets(url) + " answered HTTP " +
                           std::to_string(r->status));
  }
  auto t = check_media(field, r->body, expected);
  if (!t.ok()) return t.status();
  return FetchedMedia{std::move(r->body), *t};
}

}  // namespace imago::fetch
