// SPDX-License-Identifier: LGPL-3.0-or-later
#include "fleet/fleet.hpp"

#include "fleet/placement.hpp"

#include <mutex>

namespace flexfiles::fleet {

Fleet::~Fleet() {
    std::map<std::uint64_t, std::shared_ptr<DataServer>> all;
    {
        std::unique_lock lk(mu_);
        all.swap(servers_);
    }
    for (auto& [id, ds] : all)
        ds->stop();
}

DsStatus Fleet::add(DataServerConfig config) {
    if (auto st = config.validate(); !st.ok())
        return st;
    {
        std::shared_lock lk(mu_);
        if (servers_.count(config.id) != 0)
            return DsStatus::error(DsErrc::exists, "fleet: data server " +
                                                       std::to_string(config.id) +
                                                       " is already configured");
    }
    auto started = DataServer::start(std::move(config));
    if (!started.ok())
        return started.status;
    std::shared_ptr<DataServer> ds = std::move(started.value);
    {
        std::unique_lock lk(mu_);
        auto [it, inserted] = servers_.emplace(ds->id(), ds);
        if (inserted)
            return DsStatus::success();
    }
    // Lost a race with another add() of the same Id.
    ds->stop();
    return DsStatus::error(DsErrc::exists, "fleet: data server " + std::to_string(ds->id()) +
                                               " is already configured");
}

DsStatus Fleet::remove(std::uint64_t id) {
    std::shared_ptr<DataServer> ds;
    {
        std::unique_lock lk(mu_);
        auto it = servers_.find(id);
        if (it == servers_.end())
            return DsStatus::error(DsErrc::not_found,
                                   "fleet: no data server " + std::to_string(id));
        ds = std::move(it->second);
        servers_.erase(it);
    }
    ds->stop();
    return DsStatus::success();
}

std::shared_ptr<DataServer> Fleet::find(std::uint64_t id) const {
    std::shared_lock lk(mu_);
    auto it = servers_.find(id);
    return it == servers_.end() ? nullptr : it->second;
}

std::shared_ptr<DataServer> Fleet::find(const DeviceId& deviceid) const {
    auto id = deviceid_ds_id(deviceid);
    if (!id)
        return nullptr;
    auto ds = find(*id);
    if (ds && ds->deviceid() != deviceid)
        return nullptr; // same Id, other fsal_id: not one of ours
    return ds;
}

std::vector<std::shared_ptr<DataServer>> Fleet::servers() const {
    std::shared_lock lk(mu_);
    std::vector<std::shared_ptr<DataServer>> out;
    out.reserve(servers_.size());
    for (const auto& [id, ds] : servers_)
        out.push_back(ds);
    return out;
}

std::size_t Fleet::size() const {
    std::shared_lock lk(mu_);
    return servers_.size();
}

DsStatus Fleet::set_drained(std::uint64_t id, bool drained) {
    auto ds = find(id);
    if (!ds)
        return DsStatus::error(DsErrc::not_found, "fleet: no data server " + std::to_string(id));
    ds->set_drained(drained);
    return DsStatus::success();
}

DsResult<std::vector<std::shared_ptr<DataServer>>> Fleet::place(unsigned mirrors) {
    using R = DsResult<std::vector<std::shared_ptr<DataServer>>>;
    auto all = servers();
    std::vector<PlacementCandidate> cands;
    cands.reserve(all.size());
    for (const auto& ds : all)
        cands.push_back({ds->id(), ds->health(), ds->drained()});
    auto chosen = choose_mirrors(cands, mirrors, cursor_.fetch_add(1, std::memory_order_relaxed));
    if (!chosen.ok())
        return R::failure(chosen.status);
    std::vector<std::shared_ptr<DataServer>> out;
    out.reserve(chosen.value.size());
    for (auto id : chosen.value)
        for (const auto& ds : all)
            if (ds->id() == id) {
                out.push_back(ds);
                break;
            }
    return R::success(std::move(out));
}

std::vector<DsSnapshot> Fleet::snapshot() const {
    std::vector<DsSnapshot> out;
    for (const auto& ds : servers()) {
        DsSnapshot s;
        s.id = ds->id();
        s.host = ds->config().host;
        s.export_path = ds->config().export_path;
        s.deviceid = ds->deviceid();
        s.health = ds->health();
        s.conn = ds->conn_state();
        s.drained = ds->drained();
        s.counters = ds->counters();
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace flexfiles::fleet
