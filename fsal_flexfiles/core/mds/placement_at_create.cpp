// SPDX-License-Identifier: LGPL-3.0-or-later
#include "mds/placement_at_create.hpp"

#include "model/naming.hpp"

#include <future>

namespace flexfiles::mds {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kNfs3ErrNoEnt = 2;
constexpr std::uint32_t kNfs3ErrExist = 17;

bool is_nfs(const fleet::DsStatus& st, std::uint32_t code) {
    return st.code == fleet::DsErrc::nfs && st.nfs3 == code;
}

// A failed request that may nevertheless have run on the data server.
bool outcome_unknown(const fleet::DsStatus& st) {
    return st.code == fleet::DsErrc::timeout || st.code == fleet::DsErrc::disconnected;
}

// One mirror: CREATE GUARDED; on EXIST, REMOVE the leftover and CREATE once more when the
// store records it as ours (may_replace), otherwise fail: a collision, left alone.
struct CreateChain : std::enable_shared_from_this<CreateChain> {
    struct Result {
        fleet::DsStatus status;
        fleet::CreateResult created;
        bool replaced = false;
        bool collided = false;
    };

    std::shared_ptr<fleet::DataServer> ds;
    fleet::CreateArgs args;
    std::chrono::milliseconds timeout{};
    bool may_replace = false;
    bool replaced = false;
    bool collided = false;
    std::promise<Result> done;

    void finish(fleet::DsStatus st, fleet::CreateResult created = {}) {
        done.set_value(Result{std::move(st), std::move(created), replaced, collided});
    }

    void create() {
        auto self = shared_from_this();
        ds->create(args, fleet::deadline_in(timeout),
                   [self](fleet::DsResult<fleet::CreateResult> r) {
                       if (r.ok()) {
                           self->finish(fleet::DsStatus::success(), std::move(r.value));
                       } else if (is_nfs(r.status, kNfs3ErrExist) && !self->may_replace) {
                           self->collide(r.status);
                       } else if (is_nfs(r.status, kNfs3ErrExist) && !self->replaced) {
                           self->replace();
                       } else {
                           self->finish(std::move(r.status));
                       }
                   });
    }

    // The name exists and the store has no record of it: not ours to remove or reuse.
    void collide(const fleet::DsStatus& exist) {
        collided = true;
        finish(fleet::DsStatus{exist.code, exist.nfs3,
                               ds->label() + ": data file " + args.name +
                                   " already exists and this export's layout store has no "
                                   "record of making it: left alone (name collision)"});
    }

    void replace() {
        replaced = true;
        auto self = shared_from_this();
        ds->remove(args.name, fleet::deadline_in(timeout), [self](fleet::DsResult<fleet::Empty> r) {
            if (r.ok() || is_nfs(r.status, kNfs3ErrNoEnt))
                self->create();
            else
                self->finish(fleet::DsStatus{r.status.code, r.status.nfs3,
                                             "a leftover data file with the same name exists and "
                                             "could not be removed: " +
                                                 r.status.message});
        });
    }
};

PendingRemoval leftover(const PlacementPlan& plan, const DataFile& df, std::vector<std::uint8_t> fh,
                        const std::string& why) {
    PendingRemoval r;
    r.ds_id = df.ds_id;
    r.name = df.name;
    r.fh = std::move(fh);
    r.file_id = plan.file_id;
    r.next_attempt_ms = wall_clock_ms();
    r.last_error = why;
    return r;
}

} // namespace

std::uint32_t fencing_id_for(std::uint64_t file_id, std::uint32_t min, std::uint32_t max) {
    if (max < min)
        return min;
    const std::uint64_t span = std::uint64_t{max} - min + 1;
    return static_cast<std::uint32_t>(min + file_id % span);
}

std::vector<PlannedDataFile> PlacementPlan::planned() const {
    std::vector<PlannedDataFile> out;
    for (const DataFile& df : files)
        out.push_back({df.ds_id, df.name});
    return out;
}

std::vector<DataFileName> PlacementPlan::names() const {
    std::vector<DataFileName> out;
    for (const DataFile& df : files)
        out.emplace_back(df.ds_id, df.name);
    return out;
}

fleet::DsResult<PlacementPlan> plan_placement(fleet::Fleet& fleet, const PlacementSettings& s,
                                              std::uint64_t file_id, std::uint8_t fsal_id) {
    using R = fleet::DsResult<PlacementPlan>;
    auto chosen = fleet.place(s.mirrors);
    if (!chosen.ok())
        return R::failure(chosen.status);
    PlacementPlan plan;
    plan.file_id = file_id;
    plan.stripe_unit = s.stripe_unit;
    const std::uint32_t uid = fencing_id_for(file_id, s.fencing_uid_min, s.fencing_uid_max);
    const std::uint32_t gid = fencing_id_for(file_id, s.fencing_gid_min, s.fencing_gid_max);
    for (std::size_t m = 0; m < chosen.value.size(); ++m) {
        const auto& ds = chosen.value[m];
        DataFile df;
        df.mirror = static_cast<std::uint32_t>(m);
        df.ds_id = ds->id();
        df.deviceid = fleet::make_deviceid(ds->id(), fsal_id);
        df.name = fleet::data_file_name(s.identity, file_id, df.mirror);
        df.fencing_uid = uid;
        df.fencing_gid = gid;
        plan.files.push_back(std::move(df));
        plan.servers.push_back(ds);
    }
    return R::success(std::move(plan));
}

