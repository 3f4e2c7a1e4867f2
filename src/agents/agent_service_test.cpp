// The agent lifecycle without HTTP: real stores (SQLite in a temporary directory) and blobs.
#include "agents/agent_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "blobs/blob_store.h"
#include "store/stores.h"
#include "store/test_local_backend.h"
#include "util/base64.h"
#include "util/random.h"

namespace imago::agents {
namespace {

// A 1x1 PNG: decodes and sniffs as an image, but holds no face.
const char kPngBase64[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A portrait (Debian opencv-doc), base64: the face check at generation passes.
const std::string& face_base64() {
  static const std::string b =
      base64_encode(read_file("/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg"));
  return b;
}

class AgentServiceTest : public ::testing::Test {
 protected:
  AgentServiceTest() {
    AgentServiceDeps d;
    d.agents = backend_.stores.agents.get();
    d.files = backend_.stores.files.get();
    d.blobs = backend_.blobs.get();
    d.voices = backend_.stores.voices.get();
    d.clock = &clock_;
    d.public_url = &public_url_;
    d.wake_workers = [this] { ++wakes_; };
    service_ = std::make_unique<AgentService>(d);
  }

  std::string account(int64_t credits) {
    KeyMaterial km{"svc-" + random_base62(12), "imago_sk_x", "abcd"};
    return backend_.stores.accounts->create_account("a", Plan::kFree, credits, "default", km)->first.id;
  }
  int64_t balance(const std::string& acct) { return backend_.stores.ledger->balance(acct)->total(); }
  size_t blob_files() {
    size_t n = 0;
    std::error_code ec;
    if (!std::filesystem::exists(backend_.dir + "/blobs")) return 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(backend_.dir + "/blobs", ec))
      n += e.is_regular_file();
    return n;
  }

  ManualClock clock_;
  std::string public_url_ = "http://127.0.0.1:1";
  LocalBackend backend_{"agents", clock_};  // before what uses it: gone after it
  std::unique_ptr<AgentService> service_;
  int wakes_ = 0;
};

TEST_F(AgentServiceTest, GenerateChargesStoresInputsAndQueues) {
  auto acct = account(1000);
  GenerateRequest r;
  r.image = face_base64();
  r.name = "Ada";
  auto g = service_->generate(acct, r);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_FALSE(g->replayed);
  EXPECT_EQ(balance(acct), 750);
  EXPECT_EQ(wakes_, 1);
  auto a = service_->get(acct, g->agent_id);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->name, "Ada");
  EXPECT_EQ(a->status, "processing");
  EXPECT_EQ(a->model, "essence");
  EXPECT_FALSE(a->system_prompt.empty());  // a random persona when none is given
  ASSERT_TRUE(a->image_file.has_value());
  EXPECT_EQ(blob_files(), 1u);
}

TEST_F(AgentServiceTest, RequestedVoiceIsKeptWithTheAgent) {
  auto acct = account(1000);
  auto none = service_->generate(acct, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(service_->get(acct, none->agent_id)->voice, "{}");  // decided by the generation
  GenerateRequest r;
  r.voice = "F3";
  auto g = service_->generate(acct, r);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto v = boost::json::parse(service_->get(acct, g->agent_id)->voice);
  EXPECT_EQ(v.at("id"), "F3");
  EXPECT_EQ(v.at("source"), "requested");
  // A designed voice of the account: its base voice and axes win over `voice`.
  DesignedVoice dv0;
  dv0.account_id = acct;
  dv0.code = "0f8fad5b-d9cb-469f-a165-70867728950e";
  dv0.name = "Narrator";
  dv0.base_voice = "M2";
  dv0.pitch = 0.2;
  ASSERT_TRUE(backend_.stores.voices->create(dv0).ok());
  GenerateRequest designed;
  designed.voice = "F1";
  designed.voice_code = "0F8FAD5B-D9CB-469F-A165-70867728950E";  // codes are case-insensitive
  auto d = service_->generate(acct, designed);
  ASSERT_TRUE(d.ok()) << d.status().message();
  auto dv = boost::json::parse(service_->get(acct, d->agent_id)->voice);
  EXPECT_EQ(dv.at("id"), "M2");
  EXPECT_EQ(dv.at("source"), "voice_code");
  EXPECT_EQ(dv.at("voice_code"), "0f8fad5b-d9cb-469f-a165-70867728950e");
  EXPECT_DOUBLE_EQ(dv.at("axes").at("pitch").as_double(), 0.2);
  // Another account's code, or none at all, is refused before anything is charged.
  const int64_t before = balance(acct);
  GenerateRequest unknown;
  unknown.voice_code = "9b2d3c1e-0000-4000-8000-000000000000";
  EXPECT_EQ(service_->generate(acct, unknown).status().code(), Code::kInvalidArgument);
  GenerateRequest foreign;
  foreign.voice_code = dv0.code;
  EXPECT_EQ(service_->generate(account(1000), foreign).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(balance(acct), before);
}

TEST_F(AgentServiceTest, InvalidRequestsChargeNothing) {
  auto acct = account(1000);
  auto code_of = [&](GenerateRequest r) { return service_->generate(acct, r).status().code(); };
  GenerateRequest bad_model;
  bad_model.model = "deluxe";
  EXPECT_EQ(code_of(bad_model), Code::kInvalidArgument);
  GenerateRequest bad_duration;
  bad_duration.duration = 500;
  EXPECT_EQ(code_of(bad_duration), Code::kInvalidArgument);
  GenerateRequest bad_id;
  bad_id.agent_id = "status";
  EXPECT_EQ(code_of(bad_id), Code::kInvalidArgument);
  GenerateRequest bad_image;
  bad_image.image = "data:image/png;base64,@@@";
  EXPECT_EQ(code_of(bad_image), Code::kInvalidArgument);
  GenerateRequest long_prompt;
  long_prompt.prompt = std::string(kMaxPromptChars + 1, 'x');
  EXPECT_EQ(code_of(long_prompt), Code::kInvalidArgument);
  for (const char* v : {"M6", "X1", "m1", "", "M12"}) {
    GenerateRequest bad_voice;
    bad_voice.voice = v;
    EXPECT_EQ(code_of(bad_voice), Code::kInvalidArgument) << v;
  }
  EXPECT_EQ(balance(acct), 1000);
  EXPECT_EQ(backend_.stores.agents->list(acct, std::nullopt, 10, 0)->total, 0);
}

TEST_F(AgentServiceTest, AnImageWithoutAFaceIsRefusedBeforeAnythingIsChargedOrStored) {
  auto acct = account(1000);
  GenerateRequest r;
  r.image = base64_encode(read_file("/usr/share/doc/opencv-doc/examples/data/fruits.jpg"));
  auto g = service_->generate(acct, r);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(g.status().message(), "No face found in the image");
  r.image = kPngBase64;  // decodes, but 1x1: the builder's own message
  EXPECT_EQ(service_->generate(acct, r).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(balance(acct), 1000);
  EXPECT_EQ(blob_files(), 0u);
  EXPECT_EQ(backend_.stores.agents->list(acct, std::nullopt, 10, 0)->total, 0);
  EXPECT_EQ(wakes_, 0);
}

TEST_F(AgentServiceTest, ShortBalanceLeavesNoAgentAndNoBlobs) {
  auto acct = account(100);
  GenerateRequest r;
  r.image = face_base64();
  auto g = service_->generate(acct, r);
  EXPECT_EQ(g.status().code(), Code::kInsufficientFunds);
  EXPECT_EQ(blob_files(), 0u);
  EXPECT_EQ(backend_.stores.agents->list(acct, std::nullopt, 10, 0)->total, 0);
  EXPECT_EQ(wakes_, 0);
}

TEST_F(AgentServiceTest, StorageQuotaIsCheckedBeforeAnythingIsChargedOrStored) {
  auto acct = account(1000);
  GenerateRequest r;
  r.image = face_base64();
  r.storage_quota_bytes = 10;  // smaller than the image
  auto g = service_->generate(acct, r);
  EXPECT_EQ(g.status().code(), Code::kQuotaExceeded);
  EXPECT_EQ(balance(acct), 1000);
  EXPECT_EQ(blob_files(), 0u);
  r.storage_quota_bytes = 1'000'000;
  ASSERT_TRUE(service_->generate(acct, r).ok());
  EXPECT_EQ(balance(acct), 750);
}

TEST_F(AgentServiceTest, IdempotencyKeyReplaysEvenWithACustomAgentId) {
  auto acct = account(1000);
  GenerateRequest r;
  r.agent_id = "my-agent";
  r.idempotency_key = "req-42";
  r.image = face_base64();
  auto first = service_->generate(acct, r);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto again = service_->generate(acct, r);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->agent_id, "my-agent");
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(balance(acct), 750);
  EXPECT_EQ(blob_files(), 1u);  // the replay's inline image was not kept
  // Without the key the same custom id is taken.
  r.idempotency_key.reset();
  EXPECT_EQ(service_->generate(acct, r).status().code(), Code::kConflict);
}

TEST_F(AgentServiceTest, AnotherAccountsAgentIsNotFound) {
  auto a = account(1000), b = account(1000);
  auto g = service_->generate(a, {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(service_->get(b, g->agent_id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->update_prompt(b, g->agent_id, std::string("x")).code(), Code::kNotFound);
  EXPECT_EQ(service_->remove(b, g->agent_id).code(), Code::kNotFound);
  DynamicsRequest d;
  d.agent_id = g->agent_id;
  EXPECT_EQ(service_->start_dynamics(b, d).status().code(), Code::kNotFound);
  EXPECT_EQ(balance(b), 1000);
}

TEST_F(AgentServiceTest, DeletingBeforeGenerationStartsRefunds) {
  auto acct = account(1000);
  auto g = service_->generate(acct, {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(balance(acct), 750);
  ASSERT_TRUE(service_->remove(acct, g->agent_id).ok());
  EXPECT_EQ(balance(acct), 1000);
  auto history = backend_.stores.ledger->list(acct, 10, 0);
  ASSERT_EQ(history->total, 3);  // initial credits, charge, refund: usage history stays
  EXPECT_EQ(history->entries[0].kind, LedgerKind::kRefund);
}

TEST_F(AgentServiceTest, DeletingAfterGenerationStartedKeepsTheCharge) {
  auto acct = account(1000);
  auto g = service_->generate(acct, {});
  ASSERT_TRUE(g.ok());
  auto claimed = backend_.stores.jobs->claim(kLaneGenerate, "worker", 10'000'000);
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  ASSERT_TRUE(service_->remove(acct, g->agent_id).ok());
  EXPECT_EQ(balance(acct), 750);
}

TEST_F(AgentServiceTest, PromptAndListValidation) {
  auto acct = account(1000);
  auto g = service_->generate(acct, {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(service_->update_prompt(acct, g->agent_id, std::nullopt).code(), Code::kInvalidArgument);
  EXPECT_TRUE(service_->update_prompt(acct, g->agent_id, std::string("Be brief.")).ok());
  EXPECT_EQ(service_->get(acct, g->agent_id)->system_prompt, "Be brief.");
  EXPECT_EQ(service_->list(acct, std::string("sleeping"), 10, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(service_->list(acct, std::string("processing"), 10, 0)->total, 1);
}

TEST_F(AgentServiceTest, DynamicsUpdateBeforeTheModelExistsSaysWhy) {
  auto acct = account(1000);
  auto g = service_->generate(acct, {});
  ASSERT_TRUE(g.ok());
  boost::json::object patch{{"keywords", boost::json::object{{"hello", "mini_wave_hello"}}}};
  auto u = service_->update_dynamics(acct, g->agent_id, {&patch, true});
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_FALSE(u->regeneration_started);
  EXPECT_NE(u->regeneration_error.find("still generating"), std::string::npos);
  EXPECT_EQ(service_->update_dynamics(acct, g->agent_id, {nullptr, std::nullopt}).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace imago::agents
