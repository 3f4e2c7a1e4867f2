// Contract of AgentStore: creating an agent charges and enqueues all or nothing, a taken code is a
// conflict within the account (also under concurrent creates) and no conflict in another account
// (codes are per account), an idempotency key replays, another account's agent is
// indistinguishable from a missing one, and a job's outcome is recorded once under its lease.
#include <atomic>
#include <thread>

#include "billing/operations.h"
#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

class AgentStoreContract : public StoreContract {
 protected:
  std::string account(int64_t credits) { return new_account(credits); }
  // The job id is "job_<code>", or "job_<code>_<acct>" with `per_account_job` (job ids are global).
  Status create(const std::string& acct, const std::string& code, bool per_account_job = false) {
    AgentRecord a;
    a.code = code;
    a.account_id = acct;
    a.name = "Agent " + code;
    a.system_prompt = "hi";
    NewJob job;
    job.id = "job_" + code + (per_account_job ? "_" + acct : "");
    job.kind = std::string(kJobAgentGenerate);
    job.account_id = acct;
    job.subject = code;
    LedgerOp op = billing::agent_generation_charge(acct, job.id, code);
    return agents().create(a, {}, op, job).status();
  }
};

TEST_P(AgentStoreContract, CreateChargesAndEnqueuesTogether) {
  auto acct = account(600);
  ASSERT_TRUE(create(acct, "A11AAA1111").ok());
  EXPECT_EQ(balance(acct), 350);
  EXPECT_EQ(jobs().get("job_A11AAA1111")->state, "queued");
  EXPECT_EQ(agents().get(acct, "A11AAA1111")->status, "processing");
  // Taken code: 409 and no second charge.
  auto dup = create(acct, "A11AAA1111");
  EXPECT_EQ(dup.code(), Code::kConflict);
  EXPECT_EQ(balance(acct), 350);
}

TEST_P(AgentStoreContract, AnIdempotencyKeyReplaysTheFirstAgent) {
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
    LedgerOp op = billing::agent_generation_charge(acct, job.id, code);
    return agents().create(a, {}, op, job);
  };
  auto first = make("A66FFF6666");
  EXPECT_EQ(first->code, "A66FFF6666");
  EXPECT_FALSE(first->replayed);
  auto replay = make("A77GGG7777");
  EXPECT_EQ(replay->code, "A66FFF6666");
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(balance(acct), 750);
  EXPECT_EQ(agents().get(acct, "A77GGG7777").status().code(), Code::kNotFound);
}

TEST_P(AgentStoreContract, InsufficientFundsCreatesNothing) {
  auto acct = account(100);
  auto s = create(acct, "A22BBB2222");
  EXPECT_EQ(s.code(), Code::kInsufficientFunds);
  EXPECT_EQ(balance(acct), 100);
  EXPECT_EQ(agents().get(acct, "A22BBB2222").status().code(), Code::kNotFound);
  EXPECT_EQ(jobs().get("job_A22BBB2222").status().code(), Code::kNotFound);
}

TEST_P(AgentStoreContract, OtherAccountsSeeNotFound) {
  auto a = account(1000), b = account(1000);
  ASSERT_TRUE(create(a, "A33CCC3333").ok());
  auto r = agents().get(b, "A33CCC3333");
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), "Agent not found for code: A33CCC3333");
  EXPECT_EQ(agents().update_prompt(b, "A33CCC3333", "x").code(), Code::kNotFound);
  EXPECT_EQ(agents().remove(b, "A33CCC3333").code(), Code::kNotFound);
  EXPECT_TRUE(agents().get(a, "A33CCC3333").ok());
}

