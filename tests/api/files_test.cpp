// File upload (SPEC 4.18) and downloads over real HTTP.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"
#include "util/crypto.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::string error_code(const HttpResponse& r) {
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("error")) return "";
  return std::string(v.at("error").at("code").as_string());
}

HttpResponse multipart(const TestServer& s, const std::string& secret, const std::string& filename,
                       const std::string& bytes, const std::string& extra = "") {
  std::string b = "----imagoTestBoundary7";
  std::string body = "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename +
                     "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + bytes + "\r\n" + extra + "--" +
                     b + "--\r\n";
  HttpRequestOptions o;
  o.content_type = "multipart/form-data; boundary=" + b;
  o.timeout_ms = 60000;
  return s.request("POST", "/v1/files/upload", body, secret, o);
}

TEST(Files, UploadByBase64MultipartAndUrlThenUseIt) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  auto other = s.create_account("enterprise", 1000);

  auto r = s.post(
      "/v1/files/upload",
      json::serialize(json::object{{"file_data", base64_encode(face_jpeg())}, {"file_name", "me.jpg"}}),
      acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = r.json().at("data");
  std::string id = str(d, "id");
  std::string url = str(d, "file_url");
  EXPECT_EQ(id.rfind("file_", 0), 0u);
  EXPECT_EQ(url, s.url() + "/v1/files/" + id + ".jpg");
  EXPECT_EQ(str(d, "file_type"), "image");
  EXPECT_EQ(str(d, "mime_type"), "image/jpeg");
  EXPECT_EQ(d.at("file_size").as_int64(), static_cast<int64_t>(face_jpeg().size()));
  // Downloads need the owner's key; everyone else sees nothing.
  auto dl = s.get("/v1/files/" + id + ".jpg", acct.api_secret);
  ASSERT_EQ(dl.status, 200);
  EXPECT_EQ(dl.body, face_jpeg());
  EXPECT_EQ(dl.header("content-type"), "image/jpeg");
  EXPECT_EQ(s.get("/v1/files/" + id, acct.api_secret).body, face_jpeg());
  EXPECT_EQ(s.get("/v1/files/" + id).status, 401);
  EXPECT_EQ(s.get("/v1/files/" + id, other.api_secret).status, 404);

  auto m = multipart(s, acct.api_secret, "face.jpg", face_jpeg());
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_EQ(str(m.json().at("data"), "mime_type"), "image/jpeg");

  auto u =
      s.post("/v1/files/upload",
             json::serialize(json::object{{"file_url", fx.put_file("f.jpg", face_jpeg())}}), acct.api_secret);
  ASSERT_EQ(u.status, 200) << u.body;
  EXPECT_EQ(str(u.json().at("data"), "original_source"), fx.url() + "/files/f.jpg");

  // The returned URL is accepted by generate, by its owner only.
  auto other_gen =
      s.post("/v1/agent/generate", json::serialize(json::object{{"image", url}}), other.api_secret);
  EXPECT_EQ(other_gen.status, 400) << other_gen.body;
  auto gen = s.post("/v1/agent/generate", json::serialize(json::object{{"image", url}}), acct.api_secret);
  ASSERT_EQ(gen.status, 200) << gen.body;
  auto st = wait_agent(s, acct.api_secret, str(gen.json(), "agent_id"));
  EXPECT_EQ(str(st, "status"), "ready") << json::serialize(st);

  auto del = s.del("/v1/files/" + id, acct.api_secret);
  EXPECT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(s.get("/v1/files/" + id, acct.api_secret).status, 404);
}

