#include "billing/spend_cap.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace imago::billing {

namespace {
constexpr std::string_view kRefusalPrefix = "Monthly live spend cap reached";
}  // namespace

std::string_view cap_setter_name(CapSetter who) {
  return who == CapSetter::kOperator ? "operator" : "account";
}

std::optional<int64_t> LiveSpendCap::effective() const {
  if (account && operator_) return std::min(*account, *operator_);
  return account ? account : operator_;
}

MonthWindow utc_month(int64_t now_s) {
  using namespace std::chrono;
  const sys_days day = floor<days>(sys_seconds(seconds(now_s)));
  const year_month_day ymd(day);
  const year_month ym = ymd.year() / ymd.month();
  const sys_days first = sys_days(ym / 1);
  const sys_days next = sys_days((ym + months(1)) / 1);
  MonthWindow w;
  w.start_s = duration_cast<seconds>(first.time_since_epoch()).count();
  w.end_s = duration_cast<seconds>(next.time_since_epoch()).count();
  char label[16];
  std::snprintf(label, sizeof label, "%04d-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()));
  w.label = label;
  return w;
}

std::optional<int64_t> LiveSpend::remaining() const {
  auto c = cap.effective();
  if (!c) return std::nullopt;
  return std::max<int64_t>(0, *c - spent);
}

std::string live_usage_like_pattern() {
  std::string p;
  for (char c : kLiveUsageReasonPrefix) {
    if (c == '_' || c == '%' || c == '\\') p += '\\';
    p += c;
  }
  return p + "%";
}

bool counts_toward_live_cap(const LedgerOp& op) {
  return op.kind == LedgerKind::kCharge && op.reason.starts_with(kLiveUsageReasonPrefix);
}

Status check_live_spend_cap(const LiveSpendCap& cap, int64_t spent, int64_t amount) {
  auto c = cap.effective();
  if (!c || spent + amount <= *c) return Status::Ok();
  return Status::InsufficientFunds(
      std::string(kRefusalPrefix) + ": " + std::to_string(spent) + " of " + std::to_string(*c) +
      " credits spent on live sessions this month (UTC); the next minute costs " + std::to_string(amount));
}

bool is_spend_cap_refusal(const Status& st) {
  return st.code() == Code::kInsufficientFunds && st.message().starts_with(kRefusalPrefix);
}

Status validate_live_spend_cap(int64_t credits) {
  if (credits < 0 || credits > kMaxLiveSpendCap) {
    return Status::Invalid("Field 'live_monthly_credits' must be an integer from 0 to 1000000000, or null");
  }
  return Status::Ok();
}

}  // namespace imago::billing
