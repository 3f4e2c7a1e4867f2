#include "store/postgres/pg_stores.h"

#include <gtest/gtest.h>

#include "store/postgres/test_db.h"

namespace imago::pg {
namespace {

class AgentStoreTest : public ::testing::Test {
 protected:
  ManualClock clock;
  TestDb tdb;
  std::unique_ptr<AccountStore> accounts = make_account_store(tdb.db(), clock);
  std::unique_ptr<LedgerStore> ledger = make_ledger_store(tdb.db(), clock);
  std::unique_ptr<AgentStore> agents = make_agent_store(tdb.db(), clock);
  std::unique_ptr<JobStore> jobs = make_job_store(tdb.db(), clock);
  std::unique_ptr<WebhookStore> hooks = make_webhook_store(tdb.db(), clock);

  std::string account(int64_t credits) {
    static int n = 0;
    KeyMaterial km{"agenthash" + std::to_string(++n), "imago_sk_x", "abcd"};
    return accounts->create_account("a", Plan::kFree, credits, "default", km)->first.id;
  }
  Status create(const std::string& acct, const std::string& code) {
    AgentRecord a;
    a.code = code;
    a.account_id = acct;
    a.name = "Agent " + code;
    a.system_prompt = "hi";
    NewJob job;
    job.id = "job_" + code;
    job.kind = std::string(kJobAgentGenerate);
    job.account_id = acct;
    job.subject = code;
    LedgerOp op{acct, LedgerKind::kCharge, 250, "agent_generation", "agent_generation:" + job.id, code};
    return agents->create(a, {}, op, job).status();
  }
  int64_t balance(const std::string& acct) { return ledger->balance(acct)->total(); }
};

TEST_F(AgentStoreTest, CreateChargesAndEnqueuesTogether) {
  auto acct = account(600);
  ASSERT_TRUE(create(acct, "A11AAA1111").ok());
  EXPECT_EQ(balance(acct), 350);
  EXPECT_EQ(jobs->get("job_A11AAA1111")->state, "queued");
  EXPECT_EQ(agents->get(acct, "A11AAA1111")->status, "processing");
  // Taken code: 409 and no second charge.
  auto dup = create(acct, "A11AAA1111");
  EXPECT_EQ(dup.code(), Code::kConflict);
  EXPECT_EQ(balance(acct), 350);
}

TEST_F(AgentStoreTest, AnIdempotencyKeyReplaysTheFirstAgent) {
  auto acct = account(1000);
  auto make = [&](const std::string& code) {
    AgentRecord a;
    a.code = code;
    a.account_id = acct;
    a.name = "n";
    a.system_prompt = "p";
    a.idempotency_key = "key-1";
    NewJob job;
    job.id = "job_" + code;
    job.kind = std::string(kJobAgentGenerate);
    job.account_id = acct;
    job.subject = code;
    LedgerOp op{acct, LedgerKind::kCharge, 250, "agent_generation", "agent_generation:" + job.id, code};
    return agents->create(a, {}, op, job);
  };
  EXPECT_EQ(*make("A66FFF6666"), "A66FFF6666");
  EXPECT_EQ(*make("A77GGG7777"), "A66FFF6666");
  EXPECT_EQ(balance(acct), 750);
  EXPECT_EQ(agents->get_by_code("A77GGG7777").status().code(), Code::kNotFound);
}

TEST_F(AgentStoreTest, InsufficientFundsCreatesNothing) {
  auto acct = account(100);
  auto s = create(acct, "A22BBB2222");
  EXPECT_EQ(s.code(), Code::kInsufficientFunds);
  EXPECT_EQ(balance(acct), 100);
  EXPECT_EQ(agents->get_by_code("A22BBB2222").status().code(), Code::kNotFound);
  EXPECT_EQ(jobs->get("job_A22BBB2222").status().code(), Code::kNotFound);
}

TEST_F(AgentStoreTest, OtherAccountsSeeNotFound) {
  auto a = account(1000), b = account(1000);
  ASSERT_TRUE(create(a, "A33CCC3333").ok());
  auto r = agents->get(b, "A33CCC3333");
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), "Agent not found for code: A33CCC3333");
  EXPECT_EQ(agents->update_prompt(b, "A33CCC3333", "x").code(), Code::kNotFound);
  EXPECT_EQ(agents->remove(b, "A33CCC3333").code(), Code::kNotFound);
  EXPECT_TRUE(agents->get(a, "A33CCC3333").ok());
}

