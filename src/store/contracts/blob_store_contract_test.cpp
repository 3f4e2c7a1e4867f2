// Contract of BlobStore: small blobs round-trip; large ones are written from a source and read back
// in ranges without the store ever asking for or handing out more than kBlobChunkBytes at once; a
// blob being written is invisible until it is whole; a failed write leaves nothing (and the old
// content, if any); concurrent readers each see one whole version. The SQLite backend's nodes keep
// blobs as files (fs store); PostgreSQL nodes keep them in the database.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>

#include "blobs/blob_store.h"
#include "store/contracts/store_backends.h"
#include "store/postgres/db.h"
#include "store/postgres/pg_blob_store.h"

namespace imago::contracts {
namespace {

class BlobStoreContract : public StoreContract {
 protected:
  void SetUp() override {
    StoreContract::SetUp();
    if (stores().pg_db) {
      blobs_ = make_pg_blob_store(*stores().pg_db);
    } else {
      char tmpl[] = "/tmp/imago-blobs-XXXXXX";
      dir_ = mkdtemp(tmpl);
      auto s = make_fs_blob_store(dir_ + "/blobs");
      ASSERT_TRUE(s.ok());
      blobs_ = std::move(s).value();
    }
  }
  void TearDown() override {
    blobs_.reset();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  BlobStore& blobs() { return *blobs_; }

  // What is stored beyond `expected_blobs` whole blobs: temporary files, or chunks and write
  // records of versions that are not current.
  int64_t leftovers() {
    if (stores().pg_db) {
      auto n = stores().pg_db->read([](sql::Connection& c) {
        auto q = c.prepare(
            "SELECT (SELECT COUNT(*) FROM blob_writes) + (SELECT COUNT(*) FROM blob_chunks ch"
            " WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.key = ch.key AND b.version = ch.version))");
        q.step();
        return q.col_int(0);
      });
      return n.ok() ? *n : -1;
    }
    int64_t n = 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(dir_))
      if (e.path().filename().string().find(".tmp-") != std::string::npos) ++n;
    return n;
  }

  static std::string pattern(size_t size, int seed) {
    std::string s(size, '\0');
    for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>(((i + seed) * 131) >> 3);
    return s;
  }

 private:
  std::string dir_;
  std::unique_ptr<BlobStore> blobs_;
};

std::string text_of(const Result<std::string>& r) {
  return r.ok() ? *r : "error: " + r.status().message();
}

// A source that hands out `data` in pieces of at most `piece` bytes, recording the largest
// buffer it was offered; `fail_after` bytes in, it fails instead (or runs `midway` once).
struct TestSource {
  std::string data;
  size_t piece = 100000;
  size_t pos = 0;
  size_t largest_cap = 0;
  size_t fail_after = SIZE_MAX;
  std::function<void()> midway;
  size_t midway_at = SIZE_MAX;

