// Webhook subscriptions without HTTP routes: real stores (SQLite in a temporary directory), the
// guarded fetcher, and a one-shot receiver on 127.0.0.1 for the test ping.
#include "webhooks/webhook_service.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "store/stores.h"
#include "util/random.h"

namespace imago::webhooks {
namespace {

// Accepts one connection on 127.0.0.1, reads the request head and answers 204.
class Receiver {
 public:
  Receiver() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 4);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      std::string req;
      while (req.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<size_t>(n));
      }
      const std::string resp = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
      (void)!write(c, resp.data(), resp.size());
      close(c);
    });
  }
  ~Receiver() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

class WebhookServiceTest : public ::testing::Test {
 protected:
  WebhookServiceTest() : lax_(true), strict_(false) {
    char tmpl[] = "/tmp/imago-webhooks-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto st = open_stores("sqlite:" + dir_ + "/db", clock_);
    EXPECT_TRUE(st.ok()) << st.status().message();
    stores_ = std::move(st).value();
    KeyMaterial km{"svc-" + random_base62(12), "imago_sk_x", "abcd"};
    account_ = stores_.accounts->create_account("a", Plan::kFree, 0, "default", km)->first.id;
  }
  ~WebhookServiceTest() override {
    stores_ = Stores();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  WebhookService service(const fetch::Fetcher& f) { return WebhookService(*stores_.webhooks, f, clock_); }

  std::string dir_;
  ManualClock clock_;
  fetch::Fetcher lax_;
  fetch::Fetcher strict_;
  Stores stores_;
  std::string account_;
};

TEST_F(WebhookServiceTest, CreateChecksTheTargetAndTheEvents) {
  auto strict = service(strict_);
  auto refused = strict.create(account_, {"http://127.0.0.1:9/hook", {}, std::nullopt});
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(refused.status().message().rfind("url: refusing", 0), 0u) << refused.status().message();

  auto lax = service(lax_);
  auto unknown =
      lax.create(account_, {"http://127.0.0.1:9/hook", {"agent.ready", "agent.exploded"}, std::nullopt});
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("may contain only"), std::string::npos);

  auto w = lax.create(account_,
                      {"http://127.0.0.1:9/hook", {"agent.ready", "agent.ready", "session.ended"}, "mine"});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->events, (std::vector<std::string>{"agent.ready", "session.ended"}));
  EXPECT_EQ(w->secret.rfind("whsec_", 0), 0u);
  EXPECT_EQ(w->description, "mine");
  auto got = lax.get(account_, w->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->url, "http://127.0.0.1:9/hook");
  EXPECT_EQ(lax.get("acct_other", w->id).status().code(), Code::kNotFound);
}

TEST_F(WebhookServiceTest, AnAccountHasAtMostTwentyWebhooks) {
  auto lax = service(lax_);
  for (size_t i = 0; i < kMaxWebhooksPerAccount; ++i) {
    ASSERT_TRUE(lax.create(account_, {"http://127.0.0.1:9/" + std::to_string(i), {}, std::nullopt}).ok());
  }
  auto over = lax.create(account_, {"http://127.0.0.1:9/x", {}, std::nullopt});
  EXPECT_EQ(over.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(over.status().message(), "An account can have at most 20 webhooks");
  EXPECT_EQ(lax.list(account_)->size(), kMaxWebhooksPerAccount);
}

TEST_F(WebhookServiceTest, TestPingIsDeliveredOnceAndLogged) {
  Receiver receiver;
  auto lax = service(lax_);
  auto w = lax.create(account_, {receiver.url(), {}, std::nullopt});
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto ping = lax.test(account_, w->id);
  ASSERT_TRUE(ping.ok()) << ping.status().message();
  EXPECT_TRUE(ping->result.delivered) << ping->result.error.value_or("");
  EXPECT_EQ(ping->result.status_code, 204);
  EXPECT_EQ(ping->attempts, 1);
  auto log = lax.deliveries(account_, w->id, 50);
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ((*log)[0].delivery.id, ping->delivery_id);
  EXPECT_EQ((*log)[0].delivery.event_type, "ping");
  EXPECT_EQ((*log)[0].delivery.state, "delivered");
  ASSERT_EQ((*log)[0].attempts.size(), 1u);
  EXPECT_EQ((*log)[0].attempts[0].status_code, 204);
  EXPECT_EQ(lax.test("acct_other", w->id).status().code(), Code::kNotFound);
  EXPECT_EQ(lax.deliveries("acct_other", w->id, 50).status().code(), Code::kNotFound);
}

TEST_F(WebhookServiceTest, RemoveDeletesOnlyTheOwnersWebhook) {
  auto lax = service(lax_);
  auto w = lax.create(account_, {"http://127.0.0.1:9/hook", {}, std::nullopt});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(lax.remove("acct_other", w->id).code(), Code::kNotFound);
  ASSERT_TRUE(lax.remove(account_, w->id).ok());
  EXPECT_EQ(lax.get(account_, w->id).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace imago::webhooks
