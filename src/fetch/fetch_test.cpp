#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "fetch/address.h"
#include "fetch/fetcher.h"
#include "fetch/media_input.h"
#include "fetch/multipart.h"
#include "fetch/sniff.h"
#include "util/base64.h"

namespace imago::fetch {
namespace {

AddressClass cls(const char* ip) {
  auto c = classify_text(ip);
  EXPECT_TRUE(c.has_value()) << ip;
  return c.value_or(AddressClass::kPublic);
}

TEST(Address, ClassifiesIPv4) {
  EXPECT_EQ(cls("8.8.8.8"), AddressClass::kPublic);
  EXPECT_EQ(cls("93.184.216.34"), AddressClass::kPublic);
  EXPECT_EQ(cls("10.1.2.3"), AddressClass::kPrivate);
  EXPECT_EQ(cls("172.16.0.1"), AddressClass::kPrivate);
  EXPECT_EQ(cls("172.31.255.255"), AddressClass::kPrivate);
  EXPECT_EQ(cls("172.32.0.1"), AddressClass::kPublic);
  EXPECT_EQ(cls("192.168.1.1"), AddressClass::kPrivate);
  EXPECT_EQ(cls("127.0.0.1"), AddressClass::kLoopback);
  EXPECT_EQ(cls("127.255.0.9"), AddressClass::kLoopback);
  EXPECT_EQ(cls("169.254.1.1"), AddressClass::kLinkLocal);
  EXPECT_EQ(cls("169.254.169.254"), AddressClass::kMetadata);
  EXPECT_EQ(cls("100.100.100.200"), AddressClass::kMetadata);
  EXPECT_EQ(cls("100.64.0.1"), AddressClass::kCgnat);
  EXPECT_EQ(cls("100.127.255.255"), AddressClass::kCgnat);
  EXPECT_EQ(cls("100.128.0.1"), AddressClass::kPublic);
  EXPECT_EQ(cls("224.0.0.1"), AddressClass::kMulticast);
  EXPECT_EQ(cls("239.255.255.250"), AddressClass::kMulticast);
  EXPECT_EQ(cls("0.0.0.0"), AddressClass::kUnspecified);
  EXPECT_EQ(cls("0.1.2.3"), AddressClass::kUnspecified);
  EXPECT_EQ(cls("255.255.255.255"), AddressClass::kReserved);
  EXPECT_EQ(cls("192.0.2.10"), AddressClass::kReserved);
  EXPECT_EQ(cls("198.18.0.1"), AddressClass::kReserved);
}

TEST(Address, ClassifiesIPv6IncludingEmbeddedIPv4) {
  EXPECT_EQ(cls("2606:4700::1111"), AddressClass::kPublic);
  EXPECT_EQ(cls("::1"), AddressClass::kLoopback);
  EXPECT_EQ(cls("::"), AddressClass::kUnspecified);
  EXPECT_EQ(cls("fe80::1"), AddressClass::kLinkLocal);
  EXPECT_EQ(cls("fc00::1"), AddressClass::kPrivate);
  EXPECT_EQ(cls("fd12:3456::1"), AddressClass::kPrivate);
  EXPECT_EQ(cls("fd00:ec2::254"), AddressClass::kMetadata);
  EXPECT_EQ(cls("ff02::1"), AddressClass::kMulticast);
  EXPECT_EQ(cls("2001:db8::1"), AddressClass::kReserved);
  EXPECT_EQ(cls("::ffff:127.0.0.1"), AddressClass::kLoopback);
  EXPECT_EQ(cls("::ffff:169.254.169.254"), AddressClass::kMetadata);
  EXPECT_EQ(cls("::ffff:10.0.0.1"), AddressClass::kPrivate);
  EXPECT_EQ(cls("::ffff:8.8.8.8"), AddressClass::kPublic);
  EXPECT_EQ(cls("64:ff9b::7f00:1"), AddressClass::kLoopback);
  EXPECT_EQ(cls("2002:c0a8:0101::1"), AddressClass::kPrivate);  // 6to4 of 192.168.1.1
  EXPECT_EQ(cls("::127.0.0.1"), AddressClass::kLoopback);
  EXPECT_FALSE(classify_text("not-an-ip").has_value());
}

TEST(Address, PolicyOpensOnlyPrivateRangesWhenAllowed) {
  EXPECT_TRUE(address_allowed(AddressClass::kPublic, false));
  for (auto c :
       {AddressClass::kPrivate, AddressClass::kLoopback, AddressClass::kLinkLocal, AddressClass::kCgnat}) {
    EXPECT_FALSE(address_allowed(c, false));
    EXPECT_TRUE(address_allowed(c, true));
  }
  for (auto c : {AddressClass::kMetadata, AddressClass::kMulticast, AddressClass::kUnspecified,
                 AddressClass::kReserved}) {
    EXPECT_FALSE(address_allowed(c, false));
    EXPECT_FALSE(address_allowed(c, true));
  }
}

TEST(FetchUrl, ParsesOnlyHttpAndHttps) {
  auto u = parse_fetch_url("https://Example.com:8443/a?b=c");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "example.com");
  EXPECT_EQ(u->port, 8443);
  auto v6 = parse_fetch_url("http://[::1]/x");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_TRUE(v6->host_is_ip);
  EXPECT_EQ(v6->port, 80);
  EXPECT_FALSE(parse_fetch_url("ftp://example.com/a").ok());
  EXPECT_FALSE(parse_fetch_url("file:///etc/passwd").ok());
  EXPECT_FALSE(parse_fetch_url("gopher://x/").ok());
  EXPECT_FALSE(parse_fetch_url("http://user:pw@example.com/").ok());
  EXPECT_FALSE(parse_fetch_url("http:///nohost").ok());
  EXPECT_FALSE(parse_fetch_url("not a url").ok());
}

TEST(Fetcher, RefusesInternalAddressesBeforeConnecting) {
  Fetcher strict(false);
  for (const char* url :
       {"http://127.0.0.1:1/x", "http://localhost:1/", "http://[::1]:1/", "http://10.0.0.1:1/",
        "http://[::ffff:127.0.0.1]:1/", "http://2130706433:1/", "http://0.0.0.0:1/"}) {
    FetchRequest r;
    r.url = url;
    auto res = strict.fetch(r);
    ASSERT_FALSE(res.ok()) << url;
    EXPECT_EQ(res.status().code(), Code::kInvalidArgument) << url << ": " << res.status().message();
    EXPECT_NE(res.status().message().find("refusing"), std::string::npos) << res.status().message();
  }
  Fetcher lax(true);
  FetchRequest meta;
  meta.url = "http://169.254.169.254/latest/meta-data/";
  auto m = lax.fetch(meta);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("cloud metadata"), std::string::npos);
  EXPECT_FALSE(lax.check_target("http://[fd00:ec2::254]/").ok());
  EXPECT_TRUE(lax.check_target("http://127.0.0.1:9/").ok());
  EXPECT_FALSE(strict.check_target("http://127.0.0.1:9/").ok());
}