TEST(Files, SizeAndTypeLimits) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  // Over 10 MB of image: 413, by base64, multipart and URL.
  std::string big_image = face_jpeg() + std::string((10 << 20) + 1, '\0');
  auto b64 = s.post("/v1/files/upload",
                    json::serialize(json::object{{"file_data", base64_encode(big_image)}}), acct.api_secret);
  EXPECT_EQ(b64.status, 413) << b64.body;
  EXPECT_EQ(error_code(b64), "PAYLOAD_TOO_LARGE");
  EXPECT_EQ(multipart(s, acct.api_secret, "big.jpg", big_image).status, 413);
  auto by_url =
      s.post("/v1/files/upload",
             json::serialize(json::object{{"file_url", fx.put_file("big.jpg", big_image)}}), acct.api_secret);
  EXPECT_EQ(by_url.status, 413) << by_url.body;
  // Audio over its 25 MB limit (a WAV header and silence).
  std::string wav = std::string("RIFF\0\0\0\0WAVEfmt ", 16) + std::string((25 << 20) + 10, '\0');
  EXPECT_EQ(multipart(s, acct.api_secret, "long.wav", wav).status, 413);
  // Not an image, video or audio: 415, whatever the name says.
  auto pdf = multipart(s, acct.api_secret, "photo.jpg", "%PDF-1.7 definitely a document");
  EXPECT_EQ(pdf.status, 415) << pdf.body;
  EXPECT_EQ(error_code(pdf), "UNSUPPORTED_MEDIA_TYPE");
  auto typed =
      s.post("/v1/files/upload",
             json::serialize(json::object{{"file_data", base64_encode(face_jpeg())}, {"file_type", "video"}}),
             acct.api_secret);
  EXPECT_EQ(typed.status, 415) << typed.body;
  HttpRequestOptions xml;
  xml.content_type = "application/xml";
  EXPECT_EQ(s.request("POST", "/v1/files/upload", "<a/>", acct.api_secret, xml).status, 415);
  // Malformed requests: 400.
  EXPECT_EQ(s.post("/v1/files/upload", R"({"file_data": "@@@"})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/files/upload", R"({})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/files/upload", R"({"file_url": "ftp://x/y"})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/files/upload", json::serialize(json::object{{"file_url", fx.url() + "/status/500"}}),
                   acct.api_secret)
                .status,
            400);
  // A video up to 100 MB is fine (MP4 signature and padding).
  std::string mp4 = std::string(
                        "\0\0\0\x18"
                        "ftypisom\0\0\0\0",
                        16) +
                    std::string(12 << 20, '\0');
  for (size_t i = 16; i < mp4.size(); ++i) mp4[i] = static_cast<char>((i * 131) >> 5);  // order shows
  auto v = multipart(s, acct.api_secret, "clip.mp4", mp4);
  ASSERT_EQ(v.status, 200) << v.body;
  EXPECT_EQ(str(v.json().at("data"), "file_type"), "video");
  // Downloaded back whole, streamed from the blob store chunk by chunk (chunked encoding).
  std::string path = str(v.json().at("data"), "file_url").substr(s.url().size());
  auto d = s.get(path, acct.api_secret);
  ASSERT_EQ(d.status, 200);
  EXPECT_EQ(d.header("content-type"), "video/mp4");
  EXPECT_EQ(d.header("transfer-encoding"), "chunked");
  EXPECT_EQ(d.body.size(), mp4.size());
  EXPECT_TRUE(d.body == mp4);
  EXPECT_EQ(s.get(path, "wrong").status, 401);
}

// ---- large uploads: spooled to a nameless temporary file, never held whole ----------------------

// An MP4 header and random bytes: sniffed as video, incompressible, different each run of bytes.
std::string fake_mp4(size_t n) {
  std::string b(
      "\x00\x00\x00\x18"
      "ftypmp42\x00\x00\x00\x00mp42isom",
      24);
  uint64_t x = 88172645463325252ull;
  while (b.size() < n) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift: fast, enough for test bytes
    b.push_back(static_cast<char>(x));
  }
  return b;
}

// Descriptors of the server process that are spool files (O_TMPFILE: "<dir>/#123 (deleted)").
int open_spool_files(int pid) {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code lec;
    auto target = std::filesystem::read_symlink(it->path(), lec).string();
    if (!lec && target.find("/spool/") != std::string::npos) ++n;
  }
  return n;
}

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{30, 0};  // a missing answer fails the test instead of hanging it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void send_all(int fd, const std::string& data) {
  for (size_t sent = 0; sent < data.size();) {
    ssize_t w = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    ASSERT_GT(w, 0);
    sent += static_cast<size_t>(w);
  }
}

// Waits (bounded) for the server to hold `n` spool files; the condition is tested, not the time.
bool spool_files_become(int pid, int n) {
  for (int i = 0; i < 1000 && open_spool_files(pid) != n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return open_spool_files(pid) == n;
}

size_t files_under(const std::string& dir) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file()) ++n;
  return n;
}

