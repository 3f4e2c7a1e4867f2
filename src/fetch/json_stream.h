// JSON request bodies with one large field, read in pieces: an upload's {"file_data": "<base64>"}
// can be 140 MB of JSON, which json::parse would hold whole (and then the decoded copy). Here the
// body is parsed piece by piece from memory or a spool file, the small string fields are collected,
// and the large field's text is passed on as it is parsed, through a streaming base64 decoder.
#pragma once
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "util/spool.h"
#include "util/status.h"

namespace imago::fetch {

// The fields of a flat JSON object other than the large one: a present field maps to its string,
// or to nullopt for JSON null. `large_given`: the large field held a string.
struct StreamedObject {
  std::map<std::string, std::optional<std::string>> fields;
  bool large_given = false;
};

// The most a small field may hold (URLs, names).
inline constexpr size_t kMaxSmallFieldBytes = 64 * 1024;

// Parses `body` as one JSON object whose members are all in `known` and all strings or null (the
// same errors as parse_json_object_with and get_string). The text of `large_field` goes to
// `on_large` in pieces, unescaped; its error ends the parse and is returned.
Result<StreamedObject> read_json_object_streamed(const BodyBytes& body,
                                                 std::initializer_list<std::string_view> known,
                                                 std::string_view large_field,
                                                 const std::function<Status(std::string_view)>& on_large);

// decode_inline_data piece by piece: a data: URI or bare base64 (standard or URL alphabet,
// whitespace ignored), at most `max` decoded bytes, handed to `sink` in pieces of at most 48 KiB.
// Same messages and codes as decode_inline_data.
class InlineDataDecoder {
 public:
  InlineDataDecoder(std::string field, size_t max, std::function<Status(std::string_view)> sink);
  Status feed(std::string_view text);
  Status finish();
  size_t decoded() const { return decoded_; }

 private:
  Status consume(std::string_view text);
  Status flush(bool last);
  Status invalid() const;

  std::string field_;
  size_t max_;
  std::function<Status(std::string_view)> sink_;
  std::string prefix_;  // the start of the value while it may still be a data: URI header
  bool in_payload_ = false;
  bool padded_ = false;  // saw '=': only more '=' (and whitespace) may follow
  std::string pending_;  // cleaned base64 not yet decoded
  size_t decoded_ = 0;
};

}  // namespace imago::fetch