TEST_P(AgentStoreContract, FailureRefundsAndQueuesTheWebhookExactlyOnce) {
  auto acct = account(1000);
  Webhook w;
  w.id = "wh1";
  w.account_id = acct;
  w.url = "http://127.0.0.1:9/";
  w.secret = "whsec_x";
  ASSERT_TRUE(webhooks().create(w).ok());
  ASSERT_TRUE(create(acct, "A44DDD4444").ok());
  auto job = jobs().claim(kLaneGenerate, "w1", 10'000'000);
  ASSERT_TRUE(job.ok() && job->has_value());
  JobLease lease{(*job)->id, "w1"};
  EXPECT_TRUE(*agents().set_progress(acct, "A44DDD4444", lease, {"generating", 0.3, "Building", "face"}));
  GenerationOutcome o;
  o.account_id = acct;
  o.code = "A44DDD4444";
  o.lease = lease;
  o.success = false;
  o.error = "No face found in the image";
  o.refund = billing::refund_of(billing::agent_generation_charge(acct, lease.job_id, "A44DDD4444"),
                                "agent generation failed: No face found in the image");
  o.event = "agent.failed";
  o.event_data = R"({"agent_id":"A44DDD4444"})";
  EXPECT_TRUE(*agents().finish_generation(o));
  EXPECT_FALSE(*agents().finish_generation(o));  // the lease is gone: nothing recorded twice
  EXPECT_EQ(balance(acct), 1000);
  auto a = agents().get(acct, "A44DDD4444");
  EXPECT_EQ(a->status, "failed");
  EXPECT_EQ(a->error_message.value_or(""), "No face found in the image");
  auto deliveries = webhooks().list_deliveries("wh1", 10);
  ASSERT_EQ(deliveries->size(), 1u);
  EXPECT_EQ((*deliveries)[0].event_type, "agent.failed");
  EXPECT_NE((*deliveries)[0].payload.find("A44DDD4444"), std::string::npos);
  EXPECT_FALSE(*agents().set_progress(acct, "A44DDD4444", lease, {"generating", 0.5, "late", "x"}));
}

TEST_P(AgentStoreContract, ListIsNewestFirstWithFilterAndTotal) {
  auto acct = account(5000);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(create(acct, "A0" + std::to_string(i) + "XYZ000" + std::to_string(i)).ok());
    clock_.advance_seconds(1);
  }
  auto page = agents().list(acct, std::nullopt, 2, 0);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 5);
  ASSERT_EQ(page->agents.size(), 2u);
  EXPECT_EQ(page->agents[0].code, "A04XYZ0004");
  EXPECT_EQ(page->agents[1].code, "A03XYZ0003");
  auto last = agents().list(acct, std::nullopt, 2, 4);
  ASSERT_EQ(last->agents.size(), 1u);
  EXPECT_EQ(last->agents[0].code, "A00XYZ0000");
  EXPECT_EQ(agents().list(acct, std::string("ready"), 10, 0)->total, 0);
  EXPECT_EQ(agents().list(acct, std::string("processing"), 10, 0)->total, 5);
}

TEST_P(AgentStoreContract, RemoveCancelsJobsQueuesBlobDeletesAndKeepsTheLedger) {
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
  ASSERT_TRUE(files().insert(f).ok());
  ASSERT_TRUE(agents().remove(acct, "A55EEE5555").ok());
  EXPECT_EQ(jobs().get("job_A55EEE5555")->state, "cancelled");
  EXPECT_EQ(files().get(acct, "file_x").status().code(), Code::kNotFound);
  auto cleanup = jobs().list_by_subject("blobs:A55EEE5555");
  ASSERT_EQ(cleanup->size(), 1u);
  EXPECT_NE((*cleanup)[0].payload.find("agents/A55EEE5555/image.png"), std::string::npos);
  // Generation had not started: its charge is refunded; the ledger keeps both entries.
  EXPECT_EQ(balance(acct), 1000);
  EXPECT_EQ(ledger().list(acct, 10, 0)->total, 3);
  EXPECT_EQ(agents().get(acct, "A55EEE5555").status().code(), Code::kNotFound);
}

TEST_P(AgentStoreContract, RemovingAnAgentWhoseGenerationStartedKeepsTheCharge) {
  auto acct = account(1000);
  ASSERT_TRUE(create(acct, "A56EEE5656").ok());
  auto job = jobs().claim(kLaneGenerate, "w1", 10'000'000);
  ASSERT_TRUE(job.ok() && job->has_value());
  ASSERT_TRUE(agents().remove(acct, "A56EEE5656").ok());
  EXPECT_EQ(balance(acct), 750);
}