  BlobSource source() {
    return [this](char* buf, size_t cap) -> Result<size_t> {
      largest_cap = std::max(largest_cap, cap);
      if (pos >= fail_after) return Status::Unavailable("the client went away");
      if (pos >= midway_at && midway) {
        auto m = std::move(midway);
        midway = nullptr;
        m();
      }
      size_t n = std::min({cap, piece, data.size() - pos});
      std::memcpy(buf, data.data() + pos, n);
      pos += n;
      return n;
    };
  }
};

TEST_P(BlobStoreContract, SmallBlobsPutGetOverwriteDelete) {
  ASSERT_TRUE(blobs().put("agents/A1/model.imx", std::string("a\0b", 3)).ok());
  EXPECT_EQ(*blobs().get("agents/A1/model.imx"), std::string("a\0b", 3));
  EXPECT_EQ(*blobs().size("agents/A1/model.imx"), 3);
  EXPECT_TRUE(*blobs().exists("agents/A1/model.imx"));
  ASSERT_TRUE(blobs().put("agents/A1/model.imx", "second").ok());
  EXPECT_EQ(*blobs().get("agents/A1/model.imx"), "second");
  ASSERT_TRUE(blobs().remove("agents/A1/model.imx").ok());
  EXPECT_FALSE(*blobs().exists("agents/A1/model.imx"));
  EXPECT_EQ(blobs().get("agents/A1/model.imx").status().code(), Code::kNotFound);
  EXPECT_EQ(blobs().open("agents/A1/model.imx").status().code(), Code::kNotFound);
  EXPECT_EQ(blobs().size("agents/A1/model.imx").status().code(), Code::kNotFound);
  EXPECT_TRUE(blobs().remove("agents/A1/model.imx").ok());  // idempotent
  ASSERT_TRUE(blobs().put("empty", "").ok());
  EXPECT_EQ(*blobs().get("empty"), "");
  EXPECT_EQ((*blobs().open("empty"))->read(0, 10)->size(), 0u);
  EXPECT_EQ(blobs().put("../etc/passwd", "x").code(), Code::kInvalidArgument);
  EXPECT_EQ(leftovers(), 0);
}

TEST_P(BlobStoreContract, LargeBlobStreamsInBoundedChunks) {
  TestSource src;
  src.data = pattern(3 * kBlobChunkBytes + 12345, 1);
  src.piece = 300007;  // pieces that straddle chunk boundaries
  ASSERT_TRUE(blobs().put_from("videos/acct/big.mp4", src.source()).ok());
  EXPECT_EQ(src.pos, src.data.size());
  EXPECT_LE(src.largest_cap, kBlobChunkBytes);  // the store never asked for more than a chunk
  EXPECT_GT(src.largest_cap, 0u);
  EXPECT_EQ(*blobs().size("videos/acct/big.mp4"), static_cast<int64_t>(src.data.size()));

  auto reader = blobs().open("videos/acct/big.mp4");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->size(), static_cast<int64_t>(src.data.size()));
  // Sequential reads asking for more than a chunk get at most a chunk each.
  std::string back;
  while (true) {
    auto piece = (*reader)->read(static_cast<int64_t>(back.size()), 4 * kBlobChunkBytes);
    ASSERT_TRUE(piece.ok()) << piece.status().message();
    ASSERT_LE(piece->size(), kBlobChunkBytes);
    if (piece->empty()) break;
    back += *piece;
  }
  EXPECT_TRUE(back == src.data);
  // Ranges: across a chunk boundary, at the tail, past the end.
  const int64_t at = static_cast<int64_t>(kBlobChunkBytes) - 10;
  std::string range;
  while (range.size() < 100) {
    auto piece = (*reader)->read(at + static_cast<int64_t>(range.size()), 100 - range.size());
    ASSERT_TRUE(piece.ok());
    ASSERT_FALSE(piece->empty());
    range += *piece;
  }
  EXPECT_EQ(range, src.data.substr(static_cast<size_t>(at), 100));
  EXPECT_EQ(*(*reader)->read(static_cast<int64_t>(src.data.size()) - 5, 100),
            src.data.substr(src.data.size() - 5));
  EXPECT_EQ((*reader)->read(static_cast<int64_t>(src.data.size()) + 5, 100)->size(), 0u);
  EXPECT_TRUE(*blobs().get("videos/acct/big.mp4") == src.data);
  // An overwrite with a small blob leaves nothing of the large one.
  ASSERT_TRUE(blobs().put("videos/acct/big.mp4", "small").ok());
  EXPECT_EQ(*blobs().get("videos/acct/big.mp4"), "small");
  EXPECT_EQ(leftovers(), 0);
}

TEST_P(BlobStoreContract, HalfWrittenBlobIsNeverVisible) {
  TestSource src;
  src.data = pattern(2 * kBlobChunkBytes + 77, 2);
  src.midway_at = kBlobChunkBytes + kBlobChunkBytes / 2;  // a chunk has been stored by now
  bool checked = false;
  src.midway = [&] {
    EXPECT_FALSE(*blobs().exists("uploads/a/new.bin"));
    EXPECT_EQ(blobs().open("uploads/a/new.bin").status().code(), Code::kNotFound);
    EXPECT_EQ(text_of(blobs().get("uploads/a/old.bin")), "old content");
    checked = true;
  };
  ASSERT_TRUE(blobs().put("uploads/a/old.bin", "old content").ok());
  ASSERT_TRUE(blobs().put_from("uploads/a/new.bin", src.source()).ok());
  EXPECT_TRUE(checked);
  EXPECT_TRUE(*blobs().get("uploads/a/new.bin") == src.data);

  // The same while overwriting: readers keep seeing the old content until the swap.
  TestSource over;
  over.data = pattern(2 * kBlobChunkBytes, 3);
  over.midway_at = kBlobChunkBytes + 1;
  over.midway = [&] { EXPECT_EQ(text_of(blobs().get("uploads/a/old.bin")), "old content"); };
  ASSERT_TRUE(blobs().put_from("uploads/a/old.bin", over.source()).ok());
  EXPECT_TRUE(*blobs().get("uploads/a/old.bin") == over.data);
  EXPECT_EQ(leftovers(), 0);
}

TEST_P(BlobStoreContract, FailedPutLeavesNothing) {
  TestSource src;
  src.data = pattern(3 * kBlobChunkBytes, 4);
  src.fail_after = 2 * kBlobChunkBytes + 5;  // two chunks were already stored
  Status st = blobs().put_from("uploads/a/broken.mp4", src.source());
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_EQ(st.message(), "the client went away");
  EXPECT_FALSE(*blobs().exists("uploads/a/broken.mp4"));
  EXPECT_EQ(leftovers(), 0);

  // Over an existing blob: the old content stays whole.
  const std::string old = pattern(kBlobChunkBytes + 3, 5);
  ASSERT_TRUE(blobs().put("uploads/a/kept.mp4", old).ok());
  TestSource again;
  again.data = pattern(3 * kBlobChunkBytes, 6);
  again.fail_after = kBlobChunkBytes + 1;
  EXPECT_FALSE(blobs().put_from("uploads/a/kept.mp4", again.source()).ok());
  EXPECT_TRUE(*blobs().get("uploads/a/kept.mp4") == old);
  EXPECT_EQ(leftovers(), 0);
}

TEST_P(BlobStoreContract, ConcurrentReadersSeeWholeVersions) {
  const std::string stable = pattern(2 * kBlobChunkBytes + 999, 7);
  ASSERT_TRUE(blobs().put("clips/stable.bin", stable).ok());
  const std::string va(kBlobChunkBytes + 10, 'a'), vb(2 * kBlobChunkBytes + 7, 'b');
  ASSERT_TRUE(blobs().put("clips/churn.bin", va).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> whole_reads{0}, ranged_reads{0};
  std::thread writer([&] {
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(blobs().put("clips/churn.bin", i % 2 ? va : vb).ok());
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        auto got = blobs().get("clips/churn.bin");
        ASSERT_TRUE(got.ok()) << got.status().message();
        ASSERT_TRUE(*got == va || *got == vb);
        ++whole_reads;
      }
    });
  }
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      do {
        auto r = blobs().open("clips/stable.bin");
        ASSERT_TRUE(r.ok());
        std::string back;
        const size_t step = t == 0 ? 65536 : kBlobChunkBytes;
        while (true) {
          auto piece = (*r)->read(static_cast<int64_t>(back.size()), step);
          ASSERT_TRUE(piece.ok()) << piece.status().message();
          if (piece->empty()) break;
          back += *piece;
        }
        ASSERT_TRUE(back == stable);
        ++ranged_reads;
      } while (!stop);
    });
  }
  writer.join();
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_GT(whole_reads.load(), 0);
  EXPECT_GT(ranged_reads.load(), 0);
  EXPECT_EQ(leftovers(), 0);
}

}  // namespace

IMAGO_STORE_CONTRACT(BlobStoreContract);

}  // namespace imago::contracts
