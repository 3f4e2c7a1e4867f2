#include "util/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace imago {

namespace {

std::atomic<int64_t> g_open{0};

// The window a file range is searched in; large enough that a scan is a few hundred reads for a
// 100 MB upload, small enough not to matter next to the upload itself.
constexpr size_t kFindWindow = 256 * 1024;

std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace

Result<std::unique_ptr<SpoolFile>> SpoolFile::create(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Internal("cannot create spool directory " + dir + ": " + ec.message());
  int fd = -1;
#ifdef O_TMPFILE
  fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (fd < 0) {
    // No O_TMPFILE on this filesystem: a named file, unlinked before anything is written to it.
    std::string templ = dir + "/spool-XXXXXX";
    std::vector<char> name(templ.begin(), templ.end());
    name.push_back('\0');
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) return Status::Internal("cannot create a spool file in " + dir + ": " + errno_text());
    ::unlink(name.data());
  }
  g_open.fetch_add(1);
  return std::unique_ptr<SpoolFile>(new SpoolFile(fd, dir));
}

SpoolFile::~SpoolFile() {
  ::close(fd_);
  g_open.fetch_sub(1);
}

int64_t SpoolFile::open_count() {
  return g_open.load();
}

Status SpoolFile::append(const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd_, data, n, size_);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::Internal("spool write failed: " + errno_text());
    }
    data += w;
    n -= static_cast<size_t>(w);
    size_ += w;
  }
  return Status::Ok();
}

Result<size_t> SpoolFile::read_at(int64_t offset, char* buf, size_t cap) const {
  size_t got = 0;
  while (got < cap && offset + static_cast<int64_t>(got) < size_) {
    ssize_t r = ::pread(fd_, buf + got, cap - got, offset + static_cast<int64_t>(got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::Internal("spool read failed: " + errno_text());
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

Result<size_t> BodyBytes::read(int64_t pos, char* buf, size_t cap) const {
  if (pos < 0 || pos >= size_) return size_t{0};
  size_t n = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(cap), size_ - pos));
  if (!file_) {
    std::memcpy(buf, mem_.data() + pos, n);
    return n;
  }
  return file_->read_at(offset_ + pos, buf, n);
}

Result<std::string> BodyBytes::text(int64_t pos, size_t max) const {
  if (pos < 0 || pos >= size_) return std::string();
  size_t n = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(max), size_ - pos));
  if (!file_) return std::string(mem_.substr(static_cast<size_t>(pos), n));
  std::string out(n, '\0');
  auto got = file_->read_at(offset_ + pos, out.data(), n);
  if (!got.ok()) return got.status();
  out.resize(*got);
  return out;
}

Result<int64_t> BodyBytes::find(std::string_view needle, int64_t from) const {
  if (needle.empty() || needle.size() > 256) return Status::Invalid("bad search string");
  if (from < 0) from = 0;
  if (!file_) {
    if (from > size_) return int64_t{-1};
    size_t at = mem_.find(needle, static_cast<size_t>(from));
    return at == std::string_view::npos ? int64_t{-1} : static_cast<int64_t>(at);
  }
  std::string window;
  int64_t pos = from;
  while (pos + static_cast<int64_t>(needle.size()) <= size_) {
    auto piece = text(pos, kFindWindow);
    if (!piece.ok()) return piece.status();
    window = std::move(piece).value();
    size_t at = window.find(needle);
    if (at != std::string::npos) return pos + static_cast<int64_t>(at);
    if (pos + static_cast<int64_t>(window.size()) >= size_) break;
    // The next window overlaps this one by less than the needle, so a match across the seam is seen.
    pos += static_cast<int64_t>(window.size() - (needle.size() - 1));
  }
  return int64_t{-1};
}

BodyBytes BodyBytes::slice(int64_t pos, int64_t n) const {
  pos = std::clamp<int64_t>(pos, 0, size_);
  n = std::clamp<int64_t>(n, 0, size_ - pos);
  if (!file_) return BodyBytes(mem_.substr(static_cast<size_t>(pos), static_cast<size_t>(n)));
  return BodyBytes(file_, offset_ + pos, n);
}

}  // namespace imago
