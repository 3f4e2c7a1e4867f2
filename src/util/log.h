// Structured logging: one JSON object per line on stdout, e.g.
//   {"ts":"2026-11-21T19:40:00.123Z","level":"info","event":"request","route":"GET /v1/me",...}
// Never pass a secret in `fields`.
#pragma once
#include <boost/json/object.hpp>
#include <string>
#include <string_view>

namespace imago::log {

enum class Level { kDebug = 0, kInfo, kWarn, kError };

void set_level(Level l);
// Lines are written to stdout as they are logged (and flushed), one write per line, unless the
// process calls set_buffered() (the server does): from then on info and debug lines gather in a
// buffer that one writer thread writes out, within about a millisecond, in batches, so a busy
// server makes one write per batch instead of one per request. Warnings and errors are still
// written at once (after what is pending, in order), and exit writes whatever is left; a crash
// can lose the last millisecond of info lines.
void set_buffered();
bool parse_level(std::string_view s, Level* out);
bool enabled(Level l);
void write(Level l, std::string_view event, boost::json::object fields = {});

// For a hot path that formats its own line (the HTTP access log, one per request): appends the
// line's start `{"ts":"...","level":"...","event":"<event>"` to `out` (the fields follow as
// `,"name":value`), and writes a finished line (`}` included, no newline) like write() does.
void begin_line(std::string& out, Level l, std::string_view event);
void write_line(std::string_view line);
// Appends `s` to `out` as a JSON string literal (quotes included), escaped as write() would.
void append_json_string(std::string& out, std::string_view s);

inline void debug(std::string_view e, boost::json::object f = {}) {
  write(Level::kDebug, e, std::move(f));
}
inline void info(std::string_view e, boost::json::object f = {}) {
  write(Level::kInfo, e, std::move(f));
}
inline void warn(std::string_view e, boost::json::object f = {}) {
  write(Level::kWarn, e, std::move(f));
}
inline void error(std::string_view e, boost::json::object f = {}) {
  write(Level::kError, e, std::move(f));
}

}  // namespace imago::log