// Many threads create the same code: one wins, every other gets kConflict (never an internal
// error), and only the winner is charged.
TEST_P(AgentStoreContract, ConcurrentCreatesOfOneCodeAreOneSuccessAndConflicts) {
  auto acct = account(100000);
  std::atomic<int> ok{0}, conflict{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      AgentRecord a;
      a.code = "race-code";
      a.account_id = acct;
      a.name = "n";
      a.system_prompt = "p";
      NewJob job;
      job.id = "job_race_" + std::to_string(t);
      job.kind = std::string(kJobAgentGenerate);
      job.account_id = acct;
      job.subject = a.code;
      auto r = agents().create(a, {}, billing::agent_generation_charge(acct, job.id, a.code), job);
      if (r.ok())
        ok++;
      else if (r.status().code() == Code::kConflict)
        conflict++;
      else
        other++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(conflict.load(), 7);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(balance(acct), 100000 - 250);
}

TEST_P(AgentStoreContract, AnIdempotencyKeyReplaysEvenWithACustomCode) {
  auto acct = account(1000);
  auto make = [&](const std::string& job_id) {
    AgentRecord a;
    a.code = "my-agent";
    a.account_id = acct;
    a.name = "n";
    a.system_prompt = "p";
    a.idempotency_key = "retry-me";
    NewJob job;
    job.id = job_id;
    job.kind = std::string(kJobAgentGenerate);
    job.account_id = acct;
    job.subject = a.code;
    return agents().create(a, {}, billing::agent_generation_charge(acct, job.id, a.code), job);
  };
  auto first = make("job_first");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->code, "my-agent");
  EXPECT_FALSE(first->replayed);
  auto again = make("job_second");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->code, "my-agent");
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(jobs().get("job_second").status().code(), Code::kNotFound);
  EXPECT_EQ(balance(acct), 750);
}

TEST_P(AgentStoreContract, ANewerMovementsRegenerationReplacesAQueuedOne) {
  auto acct = account(1000);
  ASSERT_TRUE(create(acct, "A88HHH8888").ok());
  for (int i = 0; i < 5; ++i) {
    NewJob j;
    j.id = "job_mov_" + std::to_string(i);
    j.kind = std::string(kJobDynamicsMovements);
    j.account_id = acct;
    j.subject = "A88HHH8888";
    ASSERT_TRUE(agents().update_dynamics_config(acct, "A88HHH8888", "{}", j).ok());
  }
  int queued = 0;
  auto listed = jobs().list_by_subject("A88HHH8888");
  ASSERT_TRUE(listed.ok());
  for (const auto& j : *listed) {
    if (j.kind == kJobDynamicsMovements && j.state == "queued") {
      ++queued;
      EXPECT_EQ(j.id, "job_mov_4");
    }
  }
  EXPECT_EQ(queued, 1);
}

