// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fencing (RFC 8435 section 2.2, loosely coupled data servers): an open for write of a file
// while another client holds an RW layout of it, and an RW layout that ends without its
// holder returning it (on_layout_ended, below).
//
// Why: mirroring is done by the clients. Two clients writing the same range through their
// layouts can reach the mirrors in different orders and leave them with different bytes.
// So a new writer takes the data servers away from the writers before it.
//
// What happens, in file.cpp's open2 or reopen2 (an open upgrade), before the OPEN is
// answered:
//   1. Conflict: the opener asked for write access, and the export's grant registry shows
//      an RW layout of the file held by a client other than the opener.
//   2. Fence: every data file of the file gets a new synthetic owner, the next uid and gid
//      of the export's Fencing_Uids / Fencing_Gids ranges (NFSv3 SETATTR through the
//      fleet, all mirrors in parallel, bounded by kFenceTimeout). The new owner goes into
//      the file's map (layout store, then the handle), so every layout granted from now on
//      carries it; every layout granted before carries the old one and its data-server
//      WRITEs (and READs: data files are mode 0640) get NFS3ERR_ACCES. That holds for
//      READ layouts too: they carry the READ uid (never an owner, layout/authority.hpp)
//      with the data file's group, and the group changes with the owner, so an earlier
//      READ layout can no longer read (it could never write). The SETATTR sets the mode
//      0640 again as well (model/data_files.hpp).
//   3. Recall: CB_LAYOUTRECALL of every layout of the file (any iomode: all now carry a
//      stale owner) held by any client but the opener, with clora_changed set. Ganesha's
//      up-call must not run inside an FSAL operation and needs the file's state lock,
//      which OPEN may hold around open2: it is queued on Ganesha's general fridge
//      (up_async_layoutrecall).
//
// Fence first, recall after, and never wait for the returns. Waiting would hold the OPEN
// (and a worker thread, with the state lock the returns need) for a client round trip,
// up to a lease if the client does not answer; and a recall alone stops nothing: a client
// may keep writing until it answers. Fencing first means that when the OPEN returns, no
// earlier layout can write anything any more, whatever its holder does. The recall then
// tells the holders promptly, rather than through NFS3ERR_ACCES on their next I/O; a
// holder that writes meanwhile gets NFS3ERR_ACCES, reports it (LAYOUTERROR or
// LAYOUTRETURN, where it is recognised as a fenced layout, see layoutreturn.cpp) and asks
// for a new layout, which carries the new owner.
//
// A data file whose SETATTR fails gets the new owner in the map all the same (the map says
// what the data servers must enforce), its mirror is marked stale (the fenced client may
// have written it; the resilverer copies it back), unless it is the file's last in-sync
// mirror (layout/fence_plan.hpp), and the SETATTR is retried in the background with a
// backoff until it lands (mds/fence_retry.hpp). The owner change of the others stands.
//
// Layouts that end without being returned. Ganesha disposes of a layout its holder did not
// return with circumstance_revoke: a CB_LAYOUTRECALL not answered in time, the holder's
// lease expired (also when an administrator or the server forgets the client), the export
// is removed. Its holder may still reach the data servers, so an RW layout that still
// opens some data file (its owner is still the current one) is fenced as above before its
// grant leaves the registry, counted (layout.revoke_fencings) and logged at EVENT; the
// file's other layouts, all carrying the old owner, are recalled. A layout fenced already
// (recalled after a conflicting open, then revoked) is not fenced again.
//
// Layouts of the previous instance. Grants live in memory, so the files they were on are
// marked in the layout store before an RW layout goes out (layout/rw_grant_marks.hpp).
// When the data path opens (a restart, or the standby of a failover pair taking over),
// every marked file is fenced before any client is served: a client of the previous
// instance that keeps writing through its layout gets NFS3ERR_ACCES. After a clean stop
// Ganesha has revoked (and fenced) every layout and the marks are gone.
#include "export.hpp"
#include "fleet/fleet.hpp"
#include "handle.hpp"
#include "layout/fence_plan.hpp"
#include "mds/fence_retry.hpp"
#include "pnfs/context.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/mds_access.hpp"
#include "store/layout_store.hpp"

#include <chrono>
#include <functional>
#include <future>