// A one-shot HTTP server on 127.0.0.1 answering each connection with the next canned response.
class CannedServer {
 public:
  explicit CannedServer(std::vector<std::string> responses) : responses_(std::move(responses)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 8);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (const auto& resp : responses_) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        char buf[4096];
        std::string req;
        while (req.find("\r\n\r\n") == std::string::npos) {
          ssize_t n = read(c, buf, sizeof buf);
          if (n <= 0) break;
          req.append(buf, static_cast<size_t>(n));
        }
        (void)!write(c, resp.data(), resp.size());
        close(c);
      }
    });
  }
  ~CannedServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  int port() const { return port_; }

 private:
  std::vector<std::string> responses_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::string http_response(int status, const std::string& extra_headers, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n" + extra_headers + "\r\n" + body;
}

TEST(Fetcher, FollowsRedirectsAndRechecksEveryHop) {
  CannedServer server({http_response(302, "Location: /next\r\n", ""),
                       http_response(200, "Content-Type: text/plain\r\n", "hello"),
                       http_response(302, "Location: http://169.254.169.254/\r\n", "")});
  Fetcher lax(true);
  FetchRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/start";
  auto ok = lax.fetch(r);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "hello");
  EXPECT_EQ(ok->final_url, "http://127.0.0.1:" + std::to_string(server.port()) + "/next");
  auto bad = lax.fetch(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cloud metadata"), std::string::npos) << bad.status().message();
}

