#include "agents/dynamics_config.h"

#include <gtest/gtest.h>

namespace imago::agents {
namespace {

namespace json = boost::json;

TEST(DynamicsConfig, DefaultsMapGreetingsToTheWave) {
  const auto& d = default_dynamics_config();
  EXPECT_EQ(d.at("keywords").at("hello").as_string(), "mini_wave_hello");
  EXPECT_FALSE(d.at("enabled").as_bool());
  EXPECT_TRUE(validate_dynamics_config(d).ok());
  EXPECT_EQ(gesture_for_text(d, "Hello there!"), "mini_wave_hello");
  EXPECT_EQ(gesture_for_text(d, "That is so funny, haha"), "laugh_react");
  EXPECT_EQ(gesture_for_text(d, "this thing"), "");  // "hi" inside "this" does not count
}

TEST(DynamicsConfig, MergePatchMergesObjectsAndDeletesNulls) {
  json::object cfg = default_dynamics_config();
  merge_patch(cfg,
              json::parse(R"({"enabled": true, "keywords": {"cheers": "blow_kiss_heart", "hello": null}})")
                  .as_object());
  EXPECT_TRUE(cfg.at("enabled").as_bool());
  EXPECT_EQ(cfg.at("keywords").at("cheers").as_string(), "blow_kiss_heart");
  EXPECT_FALSE(cfg.at("keywords").as_object().contains("hello"));
  EXPECT_EQ(cfg.at("keywords").at("hi").as_string(), "mini_wave_hello");
}

TEST(DynamicsConfig, ValidationNamesTheField) {
  auto bad = [](const char* text) { return validate_dynamics_config(json::parse(text).as_object()); };
  EXPECT_NE(bad(R"({"enabled": "yes"})").message().find("dynamics.enabled"), std::string::npos);
  EXPECT_NE(bad(R"({"keywords": {"hi": "dance"}})").message().find("dynamics.keywords.hi"),
            std::string::npos);
  EXPECT_FALSE(bad(R"({"keywords": []})").ok());
  EXPECT_FALSE(bad(R"({"movement_duration": 0})").ok());
  EXPECT_FALSE(bad(R"({"active_model": "other"})").ok());
  EXPECT_TRUE(bad(R"({"custom": {"anything": 1}})").ok());
}

TEST(DynamicsConfig, EffectiveConfigReadsTheStoredPatchOverDefaults) {
  AgentRecord a;
  a.dynamics_config = R"({"enabled": true, "active_model": "dynamics"})";
  auto cfg = effective_dynamics_config(a);
  EXPECT_TRUE(cfg.at("enabled").as_bool());
  EXPECT_EQ(cfg.at("active_model").as_string(), "dynamics");
  EXPECT_TRUE(cfg.contains("keywords"));
}

}  // namespace
}  // namespace imago::agents