namespace flexfiles::layout {

namespace {

constexpr std::chrono::milliseconds kFenceTimeout{2000};

// What the recall's completion needs.
struct RecallTask {
    gsh_export* export_ref = nullptr; // keeps the export and its up-call vector alive
    std::uint64_t file = 0;
    ExportLayouts* state = nullptr; // the export's: export_ref keeps it alive
};

void recall_issued(void* arg, int status) {
    std::unique_ptr<RecallTask> task(static_cast<RecallTask*>(arg));
    if (status == STATE_SUCCESS) {
        bump(task->state->counters.recalls_sent);
        LogDebug(COMPONENT_PNFS, "FLEXFILES file %" PRIu64 ": layouts recalled", task->file);
    } else if (status == STATE_NOT_FOUND) {
        // Returned (or revoked) between the fence and now.
        bump(task->state->counters.recalls_not_found);
    } else {
        bump(task->state->counters.recalls_failed);
        LogWarn(COMPONENT_PNFS,
                "FLEXFILES file %" PRIu64 ": CB_LAYOUTRECALL could not be sent (state status "
                "%d); the holders keep their layouts until they return them",
                task->file, status);
    }
    ff_layout_export_put(task->export_ref);
}

using SetattrFuture = std::future<fleet::DsResult<fleet::SetattrResult>>;

// One file's fence on its way: its map with the next owners, and one SETATTR per data file
// (not valid where the data server or the filehandle is unknown).
struct FenceInFlight {
    mds::DataFileMap next;
    std::vector<SetattrFuture> pending;
};

// Gives every data file of `map` the next synthetic owner and sends the SETATTRs (all
// mirrors in parallel), without waiting for them.
FenceInFlight send_fence(Export& exp, const mds::DataFileMap& map, fleet::Deadline deadline) {
    const config::ExportConfig& cfg = exp.settings;
    fleet::Fleet* fleet = mds_access::fleet(exp);
    FenceInFlight f{map, std::vector<SetattrFuture>(map.files.size())};
    for (std::size_t i = 0; i < f.next.files.size(); i++) {
        mds::DataFile& df = f.next.files[i];
        df.fencing_uid =
            next_fencing_id(df.fencing_uid, cfg.fencing_uids.min, cfg.fencing_uids.max);
        df.fencing_gid =
            next_fencing_id(df.fencing_gid, cfg.fencing_gids.min, cfg.fencing_gids.max);
        auto ds = fleet != nullptr ? fleet->find(df.ds_id) : nullptr;
        if (!ds || df.fh.empty())
            continue;
        fleet::SetAttrs attrs;
        attrs.uid = df.fencing_uid;
        attrs.gid = df.fencing_gid;
        attrs.mode = mds::kDataFileMode; // and heals a mode changed behind the MDS's back
        f.pending[i] = ds->setattr(df.fh, attrs, deadline);
    }
    return f;
}

struct FenceResult {
    unsigned changed = 0;      // data files fenced at once
    unsigned failed = 0;       // data files whose fence is retried in the background
    unsigned marked_stale = 0; // mirrors marked stale meanwhile
};

// Waits for a fence's SETATTRs and records the new owners with `record`, for the data
// files whose SETATTR failed too (the map says what the data servers must enforce; the
// retry makes them agree). A failed data file's mirror may still be written by the fenced
// clients: it is marked stale (layout/fence_plan.hpp says when not) and its fence is
// retried (mds/fence_retry.hpp).
using RecordMap = std::function<bool(const mds::DataFileMap& next, std::string& error)>;
FenceResult finish_fence(Export& exp, const mds::ObjectKey& key,
                         const std::vector<std::uint8_t>& host, FenceInFlight& f,
                         ExportLayouts& state, std::uint64_t reporter, const RecordMap& record) {
    mds::FenceRetrier* retrier = mds_access::fence_retrier(exp);
    const mds::DataFileMap& next = f.next;
    FenceResult out;
    std::vector<std::uint32_t> failed;
    std::string last_why;
    for (std::size_t i = 0; i < next.files.size(); i++) {
        const mds::DataFile& df = next.files[i];
        std::string why = "data server not in the fleet, or no filehandle";
        if (f.pending[i].valid()) {
            const auto r = f.pending[i].get();
            if (r.ok()) {
                out.changed++;
                bump(state.counters.fenced_data_files);
                continue;
            }
            why = r.status.message;
        }
        bump(state.counters.fence_failures);
        failed.push_back(df.mirror);
        last_why = why;
        LogWarn(COMPONENT_PNFS,
                "%s file %" PRIu64 ": could not fence %s (mirror %u) on data server %" PRIu64
                " (%s): retrying; until then its earlier layouts may still write it there",
                exp.label().c_str(), next.file_id, df.name.c_str(), df.mirror, df.ds_id,
                why.c_str());
        if (retrier != nullptr)
            retrier->queue(mds::PendingFence{next.file_id, df.mirror, df.ds_id, df.fh.to_vector(),
                                             df.name, df.fencing_uid, df.fencing_gid});
    }
    out.failed = static_cast<unsigned>(failed.size());

    std::string error;
    if (!record(next, error))
        LogCrit(COMPONENT_PNFS,
                "%s file %" PRIu64 ": fenced %u data file(s) but could not record their new "
                "owner (%s): new layouts carry the old one",
                exp.label().c_str(), next.file_id, out.changed, error.c_str());
    if (failed.empty())
        return out;

    const StalePlan plan =
        stale_after_failed_fence(failed, mds_access::stale_mirrors(exp, next.file_id),
                                 static_cast<std::uint32_t>(next.files.size()));
    if (!plan.mark.empty()) {
        const std::string reason = "fence failed: " + last_why;
        if (mds_access::mark_mirrors_stale(exp, key, next, plan.mark, reporter, reason, error,
                                           host)) {
            out.marked_stale = static_cast<unsigned>(plan.mark.size());
            bump(state.counters.fence_stale_marks, plan.mark.size());
            LogWarn(COMPONENT_PNFS,
                    "%s file %" PRIu64 ": %zu mirror(s) not fenced, marked stale until "
                    "resilvered (the fenced client may have written them)",
                    exp.label().c_str(), next.file_id, plan.mark.size());
        } else {
            LogCrit(COMPONENT_PNFS,
                    "%s file %" PRIu64 ": %zu mirror(s) not fenced and not marked stale (%s)",
                    exp.label().c_str(), next.file_id, plan.mark.size(), error.c_str());
        }
    }
    if (plan.kept_in_sync) {
        // Nothing to copy it back from: it keeps the file's only current bytes, and the
        // retry is what closes it to the fenced client.
        bump(state.counters.fence_failures_in_sync);
        LogCrit(COMPONENT_PNFS,
                "%s file %" PRIu64 ": mirror %u is the last in sync and could not be fenced: "
                "not marked stale; the fenced client may write it until the retry succeeds",
                exp.label().c_str(), next.file_id, *plan.kept_in_sync);
    }
    return out;
}

// Fences one file (send_fence, finish_fence) and records its new owners through the
// handle. Call with state.fence_mu held.
struct FencedFile {
    mds::DataFileMap next;
    unsigned changed = 0; // data files fenced at once
    // A mirror was marked stale, which recalled the file's layouts (but the reporter's)
    // already: the caller must not recall them a second time. Ganesha's layoutrecall()
    // walks its new recall without the state lock, and the LAYOUTRETURN answering the first
    // recall can free the second under it (FSAL_UP/fsal_up_top.c; it crashed the MDS in
    // HostileFencing.AFenceThatFailsOnAMirrorMarksItStaleAndIsRetried on a loaded machine).
    bool recalled = false;
};
FencedFile fence_file(Export& exp, Handle& handle, const mds::DataFileMap& map,
                      ExportLayouts& state, std::uint64_t reporter) {
    if (mds::FenceRetrier* retrier = mds_access::fence_retrier(exp))
        retrier->supersede(map.file_id); // an older retry must not land after this fence
    FenceInFlight f = send_fence(exp, map, fleet::deadline_in(kFenceTimeout));
    const FenceResult r =
        finish_fence(exp, handle.key, mds_access::mark_handle(exp, handle), f, state, reporter,
                     [&](const mds::DataFileMap& next, std::string& error) {
                         return mds_access::set_data_files(exp, handle, next, error);
                     });
    return {std::move(f.next), r.changed, r.marked_stale != 0};
}

void queue_recall(Export& exp, const mds::ObjectKey& key, std::uint64_t file, std::uint64_t opener,
                  ExportLayouts& state, bool rw_only = false) {
    if (exp.up_ops == nullptr || key.empty())
        return;
    auto task = std::make_unique<RecallTask>();
    task->export_ref = ff_layout_ctx_export_get();
    if (task->export_ref == nullptr)
        return;
    task->file = file;
    task->state = &state;
    RecallTask* raw = task.release();
    const int rc = ff_layout_async_recall(exp.up_ops, key.data(), key.size(), true, rw_only, opener,
                                          recall_issued, raw);
    if (rc != 0) {
        bump(state.counters.recalls_failed);
        LogWarn(COMPONENT_PNFS,
                "FLEXFILES file %" PRIu64 ": could not queue the layout recall (%d)", raw->file,
                rc);
        ff_layout_export_put(raw->export_ref);
        delete raw;
    }
}

void granted_segment(void* seg_data, layoutiomode4 io_mode, void* arg) {
    auto* out = static_cast<std::optional<GrantedLayout>*>(arg);
    const auto* grant = static_cast<const Grant*>(seg_data);
    if (grant == nullptr)
        return;
    if (!*out)
        out->emplace();
    if (io_mode == LAYOUTIOMODE4_RW)
        (*out)->read_write = true;
    // Segments come oldest first: the last one names the data files as the client holds
    // them now.
    (*out)->client = grant->client;
    (*out)->files = &grant->files;
}

} // namespace

void on_open(Export& exp, Handle& handle, state_t*, fsal_openflags_t openflags) noexcept {
    if ((openflags & FSAL_O_WRITE) == 0 || handle.type != REGULAR_FILE ||
        !export_grants_layouts(&exp))
        return;
    try {
        ExportLayouts& state = exp.layouts();
        const std::uint64_t file = file_id_of(handle);
        const std::uint64_t opener = caller_clientid();
        const std::vector<std::uint64_t> writers =
            state.grants.holders(file, opener, Iomode::ReadWrite);
        // On a shared namespace, RW layouts other MDSs granted: they cannot be recalled from
        // here, only fenced (their clients then come back to their MDS for new ones).
        const std::vector<std::string> elsewhere =
            mds_access::shared_namespace(exp) ? mds_access::other_namespace_writers(exp, handle)
                                              : std::vector<std::string>{};
        if (writers.empty() && elsewhere.empty())
            return;

        std::lock_guard fence_lock(state.fence_mu);
        const auto map = mds_access::current_data_files(exp, handle);
        if (!map || map->files.empty())
            return;
        bump(state.counters.fencings);
        auto [next, changed, recalled] = fence_file(exp, handle, *map, state, opener);
        LogEvent(COMPONENT_PNFS,
                 "%s file %" PRIu64 ": open for write by client %" PRIx64
                 " while %zu other client(s) hold RW layouts and %zu other MDS(s) may: %u of "
                 "%zu data file(s) fenced (owner now %u:%u)%s",
                 exp.label().c_str(), file, opener, writers.size(), elsewhere.size(), changed,
                 next.files.size(), next.files.front().fencing_uid, next.files.front().fencing_gid,
                 writers.empty() ? ""
                 : recalled      ? ", their layouts recalled with the stale mirror"
                                 : ", recalling their layouts");
        if (!elsewhere.empty())
            mds_access::clear_namespace_writers(exp, handle, elsewhere);
        if (!writers.empty() && !recalled)
            queue_recall(exp, handle.key, handle.fileid, opener, state);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "FLEXFILES file %" PRIu64 ": fencing failed: %s", handle.fileid,
                e.what());
    }
}

