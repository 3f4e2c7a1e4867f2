// File upload (SPEC 4.18) and downloads of stored files (uploads and agent artifacts: images,
// videos, .imx models, gesture clips, dynamics models). Files live at unguessable URLs
// /v1/files/{id}.{ext}; downloading them needs the owner's api-secret (docs/api/agents.md).
#include <boost/json.hpp>

#include "api/routes.h"
#include "api/views.h"
#include "blobs/blob_store.h"
#include "fetch/json_stream.h"
#include "fetch/media_input.h"
#include "fetch/multipart.h"
#include "files/file_service.h"
#include "limits/storage_quota.h"
#include "store/file_store.h"
#include "util/json.h"
#include "util/log.h"
#include "util/strings.h"

namespace imago::api {

namespace {

namespace json = boost::json;

// 100 MB of video as base64 (4/3) inside JSON or multipart, with room for the envelope.
constexpr size_t kUploadBodyLimit = 140u << 20;

// Parsed in pieces (fetch/json_stream.h): file_data is decoded as it is parsed, into memory for a
// small body and into a spool file next to the request's own for a spooled one, so a 140 MB JSON
// upload is never held whole, neither as text nor decoded.
Result<files::UploadInput> read_json_upload(const http::Request& req) {
  files::UploadInput up;
  std::shared_ptr<SpoolFile> decoded_file;
  fetch::InlineDataDecoder decoder("file_data", fetch::kMaxMediaBytes, [&](std::string_view piece) -> Status {
    if (!req.body_file) {
      up.owned.append(piece);
      return Status::Ok();
    }
    if (!decoded_file) {
      auto f = SpoolFile::create(req.body_file->dir());
      if (!f.ok()) return f.status();
      decoded_file = std::move(f).value();
    }
    return decoded_file->append(piece.data(), piece.size());
  });
  auto body = fetch::read_json_object_streamed(
      req.body_bytes(), {"file_url", "file_data", "file_name", "file_type"}, "file_data",
      [&](std::string_view text) { return decoder.feed(text); });
  if (!body.ok()) return body.status();
  auto field = [&](const char* name) -> std::optional<std::string> {
    auto it = body->fields.find(name);
    return it == body->fields.end() ? std::nullopt : it->second;
  };
  auto url = field("file_url");
  auto name = field("file_name");
  auto type = field("file_type");
  if (type && *type != "auto") {
    if (*type != "image" && *type != "video" && *type != "audio") {
      return Status::Invalid("Field 'file_type' must be one of: auto, image, video, audio");
    }
    up.wanted_type = *type;
  }
  if (name) {
    if (name->empty() || name->size() > 255)
      return Status::Invalid("Field 'file_name' must be 1 to 255 characters");
    up.name = *name;
  }
  if (url.has_value() == body->large_given) {
    return Status::Invalid("Provide exactly one of 'file_url' or 'file_data'");
  }
  if (body->large_given) {
    if (Status st = decoder.finish(); !st.ok()) return st;
    if (decoded_file) up.bytes = BodyBytes::whole(decoded_file);
    return up;
  }
  up.url = *url;  // fetched by the file service
  return up;
}

// Over the body wherever it is: a large upload's file part stays a range of the spool file.
Result<files::UploadInput> read_multipart_upload(const http::Request& req) {
  auto ct = req.headers.get("content-type");
  auto boundary = fetch::multipart_boundary(ct ? *ct : "");
  if (!boundary) return Status::Invalid("multipart/form-data without a boundary");
  auto parts = fetch::parse_multipart(req.body_bytes(), *boundary);
  if (!parts.ok()) return parts.status();
  files::UploadInput up;
  const fetch::FormPartBytes* file = nullptr;
  for (const auto& p : *parts) {
    if (p.name == "file" || (!file && p.filename)) file = &p;
    if (p.name == "file_type") {
      auto text = p.data.text(0, 256);
      if (!text.ok()) return text.status();
      if (p.data.size() > 256)
        return Status::Invalid("Field 'file_type' must be one of: auto, image, video, audio");
      std::string t(trim(*text));
      if (t != "auto" && t != "image" && t != "video" && t != "audio") {
        return Status::Invalid("Field 'file_type' must be one of: auto, image, video, audio");
      }
      if (t != "auto") up.wanted_type = t;
    }
    if (p.name == "file_name" && !p.data.empty()) {
      auto text = p.data.text(0, 255);
      if (!text.ok()) return text.status();
      up.name = std::move(text).value();
    }
  }
  if (!file) return Status::Invalid("multipart upload needs a 'file' part");
  if (file->data.empty()) return Status::Invalid("the uploaded file is empty");
  up.bytes = file->data;  // no copy: the part stays in the request body until the blob is written
  if (!up.name && file->filename) up.name = file->filename->substr(0, 255);
  return up;
}

http::Response upload(Services& s, http::Request& req) {
  const int64_t quota =
      effective_storage_quota(*s.storage_quotas, req.principal->plan, req.principal->custom_limits);
  auto f = s.file_service->upload(req.principal->account_id, quota, [&req]() -> Result<files::UploadInput> {
    if (req.content_type() == "multipart/form-data") return read_multipart_upload(req);
    if (req.content_type() == "application/json" || req.content_type().empty()) return read_json_upload(req);
    return Status(Code::kUnsupportedMedia,
                  "Send application/json ({file_url} or {file_data, file_name}) "
                  "or multipart/form-data with a 'file' part");
  });
  if (!f.ok()) return http::Response::from_status(f.status());
  std::string url = s.absolute_url(file_url_path(f->id, f->ext));
  return http::Response::json(
      200, {{"success", true},
            {"message", "File uploaded successfully"},
            {"data", json::object{{"id", f->id},
                                  {"file_url", url},
                                  {"file_type", f->kind},
                                  {"mime_type", f->mime},
                                  {"file_size", f->size},
                                  {"original_source", f->source_url      ? json::value(*f->source_url)
                                                      : f->original_name ? json::value(*f->original_name)
                                                                         : json::value(nullptr)},
                                  {"uploaded_at", format_rfc3339(f->created_at)}}}});
}

// "/v1/files/file_abc.png" and "/v1/files/file_abc" name the same file.
std::string file_id_of(const std::string& name) {
  auto dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

}  // namespace

// A file of at most one chunk is sent as one body (with its Content-Length); a larger one (videos,
// models) is streamed chunk by chunk from the blob store, so serving it holds one chunk per
// download, never the whole file. A read that fails half way (the blob was deleted or replaced
// meanwhile, the database went away) truncates the response: the connection closes before the
// final chunk, which a client sees as an incomplete download, never as a whole file.
http::Response download_response(std::unique_ptr<BlobReader> reader, const std::string& mime) {
  if (reader->size() <= static_cast<int64_t>(kBlobChunkBytes)) {
    auto body = reader->read(0, kBlobChunkBytes);
    if (!body.ok()) return http::Response::from_status(body.status());
    return http::Response::bytes(200, mime, std::move(body).value());
  }
  http::Response resp;
  resp.status = 200;
  resp.headers.set("Content-Type", mime);
  std::shared_ptr<BlobReader> r(std::move(reader));
  auto offset = std::make_shared<int64_t>(0);
  resp.stream = [r, offset]() -> std::optional<std::string> {
    if (*offset >= r->size()) return std::nullopt;
    auto piece = r->read(*offset, kBlobChunkBytes);
    if (!piece.ok()) {
      log::warn("file_download_failed", {{"error", piece.status().message()}});
      throw std::runtime_error(piece.status().message());
    }
    if (piece->empty()) throw std::runtime_error("blob ended early");
    *offset += static_cast<int64_t>(piece->size());
    return std::move(piece).value();
  };
  return resp;
}

void register_file_routes(http::Router& router, Services& s) {
  http::RouteOptions up;
  up.body_limit = kUploadBodyLimit;
  up.spool_body = true;                    // large bodies arrive in a spool file, read through body_bytes()
  up.pool = http::HandlerPool::kOutbound;  // may fetch a URL from another host
  router.add(
      "POST", "/v1/files/upload", [&s](http::Request& req) { return upload(s, req); }, up);

  router.add("GET", "/v1/files/{file}", [&s](http::Request& req) {
    auto d = s.file_service->open(req.principal->account_id, file_id_of(req.param("file")));
    if (!d.ok()) return http::Response::from_status(d.status());
    auto resp = download_response(std::move(d->reader), d->file.mime);
    resp.headers.set("Cache-Control", "private, max-age=3600");
    resp.headers.set("Content-Disposition", "inline; filename=\"" + d->file.id + "." + d->file.ext + "\"");
    resp.headers.set("X-Content-Type-Options", "nosniff");
    return resp;
  });

  router.add("DELETE", "/v1/files/{file}", [&s](http::Request& req) {
    std::string id = file_id_of(req.param("file"));
    if (Status st = s.file_service->remove_upload(req.principal->account_id, id); !st.ok())
      return http::Response::from_status(st);
    return http::Response::json(200, {{"success", true}, {"id", id}, {"deleted", true}});
  });
}

}  // namespace imago::api
