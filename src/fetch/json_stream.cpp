#include "fetch/json_stream.h"

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <vector>

#include "util/base64.h"
#include "util/strings.h"

namespace imago::fetch {

namespace {

using boost::json::string_view;
using error_code = boost::system::error_code;

// The piece of a spooled body handed to the parser at once.
constexpr size_t kParsePiece = 64 * 1024;
// Cleaned base64 decoded at once (a multiple of 4): 48 KiB of output.
constexpr size_t kDecodeBlock = 64 * 1024;

std::string mb(size_t bytes) {
  return std::to_string(bytes >> 20) + " MB";
}

// SAX handler for read_json_object_streamed. A callback that finds a problem records it in
// `error` and stops the parser.
struct Handler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = 1024;
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::initializer_list<std::string_view> known;
  std::string_view large;
  const std::function<Status(std::string_view)>* on_large = nullptr;
  StreamedObject out;
  Status error;

  int depth = 0;
  std::string key;
  std::string value;
  bool large_open = false;  // the large field's string is being parsed

  bool stop(Status st, error_code& ec) {
    if (error.ok()) error = std::move(st);
    ec = boost::system::errc::make_error_code(boost::system::errc::operation_canceled);
    return false;
  }
  bool not_string(error_code& ec) {
    return stop(Status::Invalid("Field '" + key.substr(0, 100) + "' must be a string"), ec);
  }
  // A value starts at depth 1 (a member of the top object) or deeper (inside a member's value).
  bool scalar(error_code& ec) {
    if (depth == 0) return stop(Status::Invalid("Request body must be a JSON object"), ec);
    if (depth == 1) return not_string(ec);
    return true;
  }

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_array_begin(error_code& ec) {
    if (!scalar(ec)) return false;
    ++depth;
    return true;
  }
  bool on_array_end(std::size_t, error_code&) {
    --depth;
    return true;
  }
  bool on_object_begin(error_code& ec) {
    if (depth >= 1 && !scalar(ec)) return false;
    ++depth;
    return true;
  }
  bool on_object_end(std::size_t, error_code&) {
    --depth;
    return true;
  }
  bool on_key_part(string_view s, std::size_t, error_code&) {
    if (depth == 1) key.append(s.data(), s.size());
    return true;
  }
  bool on_key(string_view s, std::size_t, error_code& ec) {
    if (depth != 1) return true;
    key.append(s.data(), s.size());
    if (std::find(known.begin(), known.end(), std::string_view(key)) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return stop(Status::Invalid("Unknown field '" + key.substr(0, 100) + "' (known fields: " + list + ")"),
                  ec);
    }
    if (key == large ? out.large_given : out.fields.count(key) > 0)
      return stop(Status::Invalid("Field '" + key + "' is given twice"), ec);
    return true;
  }
  bool string_piece(string_view s, bool last, error_code& ec) {
    if (depth == 0) return stop(Status::Invalid("Request body must be a JSON object"), ec);
    if (depth > 1) return true;
    if (key == large) {
      large_open = true;
      if (Status st = (*on_large)(std::string_view(s.data(), s.size())); !st.ok())
        return stop(std::move(st), ec);
      if (last) {
        out.large_given = true;
        large_open = false;
        key.clear();
      }
      return true;
    }
    if (value.size() + s.size() > kMaxSmallFieldBytes)
      return stop(Status::Invalid("Field '" + key + "' is too long"), ec);
    value.append(s.data(), s.size());
    if (last) {
      out.fields[key] = std::move(value);
      value.clear();
      key.clear();
    }
    return true;
  }
  bool on_string_part(string_view s, std::size_t, error_code& ec) { return string_piece(s, false, ec); }
  bool on_string(string_view s, std::size_t, error_code& ec) { return string_piece(s, true, ec); }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(int64_t, string_view, error_code& ec) { return scalar(ec); }
  bool on_uint64(uint64_t, string_view, error_code& ec) { return scalar(ec); }
  bool on_double(double, string_view, error_code& ec) { return scalar(ec); }
  bool on_bool(bool, error_code& ec) { return scalar(ec); }
  bool on_null(error_code& ec) {
    if (depth == 0) return stop(Status::Invalid("Request body must be a JSON object"), ec);
    if (depth == 1) {
      if (key != large) out.fields[key] = std::nullopt;
      key.clear();
    }
    return true;
  }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace

Result<StreamedObject> read_json_object_streamed(const BodyBytes& body,
                                                 std::initializer_list<std::string_view> known,
                                                 std::string_view large_field,
                                                 const std::function<Status(std::string_view)>& on_large) {
  boost::json::parse_options opts;
  opts.max_depth = 64;
  boost::json::basic_parser<Handler> p(opts);
  p.handler().known = known;
  p.handler().large = large_field;
  p.handler().on_large = &on_large;
  std::vector<char> buf(kParsePiece);
  int64_t pos = 0;
  error_code ec;
  bool trailing = false;  // the document ended: only whitespace may follow
  while (pos < body.size()) {
    auto n = body.read(pos, buf.data(), buf.size());
    if (!n.ok()) return n.status();
    pos += static_cast<int64_t>(*n);
    std::string_view piece(buf.data(), *n);
    if (!trailing) {
      size_t used = p.write_some(true, piece.data(), piece.size(), ec);
      if (!p.handler().error.ok()) return p.handler().error;
      if (ec) return Status::Invalid("Request body is not valid JSON: " + ec.message());
      piece.remove_prefix(used);
      trailing = p.done();
    }
    for (char c : piece) {
      if (!is_space(c)) return Status::Invalid("Request body is not valid JSON: extra data");
    }
  }
  if (!trailing) {
    p.write_some(false, nullptr, 0, ec);
    if (!p.handler().error.ok()) return p.handler().error;
    if (ec) return Status::Invalid("Request body is not valid JSON: " + ec.message());
  }
  return std::move(p.handler().out);
}

InlineDataDecoder::InlineDataDecoder(std::string field, size_t max,
                                     std::function<Status(std::string_view)> sink)
    : field_(std::move(field)), max_(max), sink_(std::move(sink)) {}

Status InlineDataDecoder::invalid() const {
  return Status::Invalid(field_ + " must be an http(s) URL or base64 data");
}

Status InlineDataDecoder::feed(std::string_view text) {
  if (in_payload_) return consume(text);
  // Up to the comma of a data: URI header (bounded), or the first characters of bare base64.
  prefix_.append(text);
  if (prefix_.size() < 5) return Status::Ok();
  std::string head = std::move(prefix_);
  prefix_.clear();
  std::string_view rest = head;
  if (iequals(rest.substr(0, 5), "data:")) {
    auto comma = rest.find(',');
    if (comma == std::string_view::npos) {
      if (head.size() > 256) return Status::Invalid(field_ + ": malformed data: URI");
      prefix_ = std::move(head);
      return Status::Ok();
    }
    std::string meta = to_lower(rest.substr(5, comma - 5));
    if (meta.size() < 7 || meta.substr(meta.size() - 7) != ";base64")
      return Status::Invalid(field_ + ": data: URI must be base64-encoded (;base64)");
    rest = rest.substr(comma + 1);
  }
  in_payload_ = true;
  return consume(rest);
}

Status InlineDataDecoder::consume(std::string_view text) {
  for (char c : text) {
    if (is_space(c)) continue;
    if (c == '=') {
      padded_ = true;
    } else if (padded_) {
      return invalid();  // padding only at the end
    }
    pending_.push_back(c);
  }
  return flush(false);
}

Status InlineDataDecoder::flush(bool last) {
  // Decode whole blocks of 4 characters before any padding; the rest waits for more or the end.
  while (!padded_ && pending_.size() >= kDecodeBlock) {
    auto piece = base64_decode(std::string_view(pending_).substr(0, kDecodeBlock));
    if (!piece) return invalid();
    pending_.erase(0, kDecodeBlock);
    decoded_ += piece->size();
    if (decoded_ > max_) return Status(Code::kTooLarge, field_ + ": data is larger than " + mb(max_));
    if (Status st = sink_(*piece); !st.ok()) return st;
  }
  if (!last) {
    if (pending_.size() > 2 * kDecodeBlock) return invalid();  // only padding could make it grow
    return Status::Ok();
  }
  auto piece = base64_decode(pending_);
  if (!piece) return invalid();
  pending_.clear();
  decoded_ += piece->size();
  if (decoded_ > max_) return Status(Code::kTooLarge, field_ + ": data is larger than " + mb(max_));
  if (decoded_ == 0) return Status::Invalid(field_ + ": data is empty");
  if (!piece->empty()) return sink_(*piece);
  return Status::Ok();
}

Status InlineDataDecoder::finish() {
  if (!in_payload_) {
    // A short value: a data: URI header without its comma, or a few characters of base64.
    if (prefix_.size() >= 5) return Status::Invalid(field_ + ": malformed data: URI");
    in_payload_ = true;
    std::string rest = std::move(prefix_);
    prefix_.clear();
    if (Status st = consume(rest); !st.ok()) return st;
  }
  return flush(true);
}

}  // namespace imago::fetch
