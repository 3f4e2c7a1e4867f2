#include "util/log.h"

#include <atomic>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
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

void write(Level l, std::string_view event, boost::json::object fields) {
  if (!enabled(l)) return;
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char ts[40];
  size_t n = std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(ts + n, sizeof ts - n, ".%03dZ", static_cast<int>(ms % 1000));

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
  std::string s = boost::json::serialize(line);
  s.push_back('\n');
  std::lock_guard lock(g_mu);
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

}  // namespace imago::log