TEST(Fetcher, BoundsTheBodySize) {
  std::string big(5000, 'x');
  CannedServer server({http_response(200, "", big), http_response(200, "", big)});
  Fetcher lax(true);
  FetchRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/";
  r.max_bytes = 1000;
  auto res = lax.fetch(r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Code::kTooLarge);
  r.truncate_body = true;
  auto cut = lax.fetch(r);
  ASSERT_TRUE(cut.ok()) << cut.status().message();
  EXPECT_EQ(cut->body.size(), 1000u);
}

TEST(Fetcher, ConnectionFailureIsTransient) {
  Fetcher lax(true);
  FetchRequest r;
  r.url = "http://127.0.0.1:1/";
  auto res = lax.fetch(r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Code::kUnavailable);
}

// A name whose answer changes between lookups (a DNS rebind): the first answer is checked and
// connected to; a second lookup, had there been one, would have pointed elsewhere.
TEST(Fetcher, ConnectsToTheCheckedAddressNotAFreshLookup) {
  CannedServer server({http_response(200, "Content-Type: text/plain\r\n", "pinned")});
  std::atomic<int> lookups{0};
  Fetcher lax(true, [&](const std::string& host) -> Result<std::vector<std::string>> {
    EXPECT_EQ(host, "rebind.test");
    // 127.0.0.2 is loopback too, but nothing listens there on this port.
    return std::vector<std::string>{lookups.fetch_add(1) == 0 ? "127.0.0.1" : "127.0.0.2"};
  });
  FetchRequest r;
  r.url = "http://rebind.test:" + std::to_string(server.port()) + "/";
  auto res = lax.fetch(r);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->body, "pinned");
  EXPECT_EQ(res->remote_ip, "127.0.0.1");
  EXPECT_EQ(lookups.load(), 1);
}

TEST(Fetcher, RefusesANameWithAnyInternalAddress) {
  // Judged on what the name resolves to, before any connection (nothing listens anywhere here).
  Fetcher strict(false, [](const std::string&) -> Result<std::vector<std::string>> {
    return std::vector<std::string>{"93.184.216.34", "10.1.2.3"};
  });
  FetchRequest r;
  r.url = "http://mixed.test/";
  auto res = strict.fetch(r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Code::kInvalidArgument);
  EXPECT_NE(res.status().message().find("10.1.2.3"), std::string::npos) << res.status().message();
  Fetcher loopback(false, [](const std::string&) -> Result<std::vector<std::string>> {
    return std::vector<std::string>{"127.0.0.1"};
  });
  r.url = "http://local.test/";
  auto lo = loopback.fetch(r);
  ASSERT_FALSE(lo.ok());
  EXPECT_NE(lo.status().message().find("loopback"), std::string::npos) << lo.status().message();
  EXPECT_FALSE(loopback.check_target("http://local.test/").ok());
}

struct RecordingSink : StreamSink {
  void on_status(long s) override { statuses.push_back(s); }
  bool on_body(std::string_view b) override {
    body.append(b);
    return true;
  }
  bool should_stop() override { return stop; }
  std::vector<long> statuses;
  std::string body;
  bool stop = false;
};

