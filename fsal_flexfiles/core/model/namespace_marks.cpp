// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/namespace_marks.hpp"

#include <charconv>
#include <limits>

namespace flexfiles::mds {
namespace {

// A decimal number with no sign, no leading zero (but "0"), nothing else.
template <class T> std::optional<T> parse_decimal(std::string_view s) {
    if (s.empty() || s.size() > 19 || (s.size() > 1 && s.front() == '0'))
        return std::nullopt;
    for (char c : s)
        if (c < '0' || c > '9')
            return std::nullopt;
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

} // namespace

std::string stale_mark_name(std::uint32_t mirror) {
    return std::string(kStaleMarkPrefix) + std::to_string(mirror);
}

std::optional<std::uint32_t> stale_mark_mirror(std::string_view name) {
    if (!name.starts_with(kStaleMarkPrefix))
        return std::nullopt;
    return parse_decimal<std::uint32_t>(name.substr(kStaleMarkPrefix.size()));
}

std::string write_lease_value(std::int64_t until_ms) {
    return std::to_string(until_ms < 0 ? 0 : until_ms);
}

std::optional<std::int64_t> parse_write_lease(std::string_view value) {
    return parse_decimal<std::int64_t>(value);
}

bool write_lease_live(std::int64_t until_ms, std::int64_t now_ms, const WriteLeaseTimes& t) {
    return now_ms <= until_ms + t.skew.count();
}

bool write_lease_needs_renewal(std::int64_t until_ms, std::int64_t now_ms,
                               const WriteLeaseTimes& t) {
    return until_ms - now_ms < t.renew_below.count();
}

} // namespace flexfiles::mds
