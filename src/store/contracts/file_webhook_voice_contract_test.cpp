// Contracts of FileStore, WebhookStore and VoiceStore: records are account-scoped (another
// account's record is indistinguishable from a missing one) and a duplicate id is a conflict.
#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

class FileStoreContract : public StoreContract {
 protected:
  FileRecord file(const std::string& acct, const std::string& id) {
    FileRecord f;
    f.id = id;
    f.account_id = acct;
    f.purpose = "upload";
    f.blob_key = "uploads/" + acct + "/" + id + ".png";
    f.kind = "image";
    f.mime = "image/png";
    f.ext = "png";
    f.size = 10;
    return f;
  }
};

TEST_P(FileStoreContract, FilesAreScopedToTheirAccount) {
  auto a = new_account(0), b = new_account(0);
  ASSERT_TRUE(files().insert(file(a, "file_1")).ok());
  EXPECT_EQ(files().get(a, "file_1")->blob_key, "uploads/" + a + "/file_1.png");
  EXPECT_EQ(files().get(b, "file_1").status().code(), Code::kNotFound);
  EXPECT_EQ(files().remove(b, "file_1").status().code(), Code::kNotFound);
  auto removed = files().remove(a, "file_1");
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->id, "file_1");
  EXPECT_EQ(files().get(a, "file_1").status().code(), Code::kNotFound);
}

TEST_P(FileStoreContract, ADuplicateIdIsAConflict) {
  auto a = new_account(0);
  ASSERT_TRUE(files().insert(file(a, "file_dup")).ok());
  EXPECT_EQ(files().insert(file(a, "file_dup")).code(), Code::kConflict);
}

TEST_P(FileStoreContract, UsageCountsEveryFileOfTheAccount) {
  auto a = new_account(0), b = new_account(0);
  EXPECT_EQ(*files().usage_bytes(a), 0);
  auto f1 = file(a, "file_u1");
  f1.size = 1000;
  auto f2 = file(a, "file_u2");
  f2.size = 234;
  f2.purpose = "model";
  f2.agent_code = "A12BCD3456";
  ASSERT_TRUE(files().insert(f1).ok());
  ASSERT_TRUE(files().insert(f2).ok());
  ASSERT_TRUE(files().insert(file(b, "file_u3")).ok());
  EXPECT_EQ(*files().usage_bytes(a), 1234);
  ASSERT_TRUE(files().remove(a, "file_u1").ok());
  EXPECT_EQ(*files().usage_bytes(a), 234);
}

TEST_P(FileStoreContract, AnAgentsFilesOfOnePurposeAreListedOldestFirstInItsAccount) {
  auto a = new_account(0), b = new_account(0);
  auto k = [&](const std::string& acct, const std::string& id, const std::string& code,
               const std::string& purpose, int64_t at) {
    FileRecord f = file(acct, id);
    f.agent_code = code;
    f.purpose = purpose;
    f.created_at = at;
    return f;
  };
  ASSERT_TRUE(files().insert(k(a, "file_k2", "bot", "knowledge", 200)).ok());
  ASSERT_TRUE(files().insert(k(a, "file_k1", "bot", "knowledge", 100)).ok());
  ASSERT_TRUE(files().insert(k(a, "file_m1", "bot", "model", 50)).ok());
  ASSERT_TRUE(files().insert(k(a, "file_o1", "other", "knowledge", 50)).ok());
  ASSERT_TRUE(files().insert(k(b, "file_b1", "bot", "knowledge", 50)).ok());
  auto listed = files().list_agent_files(a, "bot", "knowledge");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, "file_k1");
  EXPECT_EQ((*listed)[1].id, "file_k2");
  EXPECT_EQ((*listed)[1].purpose, "knowledge");
  EXPECT_TRUE(files().list_agent_files(a, "nobody", "knowledge")->empty());
}

IMAGO_STORE_CONTRACT(FileStoreContract);

