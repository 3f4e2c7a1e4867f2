#include "util/log.h"

#include <atomic>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>

namespace imago::log {

namespace {
std::atomic<int> g_level{static_cast<int>(Level::kInfo)};

// The buffered mode's writer (set_buffered). Never destroyed: a line logged from another static
// object's destructor must still find it; exit stops it through atexit instead.
struct Writer {
  std::mutex mu;      // pending, idle, stop
  std::mutex out_mu;  // held while a batch goes to stdout, taken under mu: batches keep their order
  std::condition_variable cv;
  std::string pending;
  bool idle = false;
  bool stop = false;
  std::thread thread;
};
std::atomic<bool> g_buffered{false};
std::atomic<Writer*> g_writer{nullptr};  // set once by set_buffered(), read by every logging thread
std::mutex g_start_mu;

// Beyond this many bytes waiting (stdout slower than the lines come), callers write themselves.
constexpr std::size_t kMaxPending = 1 << 20;

void put(std::string_view bytes) {
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  std::fflush(stdout);
}

// Writes what is pending, then `line` (when given), before returning: warnings and errors, a
// backlog, and every line once the writer has stopped.
void write_through(Writer& w, const std::string_view* line) {
  std::unique_lock lock(w.mu);
  std::string batch;
  batch.swap(w.pending);
  if (line) {
    batch.append(*line);
    batch.push_back('\n');
  }
  if (batch.empty()) return;
  std::lock_guard out(w.out_mu);
  lock.unlock();
  put(batch);
}

void writer_loop(Writer& w) {
  std::string batch;
  std::unique_lock lock(w.mu);
  for (;;) {
    while (w.pending.empty() && !w.stop) {
      w.idle = true;
      w.cv.wait(lock);
    }
    w.idle = false;
    if (w.pending.empty()) return;  // stopping, everything written
    batch.swap(w.pending);
    std::unique_lock out(w.out_mu);
    const bool stopping = w.stop;
    lock.unlock();
    put(batch);
    batch.clear();
    out.unlock();
    // A busy server's lines gather for a moment and go out in one write; a quiet one's first
    // line wakes the writer at once (write_line notifies an idle writer).
    if (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
  }
}

void stop_writer() {
  Writer& w = *g_writer.load();
  {
    std::lock_guard lock(w.mu);
    w.stop = true;
  }
  w.cv.notify_one();
  if (w.thread.joinable()) w.thread.join();
  g_buffered.store(false);
  write_through(w, nullptr);  // anything logged while it stopped
}

const char* name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}
}  // namespace

void set_level(Level l) {
  g_level = static_cast<int>(l);
}

bool parse_level(std::string_view s, Level* out) {
  if (s == "debug")
    *out = Level::kDebug;
  else if (s == "info")
    *out = Level::kInfo;
  else if (s == "warn")
    *out = Level::kWarn;
  else if (s == "error")
    *out = Level::kError;
  else
    return false;
  return true;
}

bool enabled(Level l) {
  return static_cast<int>(l) >= g_level.load(std::memory_order_relaxed);
}

namespace {
// "2026-11-21T19:40:00.123Z"; the date part is formatted once per second per thread.
std::string_view timestamp(char (&ts)[40]) {
  thread_local std::time_t cached_s = -1;
  thread_local char cached[32];
  thread_local size_t cached_n = 0;
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  if (t != cached_s) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    cached_n = std::strftime(cached, sizeof cached, "%Y-%m-%dT%H:%M:%S", &tm);
    cached_s = t;
  }
  std::memcpy(ts, cached, cached_n);
  int frac = static_cast<int>(ms % 1000);
  ts[cached_n] = '.';
  ts[cached_n + 1] = static_cast<char>('0' + frac / 100);
  ts[cached_n + 2] = static_cast<char>('0' + frac / 10 % 10);
  ts[cached_n + 3] = static_cast<char>('0' + frac % 10);
  ts[cached_n + 4] = 'Z';
  return std::string_view(ts, cached_n + 5);
}
}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

void begin_line(std::string& out, Level l, std::string_view event) {
  char ts[40];
  out += "{\"ts\":\"";
  out += timestamp(ts);
  out += "\",\"level\":\"";
  out += name(l);
  out += "\",\"event\":";
  append_json_string(out, event);
}

void set_buffered() {
  std::lock_guard lock(g_start_mu);
  if (g_writer.load()) return;
  auto* w = new Writer;
  w->thread = std::thread([w] { writer_loop(*w); });
  g_writer.store(w);
  g_buffered.store(true);
  std::atexit(stop_writer);
}

void write_line(std::string_view line) {
  static Writer* unbuffered = new Writer;  // its mutexes order direct writes; no thread
  Writer* buffered = g_writer.load(std::memory_order_acquire);
  if (!buffered || !g_buffered.load(std::memory_order_acquire)) {
    write_through(buffered ? *buffered : *unbuffered, &line);
    return;
  }
  Writer& w = *buffered;
  std::unique_lock lock(w.mu);
  if (w.pending.size() > kMaxPending) {
    lock.unlock();
    write_through(w, &line);
    return;
  }
  w.pending.append(line);
  w.pending.push_back('\n');
  if (w.idle) {
    w.idle = false;
    lock.unlock();
    w.cv.notify_one();
  }
}

void write(Level l, std::string_view event, boost::json::object fields) {
  if (!enabled(l)) return;
  char ts_buf[40];
  const std::string_view ts = timestamp(ts_buf);

  boost::json::object line;
  line.reserve(fields.size() + 3);
  line["ts"] = ts;
  line["level"] = name(l);
  line["event"] = event;
  for (auto& kv : fields) {
    // ts, level and event belong to the line: a field of that name never replaces them.
    std::string_view k = kv.key();
    if (k == "ts" || k == "level" || k == "event") {
      line["field_" + std::string(k)] = std::move(kv.value());
    } else {
      line[kv.key()] = std::move(kv.value());
    }
  }
  const std::string text = boost::json::serialize(line);
  if (l >= Level::kWarn && g_buffered.load(std::memory_order_acquire)) {
    const std::string_view view = text;
    write_through(*g_writer.load(), &view);  // never left waiting in a buffer when the process dies next
    return;
  }
  write_line(text);
}

}  // namespace imago::log
