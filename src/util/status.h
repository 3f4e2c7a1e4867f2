// Status and Result: expected failures travel as values (LevelDB style); exceptions are reserved
// for the truly exceptional (out of memory, programming errors).
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace imago {

// Error categories map one-to-one onto HTTP statuses at the API edge.
enum class Code {
  kOk = 0,
  kInvalidArgument,    // 400 VALIDATION_ERROR
  kUnauthenticated,    // 401
  kInsufficientFunds,  // 402 INSUFFICIENT_BALANCE
  kForbidden,          // 403
  kNotFound,           // 404
  kConflict,           // 409
  kTooLarge,           // 413
  kQuotaExceeded,      // 403 STORAGE_QUOTA_EXCEEDED (the account keeps too many bytes)
  kUnsupportedMedia,   // 415
  kRateLimited,        // 429
  kUnavailable,        // 503 (busy, retry later)
  kInternal,           // 500
};

// [[nodiscard]]: an ignored Status or Result is a dropped error. Discard on purpose with (void).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status Invalid(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status Conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status InsufficientFunds(std::string m) { return {Code::kInsufficientFunds, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &std::get<T>(v_); }
  T* operator->() { return &std::get<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace imago
