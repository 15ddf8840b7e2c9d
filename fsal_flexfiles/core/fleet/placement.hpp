// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Choosing the data servers for a new file's mirrors. Pure function over a snapshot of the
// fleet, so the policy can be tested without servers.
//
// Policy: round-robin. The eligible data servers (health Up, not drained, distinct Ids) are
// ordered by Id; the placement takes `mirrors` consecutive ones starting at `cursor` modulo
// their number, wrapping around. The fleet advances the cursor by one per new file, so first
// mirrors rotate over all servers and every server carries the same share of mirrors over
// time. Least-loaded placement would need per-server load the fleet does not have (bytes or
// files per server); round-robin needs no state beyond the cursor and spreads new files
// evenly.
#pragma once

#include "fleet/ds_types.hpp"
#include "fleet/health.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace flexfiles::fleet {

struct PlacementCandidate {
    std::uint64_t id = 0;
    Health health = Health::suspect;
    bool drained = false;
};

// Ids of `mirrors` distinct eligible data servers, in mirror order. Errors:
// invalid_argument when mirrors == 0; too_few_servers when fewer are configured and
// undrained than mirrors; servers_unavailable when enough are, but fewer are Up (the
// message says how many are eligible out of how many).
DsResult<std::vector<std::uint64_t>> choose_mirrors(std::span<const PlacementCandidate> candidates,
                                                    unsigned mirrors, std::uint64_t cursor);

} // namespace flexfiles::fleet
