#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "blobs/blob_store.h"
#include "util/random.h"

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

namespace {

namespace fs = std::filesystem;

Status errno_status(const std::string& what) {
  return Status::Internal(what + ": " + std::strerror(errno));
}

class FsBlobStore final : public BlobStore {
 public:
  explicit FsBlobStore(std::string root) : root_(std::move(root)) {}

  Status put(std::string_view key, std::string_view data) override {
    if (!valid_blob_key(key)) return Status::Invalid("invalid blob key");
    fs::path dest = path(key);
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    if (ec) return Status::Internal("cannot create " + dest.parent_path().string() + ": " + ec.message());
    std::string tmp = dest.string() + ".tmp-" + random_hex(8);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return errno_status("cannot create " + tmp);
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::write(fd, data.data() + off, data.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        Status s = errno_status("cannot write " + tmp);
        ::close(fd);
        ::unlink(tmp.c_str());
        return s;
      }
      off += static_cast<size_t>(n);
    }
    // fsync before rename so a crash never leaves a renamed but empty file.
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
      Status s = errno_status("cannot flush " + tmp);
      ::unlink(tmp.c_str());
      return s;
    }
    if (::rename(tmp.c_str(), dest.c_str()) != 0) {
      Status s = errno_status("cannot rename to " + dest.string());
      ::unlink(tmp.c_str());
      return s;
    }
    return Status::Ok();
  }

  Result<std::string> get(std::string_view key) override {
    if (!valid_blob_key(key)) return Status::Invalid("invalid blob key");
    std::string p = path(key).string();
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return Status::NotFound("blob not found");
      return errno_status("cannot open " + p);
    }
    std::string out;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
    char buf[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        Status s = errno_status("cannot read " + p);
        ::close(fd);
        return s;
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
  }

  Status remove(std::string_view key) override {
    if (!valid_blob_key(key)) return Status::Invalid("invalid blob key");
    std::string p = path(key).string();
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) return errno_status("cannot delete " + p);
    return Status::Ok();
  }

  Result<bool> exists(std::string_view key) override {
    auto s = size(key);
    if (s.ok()) return true;
    if (s.status().code() == Code::kNotFound) return false;
    return s.status();
  }

  Result<int64_t> size(std::string_view key) override {
    if (!valid_blob_key(key)) return Status::Invalid("invalid blob key");
    struct stat st {};
    std::string p = path(key).string();
    if (::stat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return Status::NotFound("blob not found");
      return errno_status("cannot stat " + p);
    }
    return static_cast<int64_t>(st.st_size);
  }

 private:
  fs::path path(std::string_view key) const { return fs::path(root_) / std::string(key); }
  std::string root_;
};

}  // namespace

Result<std::unique_ptr<BlobStore>> make_fs_blob_store(const std::string& root) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return Status::Internal("cannot create blob directory " + root + ": " + ec.message());
  return std::unique_ptr<BlobStore>(new FsBlobStore(root));
}

}  // namespace imago
