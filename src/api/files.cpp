// File upload (SPEC 4.18) and downloads of stored files (uploads and agent artifacts: images,
// videos, .imx models, gesture clips, dynamics models). Files live at unguessable URLs
// /v1/files/{id}.{ext}; downloading them needs the owner's api-secret (docs/api/agents.md).
#include <boost/json.hpp>

#include "api/routes.h"
#include "api/views.h"
#include "blobs/blob_store.h"
#include "fetch/fetcher.h"
#include "fetch/media_input.h"
#include "fetch/multipart.h"
#include "jobs/media_refs.h"
#include "limits/storage_quota.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "util/image_size.h"
#include "util/json.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::api {

namespace {

namespace json = boost::json;

// 100 MB of video as base64 (4/3) inside JSON or multipart, with room for the envelope.
constexpr size_t kUploadBodyLimit = 140u << 20;
constexpr int kUploadFetchTimeoutMs = 60000;

struct Upload {
  std::string owned;       // decoded or fetched bytes, when they are not a part of the request body
  std::string_view bytes;  // the file: `owned`, or a multipart part inside the request body
  std::optional<std::string> name;
  std::optional<std::string> source_url;
  std::optional<std::string> wanted_type;  // file_type: image, video, audio (auto: none)
};

Result<Upload> read_json_upload(Services& s, const http::Request& req) {
  auto body = parse_json_object_with(req.body, {"file_url", "file_data", "file_name", "file_type"});
  if (!body.ok()) return body.status();
  Upload up;
  auto url = get_string(*body, "file_url");
  if (!url.ok()) return url.status();
  auto data = get_string(*body, "file_data");
  if (!data.ok()) return data.status();
  auto name = get_string(*body, "file_name");
  if (!name.ok()) return name.status();
  auto type = get_string(*body, "file_type");
  if (!type.ok()) return type.status();
  if (type->has_value() && **type != "auto") {
    if (**type != "image" && **type != "video" && **type != "audio") {
      return Status::Invalid("Field 'file_type' must be one of: auto, image, video, audio");
    }
    up.wanted_type = **type;
  }
  if (name->has_value()) {
    if ((*name)->empty() || (*name)->size() > 255)
      return Status::Invalid("Field 'file_name' must be 1 to 255 characters");
    up.name = **name;
  }
  if (url->has_value() == data->has_value()) {
    return Status::Invalid("Provide exactly one of 'file_url' or 'file_data'");
  }
  if (data->has_value()) {
    auto bytes = fetch::decode_inline_data("file_data", **data, fetch::kMaxMediaBytes);
    if (!bytes.ok()) return bytes.status();
    up.owned = std::move(bytes).value();
    return up;
  }
  auto parsed = fetch::parse_fetch_url(**url);
  if (!parsed.ok()) return Status::Invalid("file_url: " + parsed.status().message());
  fetch::FetchRequest fr;
  fr.url = **url;
  fr.max_bytes = fetch::kMaxMediaBytes;
  fr.timeout_ms = kUploadFetchTimeoutMs;
  auto r = s.fetcher->fetch(fr);
  if (!r.ok()) {
    if (r.status().code() == Code::kTooLarge)
      return Status(Code::kTooLarge, "file_url: " + r.status().message());
    // Unreachable, refused or timed out: the request's URL is at fault, not this service.
    return Status::Invalid("file_url: " + r.status().message());
  }
  if (r->status < 200 || r->status >= 300) {
    return Status::Invalid("file_url: " + fr.url + " answered HTTP " + std::to_string(r->status));
  }
  up.owned = std::move(r->body);
  up.source_url = **url;
  return up;
}

Result<Upload> read_multipart_upload(const http::Request& req) {
  auto ct = req.headers.get("content-type");
  auto boundary = fetch::multipart_boundary(ct ? *ct : "");
  if (!boundary) return Status::Invalid("multipart/form-data without a boundary");
  auto parts = fetch::parse_multipart(req.body, *boundary);
  if (!parts.ok()) return parts.status();
  Upload up;
  const fetch::FormPart* file = nullptr;
  for (const auto& p : *parts) {
    if (p.name == "file" || (!file && p.filename)) file = &p;
    if (p.name == "file_type") {
      std::string t(trim(p.data));
      if (t != "auto" && t != "image" && t != "video" && t != "audio") {
        return Status::Invalid("Field 'file_type' must be one of: auto, image, video, audio");
      }
      if (t != "auto") up.wanted_type = t;
    }
    if (p.name == "file_name" && !p.data.empty()) up.name = std::string(p.data.substr(0, 255));
  }
  if (!file) return Status::Invalid("multipart upload needs a 'file' part");
  if (file->data.empty()) return Status::Invalid("the uploaded file is empty");
  up.bytes = file->data;  // no copy: the part stays in the request body until the blob is written
  if (!up.name && file->filename) up.name = file->filename->substr(0, 255);
  return up;
}

http::Response upload(Services& s, http::Request& req) {
  const std::string& account = req.principal->account_id;
  // Storage quota: an account at its quota is refused before anything is read or fetched; the
  // size is checked again once known. Concurrent uploads may overshoot by what is in flight.
  const int64_t quota =
      effective_storage_quota(*s.storage_quotas, req.principal->plan, req.principal->custom_limits);
  auto used = s.files->usage_bytes(account);
  if (!used.ok()) return http::Response::from_status(used.status());
  if (Status st = check_storage_quota(*used, 1, quota); !st.ok()) return http::Response::from_status(st);
  Result<Upload> up =
      req.content_type() == "multipart/form-data" ? read_multipart_upload(req)
      : req.content_type() == "application/json" || req.content_type().empty()
          ? read_json_upload(s, req)
          : Result<Upload>(Status(Code::kUnsupportedMedia,
                                  "Send application/json ({file_url} or {file_data, file_name}) "
                                  "or multipart/form-data with a 'file' part"));
  if (!up.ok()) return http::Response::from_status(up.status());
  if (!up->owned.empty()) up->bytes = up->owned;
  auto type = fetch::sniff(up->bytes);
  if (!type) {
    return http::Response::from_status(
        Status(Code::kUnsupportedMedia,
               "Unsupported file type: only images (JPEG, PNG, WebP, GIF), videos (MP4, MOV, "
               "WebM, MKV, AVI) and audio (WAV, MP3, AAC, M4A, OGG/Opus, FLAC) are accepted"));
  }
  std::string kind(fetch::media_kind_name(type->kind));
  if (up->wanted_type && *up->wanted_type != kind) {
    return http::Response::from_status(Status(
        Code::kUnsupportedMedia, "file_type is " + *up->wanted_type + " but the content is " + type->mime));
  }
  size_t max = fetch::max_bytes_for(type->kind);
  if (up->bytes.size() > max) {
    return http::Response::from_status(
        Status(Code::kTooLarge,
               "File too large: " + kind + " uploads are limited to " + std::to_string(max >> 20) + " MB"));
  }
  if (Status st = check_storage_quota(*used, static_cast<int64_t>(up->bytes.size()), quota); !st.ok()) {
    return http::Response::from_status(st);
  }
  // An image whose header declares more pixels than we ever decode is refused at upload.
  if (type->kind == fetch::MediaKind::kImage)
    if (auto st = check_image_size(up->bytes, "file"); !st.ok()) return http::Response::from_status(st);
  FileRecord f;
  f.id = new_id("file");
  f.account_id = account;
  f.purpose = "upload";
  f.kind = kind;
  f.mime = type->mime;
  f.ext = type->ext;
  f.size = static_cast<int64_t>(up->bytes.size());
  f.blob_key = "uploads/" + account + "/" + f.id + "." + f.ext;
  f.original_name = up->name;
  f.source_url = up->source_url;
  f.created_at = s.clock->now_s();
  // Written chunk by chunk from the bytes already in memory (no further copy of a 100 MB video).
  if (Status st = s.blobs->put_from(f.blob_key, blob_source_of(up->bytes)); !st.ok())
    return http::Response::from_status(st);
  if (Status st = s.files->insert(f); !st.ok()) {
    (void)s.blobs->remove(f.blob_key);
    return http::Response::from_status(st);
  }
  std::string url = s.absolute_url(file_url_path(f.id, f.ext));
  log::info("file_uploaded", {{"file", f.id}, {"mime", f.mime}, {"bytes", f.size}});
  return http::Response::json(
      200, {{"success", true},
            {"message", "File uploaded successfully"},
            {"data", json::object{{"id", f.id},
                                  {"file_url", url},
                                  {"file_type", kind},
                                  {"mime_type", f.mime},
                                  {"file_size", f.size},
                                  {"original_source", f.source_url      ? json::value(*f.source_url)
                                                      : f.original_name ? json::value(*f.original_name)
                                                                        : json::value(nullptr)},
                                  {"uploaded_at", format_rfc3339(f.created_at)}}}});
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
  up.pool = http::HandlerPool::kOutbound;  // may fetch a URL from another host
  router.add(
      "POST", "/v1/files/upload", [&s](http::Request& req) { return upload(s, req); }, up);

  router.add("GET", "/v1/files/{file}", [&s](http::Request& req) {
    std::string id = file_id_of(req.param("file"));
    auto f = s.files->get(req.principal->account_id, id);
    if (!f.ok()) return http::Response::from_status(f.status());
    auto reader = s.blobs->open(f->blob_key);
    if (!reader.ok()) {
      if (reader.status().code() == Code::kNotFound)
        return http::Response::from_status(Status::NotFound("File not found: " + id));
      return http::Response::from_status(reader.status());
    }
    auto resp = download_response(std::move(reader).value(), f->mime);
    resp.headers.set("Cache-Control", "private, max-age=3600");
    resp.headers.set("Content-Disposition", "inline; filename=\"" + f->id + "." + f->ext + "\"");
    resp.headers.set("X-Content-Type-Options", "nosniff");
    return resp;
  });

  router.add("DELETE", "/v1/files/{file}", [&s](http::Request& req) {
    std::string id = file_id_of(req.param("file"));
    auto f = s.files->get(req.principal->account_id, id);
    if (!f.ok()) return http::Response::from_status(f.status());
    if (f->purpose != "upload") {
      return http::Response::from_status(Status::Conflict(
          "File " + id + " belongs to agent " + f->agent_code.value_or("?") + "; delete the agent instead"));
    }
    auto removed = s.files->remove(req.principal->account_id, id);
    if (!removed.ok()) return http::Response::from_status(removed.status());
    // The record is gone either way; a blob that cannot be deleted now is retried by a job.
    if (Status st = s.blobs->remove(removed->blob_key); !st.ok()) {
      log::warn("blob_delete_failed", {{"key", removed->blob_key}, {"error", st.message()}});
      NewJob job;
      job.kind = std::string(kJobBlobDelete);
      job.account_id = req.principal->account_id;
      job.subject = "blobs:" + id;
      job.payload = json::serialize(json::object{{"keys", json::array{json::value(removed->blob_key)}}});
      job.max_attempts = 10;
      (void)s.job_store->enqueue(job);
    }
    return http::Response::json(200, {{"success", true}, {"id", id}, {"deleted", true}});
  });
}

}  // namespace imago::api
