#include "store/postgres/pg_blob_store.h"

#include <gtest/gtest.h>

#include <thread>

#include "store/postgres/test_db.h"

namespace imago {
namespace {

TEST(PgBlobStore, PutGetOverwriteDelete) {
  pg::TestDb t;
  auto store = make_pg_blob_store(t.db());
  ASSERT_TRUE(store->put("agents/A1/model.imx", std::string("a\0b", 3)).ok());
  EXPECT_EQ(*store->get("agents/A1/model.imx"), std::string("a\0b", 3));
  EXPECT_EQ(*store->size("agents/A1/model.imx"), 3);
  EXPECT_TRUE(*store->exists("agents/A1/model.imx"));
  ASSERT_TRUE(store->put("agents/A1/model.imx", "second").ok());
  EXPECT_EQ(*store->get("agents/A1/model.imx"), "second");
  ASSERT_TRUE(store->remove("agents/A1/model.imx").ok());
  EXPECT_FALSE(*store->exists("agents/A1/model.imx"));
  EXPECT_EQ(store->get("agents/A1/model.imx").status().code(), Code::kNotFound);
  EXPECT_EQ(store->size("agents/A1/model.imx").status().code(), Code::kNotFound);
  EXPECT_TRUE(store->remove("agents/A1/model.imx").ok());  // idempotent
  ASSERT_TRUE(store->put("empty", "").ok());
  EXPECT_EQ(*store->get("empty"), "");
  EXPECT_EQ(store->put("../etc/passwd", "x").code(), Code::kInvalidArgument);
}

TEST(PgBlobStore, LargeBlobsAreChunkedAndOverwritesLeaveNoOldChunks) {
  pg::TestDb t;
  auto store = make_pg_blob_store(t.db());
  std::string big(3 * kPgBlobChunkBytes + 12345, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131) >> 3);
  ASSERT_TRUE(store->put("clips/big.mp4", big).ok());
  EXPECT_EQ(*store->get("clips/big.mp4"), big);
  ASSERT_TRUE(store->put("clips/big.mp4", "small").ok());
  EXPECT_EQ(*store->get("clips/big.mp4"), "small");
  auto chunks = t.db().read([](sql::Connection& c) {
    auto q = c.prepare("SELECT COUNT(*), MAX(length(data)) FROM blob_chunks");
    q.step();
    return q.col_int(0);
  });
  EXPECT_EQ(*chunks, 1);
}

// Two nodes writing one key while a third reads: every read is one whole version.
TEST(PgBlobStore, ReadersSeeOneWholeVersion) {
  pg::TestDb t;
  auto a = make_pg_blob_store(t.db());
  auto db_b = pg::Db::open(t.url(), 4);
  ASSERT_TRUE(db_b.ok());
  auto b = make_pg_blob_store(**db_b);
  const std::string va(kPgBlobChunkBytes + 10, 'a'), vb(2 * kPgBlobChunkBytes + 7, 'b');
  ASSERT_TRUE(a->put("k", va).ok());
  std::atomic<bool> stop{false};
  std::thread w1([&] {
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(a->put("k", va).ok());
  });
  std::thread w2([&] {
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(b->put("k", vb).ok());
  });
  int reads = 0;
  std::thread r([&] {
    while (!stop) {
      auto got = b->get("k");
      ASSERT_TRUE(got.ok()) << got.status().message();
      ASSERT_TRUE(*got == va || *got == vb);
      ++reads;
    }
  });
  w1.join();
  w2.join();
  stop = true;
  r.join();
  EXPECT_GT(reads, 0);
}

}  // namespace
}  // namespace imago