StoreResult<std::vector<bool>> take_over_leftovers(LayoutStore& store,
                                                   const std::vector<PlannedDataFile>& planned) {
    StoreResult<std::vector<bool>> out;
    for (const PlannedDataFile& p : planned) {
        auto cancelled = store.cancel_removals(p.ds_id, p.name);
        if (!cancelled.ok()) {
            out.status = cancelled.status;
            return out;
        }
        out.value.push_back(cancelled.value > 0);
    }
    return out;
}

PlacementResult create_data_files(const PlacementPlan& plan, const PlacementSettings& s) {
    PlacementResult out;
    const std::size_t n = plan.files.size();
    std::vector<std::future<CreateChain::Result>> pending;
    pending.reserve(n);
    for (std::size_t m = 0; m < n; ++m) {
        auto chain = std::make_shared<CreateChain>();
        chain->ds = plan.servers[m];
        chain->args.name = plan.files[m].name;
        chain->args.mode = fleet::CreateMode::guarded;
        chain->args.attrs.mode = s.mode;
        chain->args.attrs.uid = plan.files[m].fencing_uid;
        chain->args.attrs.gid = plan.files[m].fencing_gid;
        chain->timeout = s.timeout;
        chain->may_replace = m < plan.replaceable.size() && plan.replaceable[m];
        pending.push_back(chain->done.get_future());
        chain->create();
    }

    // Each chain is at most three RPCs (REMOVE, CREATE, and the fleet's own SETATTR when the
    // server did not take the owner), each completed by its deadline.
    const auto limit = fleet::Clock::now() + 4 * s.timeout + 2s;
    std::vector<CreateChain::Result> results(n);
    for (std::size_t m = 0; m < n; ++m) {
        if (pending[m].wait_until(limit) == std::future_status::ready)
            results[m] = pending[m].get();
        else
            results[m].status =
                fleet::DsStatus::error(fleet::DsErrc::timeout,
                                       plan.servers[m]->label() + ": CREATE " + plan.files[m].name +
                                           ": no answer from the data-server client");
        if (results[m].replaced)
            ++out.replaced_leftovers;
        if (results[m].collided)
            out.collisions.emplace_back(plan.files[m].ds_id, plan.files[m].name);
    }

    out.map.file_id = plan.file_id;
    out.map.stripe_unit = plan.stripe_unit;
    bool all_ok = true;
    for (std::size_t m = 0; m < n; ++m) {
        if (results[m].status.ok()) {
            DataFile df = plan.files[m];
            df.fh = results[m].created.fh;
            out.map.files.push_back(std::move(df));
            out.attrs.push_back(results[m].created.attrs);
        } else if (all_ok) {
            all_ok = false;
            out.status = results[m].status;
        }
    }
    if (all_ok)
        return out;

    // Undo: remove what was made; queue what cannot be removed now or may exist.
    const std::string why =
        "create of file " + std::to_string(plan.file_id) + " failed: " + out.status.message;
    std::vector<std::pair<std::size_t, std::future<fleet::DsResult<fleet::Empty>>>> undo;
    for (std::size_t m = 0; m < n; ++m) {
        if (results[m].status.ok())
            undo.emplace_back(
                m, plan.servers[m]->remove(plan.files[m].name, fleet::deadline_in(s.timeout)));
        else if (outcome_unknown(results[m].status))
            out.leftovers.push_back(leftover(plan, plan.files[m], {}, why));
    }
    const auto undo_limit = fleet::Clock::now() + s.timeout + 2s;
    for (auto& [m, f] : undo) {
        const bool answered = f.wait_until(undo_limit) == std::future_status::ready;
        const auto r = answered ? f.get() : fleet::DsResult<fleet::Empty>{};
        if (answered && (r.ok() || is_nfs(r.status, kNfs3ErrNoEnt)))
            continue;
        const auto& fh = results[m].created.fh;
        out.leftovers.push_back(leftover(
            plan, plan.files[m], fh.to_vector(),
            why + "; undo failed: " + (answered ? r.status.message : std::string("no answer"))));
    }
    out.map.files.clear();
    out.attrs.clear();
    return out;
}

} // namespace flexfiles::mds
