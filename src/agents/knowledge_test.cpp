// The agent's own knowledge and the no-charge face check, without HTTP: real stores (SQLite in a
// temporary directory) and blobs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <utility>

#include "agents/agent_service.h"
#include "blobs/blob_store.h"
#include "store/file_store.h"
#include "store/stores.h"
#include "store/test_local_backend.h"
#include "util/base64.h"
#include "util/random.h"

namespace imago::agents {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class KnowledgeTest : public ::testing::Test {
 protected:
  KnowledgeTest() {
    AgentServiceDeps d;
    d.agents = backend_.stores.agents.get();
    d.files = backend_.stores.files.get();
    d.blobs = backend_.blobs.get();
    d.clock = &clock_;
    d.public_url = &public_url_;
    service_ = std::make_unique<AgentService>(d);
    KeyMaterial km{"svc-" + random_base62(12), "imago_sk_x", "abcd"};
    acct_ = backend_.stores.accounts->create_account("a", Plan::kFree, 1000, "default", km)->first.id;
  }
  std::string agent() {
    GenerateRequest r;
    r.prompt = "You are Nora.";
    auto g = service_->generate(acct_, r);
    EXPECT_TRUE(g.ok()) << g.status().message();
    return g.ok() ? g->agent_id : "";
  }
  NewKnowledge text(std::string t) {
    NewKnowledge k;
    k.text = std::move(t);
    return k;
  }
  int64_t balance() { return backend_.stores.ledger->balance(acct_)->total(); }

  ManualClock clock_;
  std::string public_url_ = "http://127.0.0.1:1";
  LocalBackend backend_{"knowledge", clock_};  // before what uses it: gone after it
  std::unique_ptr<AgentService> service_;
  std::string acct_;
};

TEST_F(KnowledgeTest, TextIsKeptWithTheAgentListedOldestFirstAndGivenToSessions) {
  std::string code = agent();
  auto a =
      service_->add_knowledge(acct_, code, text("The shop opens at nine.\r\n\r\n\r\nIt closes at  six."));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->title, "The shop opens at nine.");
  clock_.advance_seconds(5);
  NewKnowledge k = text("Parking is free on Sundays.");
  k.title = "Parking";
  auto b = service_->add_knowledge(acct_, code, k);
  ASSERT_TRUE(b.ok()) << b.status().message();
  auto list = service_->list_knowledge(acct_, code);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, a->id);
  EXPECT_EQ((*list)[1].title, "Parking");
  EXPECT_EQ((*list)[0].bytes,
            static_cast<int64_t>(std::string("The shop opens at nine.\n\nIt closes at six.").size()));
  auto texts = service_->knowledge_texts(acct_, code);
  ASSERT_TRUE(texts.ok());
  EXPECT_EQ(*texts, (std::vector<std::string>{"The shop opens at nine.\n\nIt closes at six.",
                                              "Parking is free on Sundays."}));

  ASSERT_TRUE(service_->remove_knowledge(acct_, code, a->id).ok());
  EXPECT_EQ(service_->knowledge_texts(acct_, code)->size(), 1u);
  EXPECT_EQ(service_->remove_knowledge(acct_, code, a->id).code(), Code::kNotFound);
}

TEST_F(KnowledgeTest, AnotherAgentsOrAccountsItemsAndUnknownAgentsAreNotFound) {
  std::string one = agent(), two = agent();
  auto a = service_->add_knowledge(acct_, one, text("Only for one."));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(service_->remove_knowledge(acct_, two, a->id).code(), Code::kNotFound);
  EXPECT_TRUE(service_->list_knowledge(acct_, two)->empty());
  EXPECT_EQ(service_->add_knowledge(acct_, "nobody", text("x")).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->list_knowledge("acct_other", one).status().code(), Code::kNotFound);
  // The model and inputs of the agent are files too, but not knowledge.
  EXPECT_EQ(service_->knowledge_texts(acct_, one)->size(), 1u);
}

TEST_F(KnowledgeTest, BoundsAreCheckedBeforeAnythingIsStored) {
  std::string code = agent();
  EXPECT_EQ(service_->add_knowledge(acct_, code, text("   \n ")).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(service_->add_knowledge(acct_, code, NewKnowledge{}).status().code(), Code::kInvalidArgument);
  NewKnowledge both = text("a");
  both.document = "b";
  EXPECT_EQ(service_->add_knowledge(acct_, code, both).status().code(), Code::kInvalidArgument);
  NewKnowledge untitled = text("a");
  untitled.title = "";
  EXPECT_EQ(service_->add_knowledge(acct_, code, untitled).status().code(), Code::kInvalidArgument);
  ASSERT_TRUE(service_->add_knowledge(acct_, code, text(std::string(kMaxKnowledgeBytes - 10, 'a'))).ok());
  auto over = service_->add_knowledge(acct_, code, text("This sentence is too long."));
  EXPECT_EQ(over.status().code(), Code::kInvalidArgument);
  EXPECT_NE(over.status().message().find("at most 12000 bytes"), std::string::npos)
      << over.status().message();
  EXPECT_EQ(service_->list_knowledge(acct_, code)->size(), 1u);
  std::string other = agent();
  for (size_t i = 0; i < kMaxKnowledgeItems; ++i)
    ASSERT_TRUE(service_->add_knowledge(acct_, other, text("Fact.")).ok());
  EXPECT_EQ(service_->add_knowledge(acct_, other, text("Fact.")).status().code(), Code::kInvalidArgument);
}

TEST_F(KnowledgeTest, DocumentsAreReadAsTextHtmlLosesItsTagsAndBinaryIsRefused) {
  auto md = document_text("# Hours\n\nWe open at *nine*.\n", "hours.md");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(*md, "# Hours\n\nWe open at *nine*.");
  auto html = document_text(
      "<!DOCTYPE html><html><head><style>p{color:red}</style><script>var x = 1;</script></head>"
      "<body><h1>Menu</h1><p>Soup &amp; bread.</p><p>Tea&nbsp;is free.</p></body></html>",
      "menu.html");
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(*html, "Menu\nSoup & bread.\nTea is free.");
  EXPECT_EQ(document_text(std::string("%PDF-1.7\0\x01\x02", 11), "a.pdf").status().code(),
            Code::kUnsupportedMedia);
  EXPECT_EQ(document_text("\xff\xfe\x41", "a.txt").status().code(), Code::kUnsupportedMedia);

  std::string code = agent();
  NewKnowledge k;
  k.document = "<p>The garden closes at dusk.</p>";
  k.document_name = "garden.html";
  auto a = service_->add_knowledge(acct_, code, k);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->title, "garden.html");
  EXPECT_EQ(service_->knowledge_texts(acct_, code)->at(0), "The garden closes at dusk.");
}