void on_layout_ended(Export& exp, Handle& handle, const Grant& grant, SegmentEnd end) noexcept {
    if (ended_by_holder(end) || grant.iomode != Iomode::ReadWrite)
        return;
    try {
        ExportLayouts& state = exp.layouts();
        std::lock_guard fence_lock(state.fence_mu);
        const auto map = mds_access::current_data_files(exp, handle);
        if (!map || map->files.empty())
            return;
        if (!layout_still_writes(grant.files, *map)) {
            LogDebug(COMPONENT_PNFS,
                     "%s file %" PRIu64 ": client %" PRIx64 "'s RW layout ended unreturned; "
                     "it was fenced already",
                     exp.label().c_str(), grant.file, grant.client);
            return;
        }
        bump(state.counters.revoke_fencings);
        auto [next, changed, recalled] = fence_file(exp, handle, *map, state, grant.client);
        const bool others = !state.grants.holders(grant.file, grant.client, std::nullopt).empty();
        LogEvent(COMPONENT_PNFS,
                 "%s file %" PRIu64 ": the RW layout of client %" PRIx64
                 " ended without being returned (%s): %u of %zu data file(s) fenced (owner now "
                 "%u:%u)%s",
                 exp.label().c_str(), grant.file, grant.client,
                 end == SegmentEnd::revoked ? "revoked" : "server shutdown", changed,
                 next.files.size(), next.files.front().fencing_uid, next.files.front().fencing_gid,
                 !others    ? ""
                 : recalled ? ", the other clients' layouts recalled with the stale mirror"
                            : ", recalling the other clients' layouts");
        // Every other layout of the file carries the old owner now.
        if (others && !recalled)
            queue_recall(exp, handle.key, handle.fileid, grant.client, state);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "FLEXFILES file %" PRIu64 ": fencing an ended layout failed: %s",
                grant.file, e.what());
    }
}