TEST(Files, LargeUploadsAreSpooledAndArriveIntact) {
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  const std::string video = fake_mp4(3 << 20);  // above the 1 MiB spool threshold

  auto m = multipart(s, acct.api_secret, "clip.mp4", video,
                     "------imagoTestBoundary7\r\nContent-Disposition: form-data; name=\"file_type\"\r\n\r\n"
                     "video\r\n");
  ASSERT_EQ(m.status, 200) << m.body;
  auto d = m.json().at("data");
  EXPECT_EQ(str(d, "file_type"), "video");
  EXPECT_EQ(d.at("file_size").as_int64(), static_cast<int64_t>(video.size()));
  auto dl = s.get("/v1/files/" + str(d, "id"), acct.api_secret);
  ASSERT_EQ(dl.status, 200);
  EXPECT_EQ(sha256_hex(dl.body), sha256_hex(video));

  // As base64 in JSON (4 MB of JSON): decoded while it is parsed, into a second spool file.
  HttpRequestOptions o;
  o.timeout_ms = 60000;
  auto j =
      s.request("POST", "/v1/files/upload",
                json::serialize(json::object{{"file_data", "data:video/mp4;base64," + base64_encode(video)},
                                             {"file_name", "clip.mp4"}}),
                acct.api_secret, o);
  ASSERT_EQ(j.status, 200) << j.body;
  auto jd = j.json().at("data");
  EXPECT_EQ(str(jd, "original_source"), "clip.mp4");
  auto jdl = s.get("/v1/files/" + str(jd, "id"), acct.api_secret);
  EXPECT_EQ(sha256_hex(jdl.body), sha256_hex(video));

  // Refused content in a spooled body: the handler fails, nothing is stored.
  auto bad = multipart(s, acct.api_secret, "x.bin", std::string(2 << 20, 'x'));
  EXPECT_EQ(bad.status, 415) << bad.body;
  EXPECT_EQ(error_code(bad), "UNSUPPORTED_MEDIA_TYPE");
  auto bad_json =
      s.post("/v1/files/upload", R"({"file_data": ")" + std::string(2 << 20, '@') + R"("})", acct.api_secret);
  EXPECT_EQ(bad_json.status, 400) << bad_json.body;
  EXPECT_TRUE(spool_files_become(s.pid(), 0));
  EXPECT_EQ(files_under(s.data_dir() + "/spool"), 0u);
}

TEST(Files, AbortedUploadLeavesNothingAndOversizeIsRefused) {
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  const std::string video = fake_mp4(8 << 20);
  const std::string b = "----imagoTestBoundary7";
  const std::string head =
      "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.mp4\"\r\n\r\n";
  {
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);
    send_all(fd, "POST /v1/files/upload HTTP/1.1\r\nHost: 127.0.0.1\r\napi-secret: " + acct.api_secret +
                     "\r\nContent-Type: multipart/form-data; boundary=" + b +
                     "\r\nContent-Length: " + std::to_string(head.size() + 50 * 1000 * 1000) + "\r\n\r\n" +
                     head + video);  // 8 MB of the declared 50 MB
    EXPECT_TRUE(spool_files_become(s.pid(), 1)) << "the body is being written to a spool file";
    ::close(fd);  // the client goes away mid-body
  }
  EXPECT_TRUE(spool_files_become(s.pid(), 0)) << "the partial body's file was closed";
  EXPECT_EQ(files_under(s.data_dir() + "/spool"), 0u);
  EXPECT_EQ(files_under(s.data_dir() + "/blobs"), 0u);  // no blob (the handler never ran)

  // Over the documented maximum: 413 with the envelope, before any of the body is sent.
  int fd = connect_to(s.port());
  ASSERT_GE(fd, 0);
  send_all(fd, "POST /v1/files/upload HTTP/1.1\r\nHost: 127.0.0.1\r\napi-secret: " + acct.api_secret +
                   "\r\nContent-Type: multipart/form-data; boundary=" + b +
                   "\r\nContent-Length: " + std::to_string((140u << 20) + 1) + "\r\n\r\n");
  std::string answer;
  char buf[4096];
  for (ssize_t r; (r = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<size_t>(r));
  ::close(fd);
  ASSERT_EQ(answer.rfind("HTTP/1.1 413 ", 0), 0u) << answer;
  auto big = json::parse(answer.substr(answer.find("\r\n\r\n") + 4));
  EXPECT_EQ(big.at("error").at("code").as_string(), "PAYLOAD_TOO_LARGE");
  EXPECT_EQ(big.at("error").at("httpStatus").as_int64(), 413);
  EXPECT_EQ(big.at("status").as_string(), "error");
  EXPECT_EQ(big.at("status_code").as_int64(), 413);
}

}  // namespace
}  // namespace imago::testing
