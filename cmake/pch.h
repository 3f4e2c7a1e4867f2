// Precompiled header: standard library and Boost.JSON, used nearly everywhere.
// Never put Boost.Asio/Beast here: only src/http and src/live may pay for them.
#pragma once
#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>
