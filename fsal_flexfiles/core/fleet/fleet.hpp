// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The set of data servers an MDS export uses: lookup by Id or deviceid, drain flags,
// placement of new files' mirrors, and a snapshot for admin tools.
//
// Thread-safe. The server map is guarded by a reader/writer lock that is never held across
// I/O or while a DataServer stops. DataServers are shared_ptrs: one removed from the fleet
// stays usable by whoever still holds it until they let go, but its requests then complete
// with DsErrc::shutdown.
#pragma once

#include "fleet/data_server.hpp"
#include "fleet/ds_types.hpp"
#include "fleet/health.hpp"
#include "model/deviceid.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <shared_mutex>
#include <vector>

namespace flexfiles::fleet {

struct DsSnapshot {
    std::uint64_t id = 0;
    std::string host;
    std::string export_path;
    DeviceId deviceid{};
    Health health = Health::suspect;
    ConnState conn = ConnState::connecting;
    bool drained = false;
    DsCounters counters;
};

class Fleet {
public:
    Fleet() = default;
    ~Fleet(); // stops every data server
    Fleet(const Fleet&) = delete;
    Fleet& operator=(const Fleet&) = delete;

    // Starts a client for the data server. Errors: invalid_argument (bad config), exists
    // (same Id already in the fleet).
    DsStatus add(DataServerConfig config);
    // Removes and stops it (pending requests complete with DsErrc::shutdown).
    DsStatus remove(std::uint64_t id);

    std::shared_ptr<DataServer> find(std::uint64_t id) const;
    std::shared_ptr<DataServer> find(const DeviceId& deviceid) const;
    // Ordered by Id.
    std::vector<std::shared_ptr<DataServer>> servers() const;
    std::size_t size() const;

    // A drained data server keeps serving existing files but gets no new mirrors.
    DsStatus set_drained(std::uint64_t id, bool drained);

    // Data servers for a new file's `mirrors` mirrors: distinct, Up, not drained, chosen
    // round-robin (see placement.hpp). Errors: invalid_argument, too_few_servers,
    // servers_unavailable.
    DsResult<std::vector<std::shared_ptr<DataServer>>> place(unsigned mirrors);

    std::vector<DsSnapshot> snapshot() const;

private:
    mutable std::shared_mutex mu_;
    std::map<std::uint64_t, std::shared_ptr<DataServer>> servers_;
    std::atomic<std::uint64_t> cursor_{0};
};

} // namespace flexfiles::fleet