TEST(Fetcher, StreamsOnlyTheFinalResponseToTheSink) {
  CannedServer server({http_response(302, "Location: /next\r\n", "redirect body"),
                       http_response(200, "Content-Type: text/plain\r\n", "final body"),
                       http_response(302, "Location: http://169.254.169.254/\r\n", "")});
  Fetcher lax(true);
  FetchRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/start";
  RecordingSink sink;
  auto res = lax.stream(r, sink);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->end, StreamEnd::kComplete);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(sink.statuses, std::vector<long>{200});
  EXPECT_EQ(sink.body, "final body");
  // The next hop is checked like the first: a redirect to the metadata address is refused.
  RecordingSink refused;
  auto bad = lax.stream(r, refused);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cloud metadata"), std::string::npos) << bad.status().message();
  EXPECT_TRUE(refused.body.empty());
}

TEST(Fetcher, TheSinkCanStopAStreamThatNeverAnswers) {
  // Listens but never accepts: the connection is made (backlog) and no answer ever comes.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  Fetcher lax(true);
  FetchRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/";
  r.timeout_ms = 0;  // no limit of the client's own: only the sink ends it
  RecordingSink sink;
  sink.stop = true;
  auto res = lax.stream(r, sink);
  close(fd);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->end, StreamEnd::kInterrupted);
  EXPECT_TRUE(sink.statuses.empty());
}

// A PNG signature and IHDR declaring 64 x 48 pixels (inputs are checked for decompression bombs).
std::string png() {
  return std::string("\x89PNG\r\n\x1A\n\0\0\0\rIHDR\0\0\0\x40\0\0\0\x30", 24);
}

TEST(Sniff, RecognisesMagicBytes) {
  auto kind = [](const std::string& b) { return sniff(b); };
  EXPECT_EQ(kind("\xFF\xD8\xFF\xE0rest")->mime, "image/jpeg");
  EXPECT_EQ(kind(png())->mime, "image/png");
  EXPECT_EQ(kind("GIF89a....")->mime, "image/gif");
  EXPECT_EQ(kind(std::string("RIFF\0\0\0\0WEBPVP8 ", 16))->mime, "image/webp");
  EXPECT_EQ(kind(std::string("RIFF\0\0\0\0WAVEfmt ", 16))->mime, "audio/wav");
  EXPECT_EQ(kind(std::string("RIFF\0\0\0\0AVI LIST", 16))->mime, "video/x-msvideo");
  EXPECT_EQ(kind(std::string("\0\0\0\x18"
                             "ftypisom\0\0\0\0",
                             16))
                ->mime,
            "video/mp4");
  EXPECT_EQ(kind(std::string("\0\0\0\x18"
                             "ftypqt  \0\0\0\0",
                             16))
                ->mime,
            "video/quicktime");
  EXPECT_EQ(kind(std::string("\0\0\0\x18"
                             "ftypM4A \0\0\0\0",
                             16))
                ->mime,
            "audio/mp4");
  EXPECT_EQ(kind(std::string("\x1A\x45\xDF\xA3\x9F\x42\x82\x84webm", 12))->mime, "video/webm");
  EXPECT_EQ(kind(std::string("\x1A\x45\xDF\xA3\x9F\x42\x82\x88matroska", 16))->mime, "video/x-matroska");
  EXPECT_EQ(kind(std::string("OggS\0\x02....OpusHead", 18))->ext, "opus");
  EXPECT_EQ(kind("fLaC\0\0\0\x22")->mime, "audio/flac");
  EXPECT_EQ(kind("ID3\x04\0\0\0\0")->mime, "audio/mpeg");
  EXPECT_EQ(kind("\xFF\xFB\x90\x64\0\0")->mime, "audio/mpeg");
  EXPECT_EQ(kind("\xFF\xF1\x50\x80\x02\x1F\xFC")->mime, "audio/aac");
  EXPECT_EQ(kind("\xFF\xFB\x90\x64")->kind, MediaKind::kAudio);
  EXPECT_FALSE(kind("%PDF-1.7").has_value());
  EXPECT_FALSE(kind("<html><body>").has_value());
  EXPECT_FALSE(kind("").has_value());
  EXPECT_FALSE(kind(std::string("\0\0\0\x18"
                                "ftypavif",
                                12))
                   .has_value());
}