TEST_F(KnowledgeTest, DeletingTheAgentDeletesItsKnowledge) {
  std::string code = agent();
  auto a = service_->add_knowledge(acct_, code, text("Gone with the agent."));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(service_->remove(acct_, code).ok());
  EXPECT_EQ(backend_.stores.files->get(acct_, a->id).status().code(), Code::kNotFound);
}

TEST_F(KnowledgeTest, TheFaceCheckFindsAFaceOrSaysWhyNotAndChargesNothing) {
  const int64_t before = balance();
  auto face = service_->check_face_of(
      acct_, base64_encode(read_file("/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg")));
  ASSERT_TRUE(face.ok()) << face.status().message();
  EXPECT_TRUE(face->found);
  EXPECT_GT(face->image_width, 0);
  EXPECT_GT(face->width, 20);
  EXPECT_GE(face->x, 0);
  EXPECT_LE(face->x + face->width, face->image_width + 0.5);
  EXPECT_LE(face->y + face->height, face->image_height + 0.5);
  // A chessboard: an image, no face.
  auto none = service_->check_face_of(
      acct_, base64_encode(read_file("/usr/share/doc/opencv-doc/examples/data/chessboard.png")));
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->found);
  EXPECT_EQ(none->reason, "No face found in the image");
  // A 1x1 PNG: refused with the builder's own reason, as generate would.
  auto tiny = service_->check_face_of(
      acct_,
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==");
  ASSERT_TRUE(tiny.ok()) << tiny.status().message();
  EXPECT_FALSE(tiny->found);
  EXPECT_EQ(tiny->reason, "The image is too small");
  EXPECT_EQ(service_->check_face_of(acct_, "").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(service_->check_face_of(acct_, "https://example.org/a.jpg").status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(service_->check_face_of(acct_, "bm90IGFuIGltYWdl").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(balance(), before);
}

// A FileStore whose next insert first runs `before_insert`: another node's add landing between this
// one's bounds check and its insert.
class RacingFileStore final : public FileStore {
 public:
  explicit RacingFileStore(FileStore& inner) : inner_(inner) {}
  std::function<void()> before_insert;
  Status insert(const FileRecord& f) override {
    if (auto hook = std::exchange(before_insert, nullptr)) hook();
    return inner_.insert(f);
  }
  Result<FileRecord> get(const std::string& a, const std::string& id) override { return inner_.get(a, id); }
  Result<FileRecord> remove(const std::string& a, const std::string& id) override {
    return inner_.remove(a, id);
  }
  Result<int64_t> usage_bytes(const std::string& a) override { return inner_.usage_bytes(a); }
  Result<std::vector<FileRecord>> list_agent_files(const std::string& a, const std::string& c,
                                                   const std::string& p) override {
    return inner_.list_agent_files(a, c, p);
  }

 private:
  FileStore& inner_;
};

TEST_F(KnowledgeTest, TwoNodesAddingAtOnceNeverExceedTheItemBound) {
  const std::string code = agent();
  for (size_t i = 0; i + 1 < kMaxKnowledgeItems; ++i)
    ASSERT_TRUE(service_->add_knowledge(acct_, code, text("Fact " + std::to_string(i) + ".")).ok());
  // Node A (its own service over the same database) checks the bounds, then node B adds the last
  // item the bound allows before A's insert lands.
  RacingFileStore racing(*backend_.stores.files);
  AgentServiceDeps da;
  da.agents = backend_.stores.agents.get();
  da.files = &racing;
  da.blobs = backend_.blobs.get();
  da.clock = &clock_;
  da.public_url = &public_url_;
  AgentService node_a(da);
  Status b_added;
  racing.before_insert = [&] { b_added = service_->add_knowledge(acct_, code, text("B's fact.")).status(); };
  auto a = node_a.add_knowledge(acct_, code, text("A's fact."));
  EXPECT_TRUE(b_added.ok()) << b_added.message();
  EXPECT_EQ(a.status().code(), Code::kInvalidArgument);  // A took its item back
  EXPECT_EQ(service_->list_knowledge(acct_, code)->size(), kMaxKnowledgeItems);
  auto texts = service_->knowledge_texts(acct_, code);
  ASSERT_TRUE(texts.ok());
  size_t kept_a = 0;
  for (const auto& t : *texts) kept_a += t.find("A's fact") != std::string::npos;
  EXPECT_EQ(kept_a, 0u);
}

}  // namespace
}  // namespace imago::agents