namespace {

// Recalls the layouts of `iomode` (any when nullopt) that clients but `except_client` hold
// on the file, saying `why` in the log; nothing when none is out.
void recall_held(Export& exp, const mds::ObjectKey& key, std::uint64_t file_id,
                 std::uint64_t except_client, std::optional<Iomode> iomode,
                 const char* why) noexcept {
    try {
        ExportLayouts& state = exp.layouts();
        if (state.grants.holders(file_id, except_client, iomode).empty())
            return;
        LogEvent(COMPONENT_PNFS, "%s file %" PRIu64 ": %s", exp.label().c_str(), file_id, why);
        queue_recall(exp, key, file_id, except_client, state, iomode == Iomode::ReadWrite);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "FLEXFILES file %" PRIu64 ": layout recall failed: %s", file_id,
                e.what());
    }
}

} // namespace

void recall_layouts(Export& exp, const mds::ObjectKey& key, std::uint64_t file_id,
                    std::uint64_t except_client) noexcept {
    recall_held(exp, key, file_id, except_client, std::nullopt,
                "a mirror went stale, recalling the file's layouts");
}

void recall_rw_layouts_for_resilver(Export& exp, const mds::ObjectKey& key,
                                    std::uint64_t file_id) noexcept {
    recall_held(exp, key, file_id, 0, Iomode::ReadWrite,
                "a stale mirror waits to be resilvered, recalling the file's RW layouts");
}