TEST_F(AgentStoreTest, FailureRefundsAndQueuesTheWebhookExactlyOnce) {
  auto acct = account(1000);
  Webhook w;
  w.id = "wh1";
  w.account_id = acct;
  w.url = "http://127.0.0.1:9/";
  w.secret = "whsec_x";
  ASSERT_TRUE(hooks->create(w).ok());
  ASSERT_TRUE(create(acct, "A44DDD4444").ok());
  auto job = jobs->claim(kLaneGenerate, "w1", 10'000'000);
  ASSERT_TRUE(job.ok() && job->has_value());
  JobLease lease{(*job)->id, "w1"};
  EXPECT_TRUE(*agents->set_progress("A44DDD4444", lease, {"generating", 0.3, "Building", "face"}));
  GenerationOutcome o;
  o.code = "A44DDD4444";
  o.lease = lease;
  o.success = false;
  o.error = "No face found in the image";
  o.refund = LedgerOp{acct, LedgerKind::kRefund, 250, "refund: agent generation failed: No face found in the image",
                      "refund:" + lease.job_id, "A44DDD4444"};
  o.event = "agent.failed";
  o.event_data = R"({"agent_id":"A44DDD4444"})";
  EXPECT_TRUE(*agents->finish_generation(o));
  EXPECT_FALSE(*agents->finish_generation(o));  // the lease is gone: nothing recorded twice
  EXPECT_EQ(balance(acct), 1000);
  auto a = agents->get(acct, "A44DDD4444");
  EXPECT_EQ(a->status, "failed");
  EXPECT_EQ(a->error_message.value_or(""), "No face found in the image");
  auto deliveries = hooks->list_deliveries("wh1", 10);
  ASSERT_EQ(deliveries->size(), 1u);
  EXPECT_EQ((*deliveries)[0].event_type, "agent.failed");
  EXPECT_NE((*deliveries)[0].payload.find("A44DDD4444"), std::string::npos);
  EXPECT_FALSE(*agents->set_progress("A44DDD4444", lease, {"generating", 0.5, "late", "x"}));
}

TEST_F(AgentStoreTest, ListIsNewestFirstWithFilterAndTotal) {
  auto acct = account(5000);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(create(acct, "A0" + std::to_string(i) + "XYZ000" + std::to_string(i)).ok());
    clock.advance_seconds(1);
  }
  auto page = agents->list(acct, std::nullopt, 2, 0);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 5);
  ASSERT_EQ(page->agents.size(), 2u);
  EXPECT_EQ(page->agents[0].code, "A04XYZ0004");
  EXPECT_EQ(page->agents[1].code, "A03XYZ0003");
  auto last = agents->list(acct, std::nullopt, 2, 4);
  ASSERT_EQ(last->agents.size(), 1u);
  EXPECT_EQ(last->agents[0].code, "A00XYZ0000");
  EXPECT_EQ(agents->list(acct, std::string("ready"), 10, 0)->total, 0);
  EXPECT_EQ(agents->list(acct, std::string("processing"), 10, 0)->total, 5);
}

TEST_F(AgentStoreTest, RemoveCancelsJobsQueuesBlobDeletesAndKeepsTheLedger) {
  auto acct = account(1000);
  ASSERT_TRUE(create(acct, "A55EEE5555").ok());
  FileRecord f;
  f.id = "file_x";
  f.account_id = acct;
  f.agent_code = "A55EEE5555";
  f.purpose = "input";
  f.blob_key = "agents/A55EEE5555/image.png";
  f.kind = "image";
  f.mime = "image/png";
  f.ext = "png";
  auto files = make_file_store(tdb.db(), clock);
  ASSERT_TRUE(files->insert(f).ok());
  ASSERT_TRUE(agents->remove(acct, "A55EEE5555").ok());
  EXPECT_EQ(jobs->get("job_A55EEE5555")->state, "cancelled");
  EXPECT_EQ(files->get(acct, "file_x").status().code(), Code::kNotFound);
  auto cleanup = jobs->list_by_subject("blobs:A55EEE5555");
  ASSERT_EQ(cleanup->size(), 1u);
  EXPECT_NE((*cleanup)[0].payload.find("agents/A55EEE5555/image.png"), std::string::npos);
  EXPECT_EQ(balance(acct), 750);
  EXPECT_EQ(agents->get(acct, "A55EEE5555").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace imago::pg