class WebhookStoreContract : public StoreContract {
 protected:
  Webhook hook(const std::string& acct, const std::string& id, std::vector<std::string> events = {}) {
    Webhook w;
    w.id = id;
    w.account_id = acct;
    w.url = "http://127.0.0.1:9/hook";
    w.events = std::move(events);
    w.secret = "whsec_x";
    return w;
  }
};

TEST_P(WebhookStoreContract, SubscriptionsAreScopedAndDuplicatesConflict) {
  auto a = new_account(0), b = new_account(0);
  ASSERT_TRUE(webhooks().create(hook(a, "wh_1")).ok());
  EXPECT_EQ(webhooks().create(hook(a, "wh_1")).code(), Code::kConflict);
  EXPECT_TRUE(webhooks().get(a, "wh_1").ok());
  EXPECT_EQ(webhooks().get(b, "wh_1").status().code(), Code::kNotFound);
  EXPECT_EQ(webhooks().remove(b, "wh_1").code(), Code::kNotFound);
  EXPECT_EQ(webhooks().list(a)->size(), 1u);
  EXPECT_TRUE(webhooks().list(b)->empty());
}

TEST_P(WebhookStoreContract, AnEventQueuesOneDeliveryAndJobPerSubscribedHook) {
  auto a = new_account(0);
  ASSERT_TRUE(webhooks().create(hook(a, "wh_all")).ok());
  ASSERT_TRUE(webhooks().create(hook(a, "wh_ready", {"agent.ready"})).ok());
  auto ids = webhooks().enqueue_event(a, "agent.failed", R"({"agent_id":"X"})");
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->size(), 1u);
  auto d = webhooks().get_delivery((*ids)[0]);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->webhook_id, "wh_all");
  EXPECT_EQ(d->state, "pending");
  auto n = webhooks().record_attempt(d->id, 500, std::string("HTTP 500"), 12, "pending");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(*webhooks().record_attempt(d->id, 200, std::nullopt, 5, "delivered"), 2);
  EXPECT_EQ(webhooks().get_delivery(d->id)->state, "delivered");
  EXPECT_EQ(webhooks().list_attempts(d->id)->size(), 2u);
  EXPECT_EQ(jobs().list_by_subject(d->id)->size(), 1u);
}

IMAGO_STORE_CONTRACT(WebhookStoreContract);

class VoiceStoreContract : public StoreContract {
 protected:
  DesignedVoice voice(const std::string& acct, const std::string& code) {
    DesignedVoice v;
    v.code = code;
    v.account_id = acct;
    v.name = "Narrator";
    v.base_voice = "F2";
    v.pitch = 0.2;
    return v;
  }
};

TEST_P(VoiceStoreContract, CodesAreScopedAndRevokedForGood) {
  auto a = new_account(0), b = new_account(0);
  const std::string code = "0b5c0b5c-0000-4000-8000-000000000001";
  ASSERT_TRUE(voices().create(voice(a, code)).ok());
  EXPECT_EQ(voices().get(a, code)->base_voice, "F2");
  EXPECT_EQ(voices().get(b, code).status().code(), Code::kNotFound);
  auto v = voice(a, code);
  v.name = "Renamed";
  ASSERT_TRUE(voices().update(v).ok());
  EXPECT_EQ(voices().get(a, code)->name, "Renamed");
  EXPECT_EQ(voices().revoke(b, code).code(), Code::kNotFound);
  ASSERT_TRUE(voices().revoke(a, code).ok());
  EXPECT_EQ(voices().get(a, code).status().code(), Code::kNotFound);
  EXPECT_EQ(voices().revoke(a, code).code(), Code::kNotFound);
  // A revoked code is never issued again.
  EXPECT_EQ(voices().create(voice(a, code)).status().code(), Code::kConflict);
}

IMAGO_STORE_CONTRACT(VoiceStoreContract);

}  // namespace
}  // namespace imago::contracts
