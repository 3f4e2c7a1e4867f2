#include "util/shared_counter.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace imago {

static_assert(std::atomic_ref<uint64_t>::is_always_lock_free,
              "a lock-free 64-bit atomic is address-free, so it works across processes");

Result<std::unique_ptr<SharedCounter>> SharedCounter::open(const std::string& path, const std::string& like) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    mode_t mode = 0600;
    struct stat ls {};
    if (!like.empty() && ::stat(like.c_str(), &ls) == 0) mode = ls.st_mode & 0666;
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, mode);
    if (fd >= 0) fchmod(fd, mode);  // the umask does not decide who may signal key changes
  }
  if (fd < 0) return Status::Internal("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  // Two processes may create the file at once: growing a short file to 8 bytes is idempotent and
  // never touches a counter another process has already moved.
  if (fstat(fd, &st) != 0 ||
      (st.st_size < static_cast<off_t>(sizeof(uint64_t)) && ftruncate(fd, sizeof(uint64_t)) != 0)) {
    int e = errno;
    ::close(fd);
    return Status::Internal("cannot size " + path + ": " + std::strerror(e));
  }
  void* p = mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) return Status::Internal("cannot map " + path + ": " + std::strerror(e));
  return std::unique_ptr<SharedCounter>(new SharedCounter(static_cast<uint64_t*>(p)));
}

SharedCounter::~SharedCounter() {
  munmap(word_, sizeof(uint64_t));
}

uint64_t SharedCounter::load() const {
  return std::atomic_ref<uint64_t>(*word_).load(std::memory_order_acquire);
}

void SharedCounter::increment() {
  std::atomic_ref<uint64_t>(*word_).fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace imago
