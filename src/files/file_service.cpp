#include "files/file_service.h"

#include <boost/json.hpp>

#include "fetch/fetcher.h"
#include "fetch/sniff.h"
#include "limits/storage_quota.h"
#include "store/job_store.h"
#include "util/image_size.h"
#include "util/log.h"
#include "util/random.h"

namespace imago::files {

namespace json = boost::json;

// More than any magic number fetch::sniff looks at.
constexpr size_t kSniffBytes = 4096;

// Reads an upload (in memory or a range of the request's spool file) into the store piece by piece.
BlobSource blob_source_of(const BodyBytes& data) {
  auto pos = std::make_shared<int64_t>(0);
  return [data, pos](char* buf, size_t cap) -> Result<size_t> {
    auto n = data.read(*pos, buf, cap);
    if (n.ok()) *pos += static_cast<int64_t>(*n);
    return n;
  };
}

Status write_file(BlobStore& blobs, FileStore& files, FileRecord& f, const BlobSource& source,
                  const std::function<Status(const FileRecord&)>& record) {
  int64_t written = 0;
  Status put = blobs.put_from(f.blob_key, [&](char* buf, size_t cap) -> Result<size_t> {
    auto n = source(buf, cap);
    if (n.ok()) written += static_cast<int64_t>(*n);
    return n;
  });
  if (!put.ok()) return put;
  f.size = written;
  Status done = record ? record(f) : files.insert(f);
  if (!done.ok()) (void)blobs.remove(f.blob_key);
  return done;
}

Result<std::string> FileService::fetch_url(const std::string& url) {
  auto parsed = fetch::parse_fetch_url(url);
  if (!parsed.ok()) return Status::Invalid("file_url: " + parsed.status().message());
  fetch::FetchRequest fr;
  fr.url = url;
  fr.max_bytes = fetch::kMaxMediaBytes;
  fr.timeout_ms = kUploadFetchTimeoutMs;
  auto r = d_.fetcher->fetch(fr);
  if (!r.ok()) {
    if (r.status().code() == Code::kTooLarge)
      return Status(Code::kTooLarge, "file_url: " + r.status().message());
    // Unreachable, refused or timed out: the request's URL is at fault, not this service.
    return Status::Invalid("file_url: " + r.status().message());
  }
  if (r->status < 200 || r->status >= 300) {
    return Status::Invalid("file_url: " + url + " answered HTTP " + std::to_string(r->status));
  }
  return std::move(r->body);
}

Result<FileRecord> FileService::upload(const std::string& account_id, int64_t quota_bytes,
                                       const std::function<Result<UploadInput>()>& read) {
  auto used = d_.files->usage_bytes(account_id);
  if (!used.ok()) return used.status();
  if (Status st = check_storage_quota(*used, 1, quota_bytes); !st.ok()) return st;
  auto up = read();
  if (!up.ok()) return up.status();
  if (up->url) {
    auto fetched = fetch_url(*up->url);
    if (!fetched.ok()) return fetched.status();
    up->owned = std::move(fetched).value();
  }
  const BodyBytes bytes = up->bytes.empty() ? BodyBytes(up->owned) : up->bytes;
  // Typing needs only the first bytes (magic numbers); a spooled upload is never read whole.
  auto head = bytes.text(0, kSniffBytes);
  if (!head.ok()) return head.status();
  auto type = fetch::sniff(*head);
  if (!type) {
    return Status(Code::kUnsupportedMedia,
                  "Unsupported file type: only images (JPEG, PNG, WebP, GIF), videos (MP4, MOV, "
                  "WebM, MKV, AVI) and audio (WAV, MP3, AAC, M4A, OGG/Opus, FLAC) are accepted");
  }
  std::string kind(fetch::media_kind_name(type->kind));
  if (up->wanted_type && *up->wanted_type != kind) {
    return Status(Code::kUnsupportedMedia,
                  "file_type is " + *up->wanted_type + " but the content is " + type->mime);
  }
  size_t max = fetch::max_bytes_for(type->kind);
  if (bytes.size() > static_cast<int64_t>(max)) {
    return Status(Code::kTooLarge,
                  "File too large: " + kind + " uploads are limited to " + std::to_string(max >> 20) + " MB");
  }
  if (Status st = check_storage_quota(*used, bytes.size(), quota_bytes); !st.ok()) return st;
  // An image whose header declares more pixels than we ever decode is refused at upload.
  // Images are read whole for it: at most kMaxImageBytes (checked above), unlike videos.
  if (type->kind == fetch::MediaKind::kImage) {
    std::string image_copy;
    std::string_view image = bytes.view();
    if (!bytes.in_memory()) {
      auto whole = bytes.text(0, max);
      if (!whole.ok()) return whole.status();
      image_copy = std::move(whole).value();
      image = image_copy;
    }
    if (Status st = check_image_size(image, "file"); !st.ok()) return st;
  }
  FileRecord f;
  f.id = new_id("file");
  f.account_id = account_id;
  f.purpose = "upload";
  f.kind = kind;
  f.mime = type->mime;
  f.ext = type->ext;
  f.blob_key = "uploads/" + account_id + "/" + f.id + "." + f.ext;
  f.original_name = up->name;
  f.source_url = up->url;
  f.created_at = d_.clock->now_s();
  // Written chunk by chunk from memory or the spool file (no further copy of a 100 MB video).
  if (Status st = write_file(*d_.blobs, *d_.files, f, files::blob_source_of(bytes)); !st.ok()) return st;
  log::info("file_uploaded", {{"file", f.id}, {"mime", f.mime}, {"bytes", f.size}});
  return f;
}

Result<Download> FileService::open(const std::string& account_id, const std::string& id) {
  auto f = d_.files->get(account_id, id);
  if (!f.ok()) return f.status();
  auto reader = d_.blobs->open(f->blob_key);
  if (!reader.ok()) {
    if (reader.status().code() == Code::kNotFound) return Status::NotFound("File not found: " + id);
    return reader.status();
  }
  return Download{std::move(f).value(), std::move(reader).value()};
}

Status FileService::remove_upload(const std::string& account_id, const std::string& id) {
  auto f = d_.files->get(account_id, id);
  if (!f.ok()) return f.status();
  if (f->purpose != "upload") {
    return Status::Conflict("File " + id + " belongs to agent " + f->agent_code.value_or("?") +
                            "; delete the agent instead");
  }
  auto removed = d_.files->remove(account_id, id);
  if (!removed.ok()) return removed.status();
  // The record is gone either way; a blob that cannot be deleted now is retried by a job.
  if (Status st = d_.blobs->remove(removed->blob_key); !st.ok()) {
    log::warn("blob_delete_failed", {{"key", removed->blob_key}, {"error", st.message()}});
    NewJob job;
    job.kind = std::string(kJobBlobDelete);
    job.account_id = account_id;
    job.subject = "blobs:" + id;
    job.payload = json::serialize(json::object{{"keys", json::array{json::value(removed->blob_key)}}});
    job.max_attempts = 10;
    (void)d_.jobs->enqueue(job);
  }
  return Status::Ok();
}

}  // namespace imago::files