void fence_previous_rw_layouts(Export& exp) noexcept {
    try {
        mds::LayoutStore& store = exp.store();
        const auto marks = store.rw_grants();
        if (!marks.ok()) {
            LogCrit(COMPONENT_PNFS, "%s: %s: layouts of the previous instance are not fenced",
                    exp.label().c_str(), marks.status.error.c_str());
            return;
        }
        if (marks.value.empty())
            return;
        ExportLayouts& state = exp.layouts();
        std::size_t files = 0;
        FenceResult total;
        std::vector<mds::ObjectKey> done;
        // A batch of files at a time, every data file of the batch at once: a start after a
        // crash with many writers neither takes a fence timeout per file nor sends
        // thousands of SETATTRs at once.
        constexpr std::size_t kBatch = 64;
        for (std::size_t first = 0; first < marks.value.size(); first += kBatch) {
            const fleet::Deadline deadline = fleet::deadline_in(kFenceTimeout);
            std::vector<std::pair<const mds::RwGrantMark*, FenceInFlight>> fences;
            const std::size_t last = std::min(marks.value.size(), first + kBatch);
            for (std::size_t k = first; k < last; k++) {
                const mds::RwGrantMark& m = marks.value[k];
                done.push_back(m.key);
                // The namespace object's map where MDSs share one: another MDS may have
                // changed it since.
                const auto map = mds_access::map_of_mark(exp, m);
                if (!map.ok())
                    LogCrit(COMPONENT_PNFS, "%s: fileid %" PRIu64 ": %s: not fenced",
                            exp.label().c_str(), m.file_id, map.status.error.c_str());
                if (!map.ok() || !map.value || map.value->files.empty())
                    continue; // removed since: its data files are in the reaper's queue
                fences.emplace_back(&m, send_fence(exp, *map.value, deadline));
            }
            for (auto& [mark, fence] : fences) {
                // No client's handle exists yet (no client has been served): recorded through
                // the mark (the store, and the namespace object through its host handle).
                const RecordMap record = [&exp, mark = mark](const mds::DataFileMap& next,
                                                             std::string& error) {
                    const mds::StoreStatus st = mds_access::record_map_of_mark(exp, *mark, next);
                    error = st.error;
                    return st.ok();
                };
                const FenceResult r =
                    finish_fence(exp, mark->key, mark->handle, fence, state, 0, record);
                files++;
                total.changed += r.changed;
                total.failed += r.failed;
                total.marked_stale += r.marked_stale;
            }
        }
        if (auto st = store.update_rw_grants({}, done); !st.ok())
            LogWarn(COMPONENT_PNFS, "%s: %s: the marks stay, the next start fences again",
                    exp.label().c_str(), st.error.c_str());
        bump(state.counters.revoke_fencings, files);
        LogEvent(COMPONENT_PNFS,
                 "%s: %zu file(s) were under RW layouts of the previous instance: %u data "
                 "file(s) fenced (new owner), %u retried in the background (%u mirror(s) "
                 "marked stale meanwhile)",
                 exp.label().c_str(), files, total.changed, total.failed, total.marked_stale);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "%s: fencing the previous instance's layouts failed: %s",
                exp.label().c_str(), e.what());
    }
}

