// Test support: the embedded backend (a SQLite database and a file blob store) in a fresh
// directory under /tmp, removed with it. For domain tests that need real stores but no server.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "blobs/blob_store.h"
#include "store/stores.h"
#include "util/clock.h"

namespace imago {

struct LocalBackend {
  // `name` tags the directory (/tmp/imago-NAME-XXXXXX), so a leftover says which test made it.
  LocalBackend(std::string_view name, Clock& clock) {
    std::string tmpl = "/tmp/imago-" + std::string(name) + "-XXXXXX";
    dir = mkdtemp(tmpl.data());
    auto st = open_stores("sqlite:" + dir + "/db", clock);
    EXPECT_TRUE(st.ok()) << st.status().message();
    if (st.ok()) stores = std::move(st).value();
    auto b = make_fs_blob_store(dir + "/blobs");
    EXPECT_TRUE(b.ok()) << b.status().message();
    if (b.ok()) blobs = std::move(b).value();
  }
  // Whatever uses the stores (a service) must be gone first: fixtures declare it after this.
  ~LocalBackend() {
    stores = Stores();
    blobs.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  LocalBackend(const LocalBackend&) = delete;
  LocalBackend& operator=(const LocalBackend&) = delete;

  std::string dir;
  Stores stores;
  std::unique_ptr<BlobStore> blobs;
};

}  // namespace imago