TEST(MediaParam, AcceptsUrlsBase64AndDataUris) {
  auto url = parse_media_param("image", "https://example.com/face.jpg", MediaKind::kImage);
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(url->is_url);
  auto raw = parse_media_param("image", base64_encode(png()), MediaKind::kImage);
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  EXPECT_EQ(raw->bytes, png());
  EXPECT_EQ(raw->type->mime, "image/png");
  auto data = parse_media_param("image", "data:image/png;base64," + base64_encode(png()), MediaKind::kImage);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->bytes, png());
}

TEST(MediaParam, RejectsBadInputNamingTheField) {
  auto ftp = parse_media_param("image", "ftp://example.com/a.png", MediaKind::kImage);
  ASSERT_FALSE(ftp.ok());
  EXPECT_EQ(ftp.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ftp.status().message().rfind("image", 0), 0u);
  auto junk = parse_media_param("video", "!!!not base64!!!", MediaKind::kVideo);
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(junk.status().message().rfind("video", 0), 0u);
  auto wrong = parse_media_param("audio", base64_encode(png()), MediaKind::kAudio);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Code::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("image/png"), std::string::npos);
  auto pdf = parse_media_param("image", base64_encode("%PDF-1.7 xxxxxxxx"), MediaKind::kImage);
  EXPECT_FALSE(pdf.ok());
  auto plain = parse_media_param("image", "data:image/png," + png(), MediaKind::kImage);
  EXPECT_FALSE(plain.ok());
  auto empty = parse_media_param("image", "", MediaKind::kImage);
  EXPECT_FALSE(empty.ok());
}

TEST(MediaParam, EnforcesSizeLimits) {
  std::string big = png() + std::string(kMaxImageBytes, 'x');
  auto r = parse_media_param("image", base64_encode(big), MediaKind::kImage);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kTooLarge);
  std::string ok_size = png() + std::string(kMaxImageBytes - 100, 'x');
  EXPECT_TRUE(parse_media_param("image", base64_encode(ok_size), MediaKind::kImage).ok());
  // A header declaring a 30000 x 30000 canvas is refused whatever the byte size.
  std::string bomb = png();
  bomb[18] = bomb[22] = '\x75', bomb[19] = bomb[23] = '\x30';
  auto b = parse_media_param("image", base64_encode(bomb), MediaKind::kImage);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kInvalidArgument);
  EXPECT_NE(b.status().message().find("30000x30000"), std::string::npos) << b.status().message();
  EXPECT_EQ(max_bytes_for(MediaKind::kVideo), 100u << 20);
  EXPECT_EQ(max_bytes_for(MediaKind::kAudio), 25u << 20);
}

TEST(Multipart, ParsesFieldsAndFiles) {
  auto b = multipart_boundary("multipart/form-data; boundary=\"XyZ\"");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*b, "XyZ");
  EXPECT_FALSE(multipart_boundary("application/json").has_value());
  std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a b.png\"\r\n"
      "Content-Type: image/png\r\n\r\n" +
      png() + "\r\n--XyZ--\r\n";
  auto parts = parse_multipart(body, "XyZ");
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].name, "note");
  EXPECT_EQ((*parts)[0].data, "hi");
  EXPECT_EQ((*parts)[1].filename.value_or(""), "a b.png");
  EXPECT_EQ((*parts)[1].data, png());
  EXPECT_FALSE(
      parse_multipart("--XyZ\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nno end", "XyZ").ok());
  EXPECT_FALSE(parse_multipart("garbage", "XyZ").ok());
}

}  // namespace
}  // namespace imago::fetch