void fence_other_mds_layouts(Export& exp, const mds::ObjectKey& key,
                             const std::vector<std::uint8_t>& host,
                             const std::vector<std::string>& marks) noexcept {
    try {
        ExportLayouts& state = exp.layouts();
        std::lock_guard fence_lock(state.fence_mu);
        const auto map = mds_access::map_of_mark(exp, mds::RwGrantMark{key, 0, host});
        if (!map.ok() || !map.value || map.value->files.empty()) {
            LogWarn(COMPONENT_PNFS, "%s: a file to resilver: %s: other MDSs' layouts not fenced",
                    exp.label().c_str(),
                    map.ok() ? "it has no data files" : map.status.error.c_str());
            return;
        }
        const mds::DataFileMap& current = *map.value;
        if (mds::FenceRetrier* retrier = mds_access::fence_retrier(exp))
            retrier->supersede(current.file_id);
        FenceInFlight f = send_fence(exp, current, fleet::deadline_in(kFenceTimeout));
        const mds::RwGrantMark mark{key, current.file_id, host};
        const FenceResult r =
            finish_fence(exp, key, host, f, state, 0,
                         [&exp, &mark](const mds::DataFileMap& next, std::string& error) {
                             const mds::StoreStatus st =
                                 mds_access::record_map_of_mark(exp, mark, next);
                             error = st.error;
                             return st.ok();
                         });
        mds_access::clear_namespace_writers_by_handle(exp, host, marks);
        bump(state.counters.fencings);
        LogEvent(COMPONENT_PNFS,
                 "%s file %" PRIu64 ": fenced %u of %zu data file(s) before resilvering: %zu "
                 "other MDS(s) may have RW layouts out on it",
                 exp.label().c_str(), current.file_id, r.changed, current.files.size(),
                 marks.size());
        // This MDS's own layouts (READ ones: the resilverer waits for RW ones) carry the
        // old owner now too.
        recall_layouts(exp, key, current.file_id, 0);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "%s: fencing before a resilver failed: %s", exp.label().c_str(),
                e.what());
    }
}

std::optional<GrantedLayout> granted_layout(state_t* layout_state) noexcept {
    std::optional<GrantedLayout> out;
    try {
        ff_layout_state_segments(layout_state, granted_segment, &out);
    } catch (...) {
        return std::nullopt;
    }
    return out;
}

} // namespace flexfiles::layout