// Codes are a namespace per account: the same code in two accounts is two independent agents.
TEST_P(AgentStoreContract, TheSameCodeInTwoAccountsIsTwoAgents) {
  auto a = account(1000), b = account(1000);
  ASSERT_TRUE(create(a, "my-bot", true).ok());
  EXPECT_TRUE(*agents().code_taken(a, "my-bot"));
  EXPECT_FALSE(*agents().code_taken(b, "my-bot"));
  ASSERT_TRUE(create(b, "my-bot", true).ok());  // no conflict: b's own agent
  EXPECT_EQ(balance(a), 750);
  EXPECT_EQ(balance(b), 750);
  // A second create in one account is still a conflict, and charges nothing.
  EXPECT_EQ(create(a, "my-bot", true).code(), Code::kConflict);
  EXPECT_EQ(balance(a), 750);

  // Lookups and writes see only the caller's agent.
  ASSERT_TRUE(agents().update_prompt(a, "my-bot", "I am A's").ok());
  EXPECT_EQ(agents().get(a, "my-bot")->system_prompt, "I am A's");
  EXPECT_EQ(agents().get(b, "my-bot")->system_prompt, "hi");
  EXPECT_EQ(agents().get(b, "my-bot")->account_id, b);
  EXPECT_EQ(agents().list(a, std::nullopt, 10, 0)->total, 1);
  EXPECT_EQ(agents().list(b, std::nullopt, 10, 0)->total, 1);
  ASSERT_TRUE(agents().update_dynamics_config(b, "my-bot", R"({"x":1})", std::nullopt).ok());
  EXPECT_EQ(agents().get(a, "my-bot")->dynamics_config, "{}");

  // Files of one account's agent are not the other's.
  FileRecord f;
  f.id = "file_of_a";
  f.account_id = a;
  f.agent_code = "my-bot";
  f.purpose = "input";
  f.blob_key = agent_blob_key(a, "my-bot", f.id, "png");
  f.kind = "image";
  f.mime = "image/png";
  f.ext = "png";
  ASSERT_TRUE(files().insert(f).ok());

  // Deleting B's agent leaves A's, its job, its file and its charge alone.
  ASSERT_TRUE(agents().remove(b, "my-bot").ok());
  EXPECT_EQ(agents().get(b, "my-bot").status().code(), Code::kNotFound);
  ASSERT_TRUE(agents().get(a, "my-bot").ok());
  EXPECT_EQ(jobs().get("job_my-bot_" + b)->state, "cancelled");
  EXPECT_EQ(jobs().get("job_my-bot_" + a)->state, "queued");
  EXPECT_TRUE(files().get(a, "file_of_a").ok());
  EXPECT_EQ(balance(b), 1000);  // b's unstarted generation refunded
  EXPECT_EQ(balance(a), 750);
}

// A job's progress and outcome land on the agent of the job's account only.
TEST_P(AgentStoreContract, AJobsOutcomeReachesOnlyItsOwnAccountsAgent) {
  auto a = account(1000), b = account(1000);
  ASSERT_TRUE(create(a, "twin", true).ok());
  clock_.advance_seconds(1);
  ASSERT_TRUE(create(b, "twin", true).ok());
  auto job = jobs().claim(kLaneGenerate, "w1", 10'000'000);
  ASSERT_TRUE(job.ok() && job->has_value());
  const std::string owner_acct = (*job)->account_id;
  const std::string other = owner_acct == a ? b : a;
  JobLease lease{(*job)->id, "w1"};
  EXPECT_TRUE(*agents().set_progress(owner_acct, "twin", lease, {"generating", 0.4, "Building", "face"}));
  GenerationOutcome o;
  o.account_id = owner_acct;
  o.code = "twin";
  o.lease = lease;
  o.success = true;
  o.model_file = "file_model";
  o.event = "agent.ready";
  o.event_data = R"({"agent_id":"twin"})";
  EXPECT_TRUE(*agents().finish_generation(o));
  EXPECT_EQ(agents().get(owner_acct, "twin")->status, "ready");
  EXPECT_EQ(agents().get(other, "twin")->status, "processing");
  EXPECT_EQ(agents().get(other, "twin")->progress, 0);
}

// Many threads in two accounts create the same code: exactly one wins per account.
TEST_P(AgentStoreContract, ConcurrentCreatesOfOneCodeInTwoAccountsAreOneWinnerEach) {
  auto a = account(100000), b = account(100000);
  std::atomic<int> ok{0}, conflict{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string& acct = t % 2 ? a : b;
      AgentRecord r;
      r.code = "shared-code";
      r.account_id = acct;
      r.name = "n";
      r.system_prompt = "p";
      NewJob job;
      job.id = "job_shared_" + std::to_string(t);
      job.kind = std::string(kJobAgentGenerate);
      job.account_id = acct;
      job.subject = r.code;
      auto got = agents().create(r, {}, billing::agent_generation_charge(acct, job.id, r.code), job);
      if (got.ok())
        ok++;
      else if (got.status().code() == Code::kConflict)
        conflict++;
      else
        other++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 2);
  EXPECT_EQ(conflict.load(), 6);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(balance(a), 100000 - 250);
  EXPECT_EQ(balance(b), 100000 - 250);
}

IMAGO_STORE_CONTRACT(AgentStoreContract);

}  // namespace
}  // namespace imago::contracts
