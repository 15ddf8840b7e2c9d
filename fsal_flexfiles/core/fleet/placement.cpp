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
    std::vector<std::uint64_t> undrained;
    eligible.reserve(candidates.size());
    undrained.reserve(candidates.size());
    for (const auto& c : candidates) {
        if (c.drained)
            continue;
        undrained.push_back(c.id);
        if (c.health == Health::up)
            eligible.push_back(c.id);
    }
    const auto distinct = [](std::vector<std::uint64_t>& ids) {
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    };
    distinct(eligible);
    distinct(undrained);
    if (eligible.size() < mirrors) {
        // Only a configuration (or a drain) that cannot hold the mirrors is "no space"; data
        // servers that are merely not Up now come back, so that shortage is transient.
        const DsErrc code =
            undrained.size() < mirrors ? DsErrc::too_few_servers : DsErrc::servers_unavailable;
        return R::failure(DsStatus::error(
            code, "placement: need " + std::to_string(mirrors) +
                      " data servers that are Up and not drained, have " +
                      std::to_string(eligible.size()) + " of " + std::to_string(candidates.size()) +
                      (code == DsErrc::servers_unavailable
                           ? " (" + std::to_string(undrained.size()) +
                                 " configured and not drained: waiting for them)"
                           : "")));
    }
    std::vector<std::uint64_t> out;
    out.reserve(mirrors);
    const std::size_t n = eligible.size();
    const std::size_t start = static_cast<std::size_t>(cursor % n);
    for (unsigned i = 0; i < mirrors; ++i)
        out.push_back(eligible[(start + i) % n]);
    return R::success(std::move(out));
}

} // namespace flexfiles::fleet
