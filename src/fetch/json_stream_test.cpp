// Parsing upload bodies in pieces: multipart over a spool file, the streamed JSON object reader
// and the streaming base64 decoder, each compared with the whole-buffer form it replaces.
#include "fetch/json_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <string>

#include "fetch/media_input.h"
#include "fetch/multipart.h"
#include "util/base64.h"

namespace imago::fetch {
namespace {

std::string random_bytes(size_t n, unsigned seed) {
  std::string b(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : b) c = static_cast<char>(rng());
  return b;
}

BodyBytes spooled(const std::string& data) {
  auto f = SpoolFile::create(::testing::TempDir() + "json_stream_" + std::to_string(::getpid()));
  EXPECT_TRUE(f.ok()) << f.status().message();
  std::shared_ptr<SpoolFile> file = std::move(f).value();
  EXPECT_TRUE(file->append(data.data(), data.size()).ok());
  return BodyBytes::whole(file);
}

TEST(StreamedMultipart, PartsAreRangesOfTheSpoolFile) {
  // The file part's closing delimiter straddles the 256 KiB window the file is scanned in.
  const std::string head =
      "--XyZ\r\nContent-Disposition: form-data; name=\"file_type\"\r\n\r\nvideo\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.mp4\"\r\n\r\n";
  const std::string file = random_bytes(256 * 1024 - head.size() - 3, 1);
  const std::string body =
      head + file + "\r\n--XyZ\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\nz\r\n--XyZ--\r\n";
  auto parts = parse_multipart(spooled(body), "XyZ");
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ(*(*parts)[0].data.text(0, 100), "video");
  EXPECT_EQ((*parts)[1].filename.value_or(""), "v.mp4");
  EXPECT_FALSE((*parts)[1].data.in_memory());
  EXPECT_EQ((*parts)[1].data.size(), static_cast<int64_t>(file.size()));
  EXPECT_EQ(*(*parts)[1].data.text(0, file.size() + 10), file);
  EXPECT_EQ(*(*parts)[2].data.text(0, 100), "z");
  // The in-memory parser gives the same parts.
  auto mem = parse_multipart(std::string_view(body), "XyZ");
  ASSERT_TRUE(mem.ok());
  EXPECT_EQ((*mem)[1].data, file);
  // Truncated: the file part never ends.
  EXPECT_FALSE(parse_multipart(spooled(head + file), "XyZ").ok());
}

TEST(StreamedJson, CollectsSmallFieldsAndStreamsTheLargeOne) {
  const std::string payload = random_bytes(700 * 1024, 2);
  const std::string b64 = base64_encode(payload);
  const std::string body =
      R"({"file_name": "a\"b.mp4", "file_type": null, "file_data": ")" + b64 + R"("})" + "\n ";
  for (const BodyBytes& b : {BodyBytes(body), spooled(body)}) {
    std::string decoded;
    InlineDataDecoder dec("file_data", kMaxMediaBytes, [&](std::string_view p) {
      decoded.append(p);
      return Status::Ok();
    });
    auto o = read_json_object_streamed(b, {"file_name", "file_type", "file_data"}, "file_data",
                                       [&](std::string_view t) { return dec.feed(t); });
    ASSERT_TRUE(o.ok()) << o.status().message();
    ASSERT_TRUE(dec.finish().ok());
    EXPECT_TRUE(o->large_given);
    EXPECT_EQ(o->fields.at("file_name").value_or(""), "a\"b.mp4");
    EXPECT_FALSE(o->fields.at("file_type").has_value());
    EXPECT_EQ(decoded, payload);
  }
}

TEST(StreamedJson, RefusesWhatParseJsonObjectWithRefuses) {
  auto ignore = [](std::string_view) { return Status::Ok(); };
  auto err = [&](const std::string& body) {
    auto o = read_json_object_streamed(spooled(body), {"a", "big"}, "big", ignore);
    return o.ok() ? std::string("ok") : o.status().message();
  };
  EXPECT_EQ(err(R"({"a": "x", "big": "y"})"), "ok");
  EXPECT_NE(err(R"({"a": "x")").find("not valid JSON"), std::string::npos);
  EXPECT_NE(err(R"({"a": "x"} x)").find("not valid JSON"), std::string::npos);
  EXPECT_EQ(err(R"([1])"), "Request body must be a JSON object");
  EXPECT_EQ(err(R"("s")"), "Request body must be a JSON object");
  EXPECT_EQ(err(R"({"a": 1})"), "Field 'a' must be a string");
  EXPECT_EQ(err(R"({"a": {"b": "c"}})"), "Field 'a' must be a string");
  EXPECT_EQ(err(R"({"zz": "c"})"), "Unknown field 'zz' (known fields: a, big)");
  EXPECT_EQ(err(R"({"big": "x", "big": "y"})"), "Field 'big' is given twice");
  EXPECT_EQ(err(R"({"a": ")" + std::string(kMaxSmallFieldBytes + 1, 'x') + R"("})"), "Field 'a' is too long");
}

// The streaming decoder accepts and refuses exactly what decode_inline_data does, however the
// text is cut into pieces.
TEST(InlineDataDecoder, MatchesDecodeInlineDataForAnyPieces) {
  const std::string payload = random_bytes(200 * 1024 + 7, 3);
  std::string url_safe = base64_encode(payload);
  for (auto& c : url_safe) c = c == '+' ? '-' : c == '/' ? '_' : c;
  const std::vector<std::string> inputs = {
      base64_encode(payload),
      "data:video/mp4;base64," + base64_encode(payload),
      url_safe,
      "QUJD",
      "QUJDRA",
      "QUJDRA==",
      "QU JD\nRA==",
      "",
      "@@@",
      "QUJD=QUJD",
      "data:text/plain,hello",
      "data:nocomma",
      "Q",
  };
  for (const auto& in : inputs) {
    auto whole = decode_inline_data("file_data", in, 150 * 1024);
    for (size_t piece : {1u, 3u, 1000u, 70000u}) {
      std::string got;
      InlineDataDecoder dec("file_data", 150 * 1024, [&](std::string_view p) {
        got.append(p);
        return Status::Ok();
      });
      Status st;
      for (size_t i = 0; i < in.size() && st.ok(); i += piece)
        st = dec.feed(std::string_view(in).substr(i, piece));
      if (st.ok()) st = dec.finish();
      SCOPED_TRACE(in.substr(0, 30) + " in pieces of " + std::to_string(piece));
      ASSERT_EQ(st.ok(), whole.ok()) << st.message() << " / " << whole.status().message();
      if (whole.ok()) {
        EXPECT_EQ(got, *whole);
      } else {
        EXPECT_EQ(st.code(), whole.status().code());
        EXPECT_EQ(st.message(), whole.status().message());
      }
    }
  }
}

}  // namespace
}  // namespace imago::fetch
