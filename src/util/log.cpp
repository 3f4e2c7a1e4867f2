#include "util/log.h"

#include <atomic>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

namespace imago::log {

namespace {
std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::mutex g_mu;

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

void write_line(std::string_view line) {
  std::lock_guard lock(g_mu);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
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
  write_line(boost::json::serialize(line));
}

}  // namespace imago::log
