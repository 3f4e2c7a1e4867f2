// The SQLite voice store: account scoping, re-tuning under the same code, revocation for good.
#include <gtest/gtest.h>

#include "store/sql/sql_stores.h"
#include "store/sqlite/test_db.h"
#include "util/random.h"

namespace imago {
namespace {

DesignedVoice voice(const std::string& account, const std::string& name) {
  DesignedVoice v;
  v.code = random_uuid();
  v.account_id = account;
  v.name = name;
  v.base_voice = "M2";
  v.pitch = 0.1;
  return v;
}

TEST(VoiceStore, CodesAreAccountScopedRetunableAndRevocable) {
  sqlite::TestDb db;
  ManualClock clock;
  auto store = sql::make_voice_store(db.db(), clock);

  auto a = store->create(voice("usr_a", "first"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->created_at, clock.now_s());
  clock.advance_seconds(5);
  ASSERT_TRUE(store->create(voice("usr_a", "second")).ok());
  ASSERT_TRUE(store->create(voice("usr_b", "theirs")).ok());

  EXPECT_TRUE(store->get("usr_a", a->code).ok());
  EXPECT_EQ(store->get("usr_b", a->code).status().code(), Code::kNotFound);

  auto list = store->list("usr_a");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "first");
  EXPECT_EQ((*list)[1].name, "second");

  DesignedVoice retuned = *a;
  retuned.pitch = -0.2;
  retuned.base_voice = "F1";
  clock.advance_seconds(5);
  auto u = store->update(retuned);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->code, a->code);
  EXPECT_DOUBLE_EQ(u->pitch, -0.2);
  EXPECT_EQ(u->base_voice, "F1");
  EXPECT_GT(u->updated_at, u->created_at);

  DesignedVoice hijack = retuned;
  hijack.account_id = "usr_b";
  EXPECT_EQ(store->update(hijack).status().code(), Code::kNotFound);
  EXPECT_EQ(store->revoke("usr_b", a->code).code(), Code::kNotFound);

  EXPECT_TRUE(store->revoke("usr_a", a->code).ok());
  EXPECT_EQ(store->get("usr_a", a->code).status().code(), Code::kNotFound);
  EXPECT_EQ(store->revoke("usr_a", a->code).code(), Code::kNotFound);
  EXPECT_EQ(store->update(retuned).status().code(), Code::kNotFound);
  EXPECT_EQ(store->list("usr_a")->size(), 1u);
  // A revoked code is never reissued: inserting it again is refused by the primary key.
  DesignedVoice again = voice("usr_a", "again");
  again.code = a->code;
  EXPECT_FALSE(store->create(again).ok());
}

}  // namespace
}  // namespace imago
