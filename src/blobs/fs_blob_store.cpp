#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "blobs/blob_store.h"
#include "util/random.h"

namespace imago {

namespace {

namespace fs = std::filesystem;

Status errno_status(const std::string& what) {
  return Status::Internal(what + ": " + std::strerror(errno));
}

// Reads from its own descriptor: a rename over the key later leaves this version readable.
class FsBlobReader final : public BlobReader {
 public:
  FsBlobReader(int fd, int64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  ~FsBlobReader() override { ::close(fd_); }
  int64_t size() const override { return size_; }
  Result<std::string> read(int64_t offset, size_t max) override {
    if (offset < 0) return Status::Invalid("negative blob offset");
    if (offset >= size_) return std::string();
    std::string out(static_cast<size_t>(std::min<int64_t>(std::min(max, kBlobChunkBytes), size_ - offset)),
                    '\0');
    size_t got = 0;
    while (got < out.size()) {
      ssize_t n = ::pread(fd_, out.data() + got, out.size() - got, offset + static_cast<int64_t>(got));
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno_status("cannot read " + path_);
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    out.resize(got);
    return out;
  }

 private:
  int fd_;
  int64_t size_;
  std::string path_;
};

class FsBlobStore final : public BlobStore {
 public:
  explicit FsBlobStore(std::string root) : root_(std::move(root)) {}

  Status put_from(std::string_view key, const BlobSource& source) override {
    if (!valid_blob_key(key)) return Status::Invalid("invalid blob key");
    fs::path dest = path(key);
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    if (ec) return Status::Internal("cannot create " + dest.parent_path().string() + ": " + ec.message());
    std::string tmp = dest.string() + ".tmp-" + random_hex(8);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return errno_status("cannot create " + tmp);
    auto fail = [&](Status s) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    };
    std::string buf(kBlobChunkBytes, '\0');
    while (true) {
      auto got = source(buf.data(), buf.size());
      if (!got.ok()) return fail(got.status());
      if (*got == 0) break;
      if (*got > buf.size()) return fail(Status::Internal("blob source overran its buffer"));
      size_t off = 0;
      while (off < *got) {
        ssize_t n = ::write(fd, buf.data() + off, *got - off);
        if (n < 0) {
          if (errno == EINTR) continue;
          return fail(errno_status("cannot write " + tmp));
        }
        off += static_cast<size_t>(n);
      }
    }
    // fsync before rename so a crash never leaves a renamed but empty file.
    if (::fsync(fd) != 0) return fail(errno_status("cannot flush " + tmp));
    if (::close(fd) != 0) {
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

  Result<std::unique_ptr<BlobReader>> open(std::string_view key) override {
    if (!valid_blob_key(key)) return Status::Invalid("invalid blob key");
    std::string p = path(key).string();
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return Status::NotFound("blob not found");
      return errno_status("cannot open " + p);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      Status s = errno_status("cannot stat " + p);
      ::close(fd);
      return s;
    }
    return std::unique_ptr<BlobReader>(new FsBlobReader(fd, static_cast<int64_t>(st.st_size), std::move(p)));
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
