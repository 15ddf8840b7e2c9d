// SPDX-License-Identifier: LGPL-3.0-or-later
#include "fleet/placement.hpp"

#include <algorithm>
#include <string>

namespace flexfiles::fleet {

DsResult<std::vector<std::uint64_t>> choose_mirrors(std::span<const PlacementCandidate> candidates,
                                                    unsigned mirrors, std::uint64_t cursor) {
    using R = DsResult<std::vector<std::uint64_t>>;
    if (mirrors == 0)
        return R::failure(DsStatus::error(DsErrc::invalid_argument,
                                          "placement: a file needs at least one mirror"));
    std::vector<std::uint64_t> eligible;
    eligible.reserve(candidates.size());
    for (const auto& c : candidates)
        if (c.health == Health::up && !c.drained)
            eligible.push_back(c.id);
    std::sort(eligible.begin(), eligible.end());
    eligible.erase(std::unique(eligible.begin(), eligible.end()), eligible.end());
    if (eligible.size() < mirrors)
        return R::failure(
            DsStatus::error(DsErrc::too_few_servers, "placement: need " + std::to_string(mirrors) +
                                                         " data servers that are Up and not "
                                                         "drained, have " +
                                                         std::to_string(eligible.size()) + " of " +
                                                         std::to_string(candidates.size())));
    std::vector<std::uint64_t> out;
    out.reserve(mirrors);
    const std::size_t n = eligible.size();
    const std::size_t start = static_cast<std::size_t>(cursor % n);
    for (unsigned i = 0; i < mirrors; ++i)
        out.push_back(eligible[(start + i) % n]);
    return R::success(std::move(out));
}

} // namespace flexfiles::fleet
