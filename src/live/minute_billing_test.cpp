#include "live/minute_billing.h"

#include <gtest/gtest.h>

namespace imago::live {
namespace {

TEST(ChatMode, TheJoinsBillingTypePicksTheModeAndItsRate) {
  EXPECT_EQ(*chat_mode_for_join(std::nullopt, false), ChatMode::kAvatar);
  EXPECT_EQ(*chat_mode_for_join("voice_chat", false), ChatMode::kVoiceChat);
  EXPECT_EQ(*chat_mode_for_join("camera_chat", true), ChatMode::kCameraChat);
  EXPECT_EQ(cloud_billing_type("expression", ChatMode::kAvatar), "expression_cloud");
  EXPECT_EQ(cloud_billing_type("essence", ChatMode::kAvatar), "essence_cloud");
  EXPECT_EQ(live_rate(cloud_billing_type("expression", ChatMode::kVoiceChat)), 10);
  EXPECT_EQ(live_rate(cloud_billing_type("essence", ChatMode::kCameraChat)), 30);
}

TEST(ChatMode, CameraChatWithoutAModelThatSeesAndUnknownTypesAreRefused) {
  auto no_eyes = chat_mode_for_join("camera_chat", false);
  ASSERT_FALSE(no_eyes.ok());
  EXPECT_EQ(no_eyes.status().code(), Code::kInvalidArgument);
  EXPECT_NE(no_eyes.status().message().find("--llm-vision"), std::string::npos);
  for (std::string_view t : {"", "video_chat", "essence_cloud", "Camera_chat"}) {
    auto r = chat_mode_for_join(t, true);
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace imago::live
