// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What MDSs sharing one namespace (Map_In_Namespace) tell each other about a file through
// its namespace object (model/namespace_marks.hpp names the attributes; docs/scale-out.md
// has the model):
//
//   * Stale mirrors. A mirror this MDS marks stale is also marked on the object before the
//     mark counts (the client's write succeeds only then). Every MDS that loads the
//     object's marks (LAYOUTGET, fences, I/O through it) takes them into its own registry
//     (store/stale_mirrors.hpp), so its layouts, reads and GETATTR leave the mirror out and
//     its layouts naming it are recalled, exactly as for a mark of its own. Whichever MDS
//     resilvers the mirror removes the object's mark after clearing its own.
//   * Write leases. Before this MDS writes a file's data files itself (proxied I/O), it
//     holds a lease on the file (flexfiles.wr.<identity> = until when). A resilverer on
//     another MDS copies a mirror only when no other MDS's lease is live and none appeared
//     while it copied.
#include "model/namespace_marks.hpp"

#include "data_path/data_path.hpp"
#include "data_path/namespace_object.hpp"
#include "export.hpp"
#include "handle.hpp"
#include "model/map_text.hpp"
#include "model/naming.hpp"

#include <algorithm>
#include <cinttypes>

namespace flexfiles::mds {
namespace {

std::string my_identity(Export& exp) {
    return fleet::identity_hex(exp.store().identity());
}

bool stale_marked(Export& exp, fsal_obj_handle* sub, std::uint32_t mirror, std::string& error,
                  bool& failed) {
    std::string value;
    const Found found = get_xattr(exp, sub, stale_mark_name(mirror), value, error, 64);
    failed = failed || found == Found::error;
    return found == Found::yes;
}

} // namespace

std::vector<std::uint32_t> namespace_stale_mirrors(Export& exp, fsal_obj_handle* sub,
                                                   const DataFileMap& map) noexcept {
    std::vector<std::uint32_t> out;
    try {
        if (!map_in_namespace(exp) || map.files.size() < 2)
            return out; // a lone mirror is never marked
        std::string error;
        bool failed = false;
        for (const DataFile& df : map.files)
            if (stale_marked(exp, sub, df.mirror, error, failed))
                out.push_back(df.mirror);
        if (failed)
            LogWarn(COMPONENT_FSAL,
                    "%s: fileid %" PRIu64 ": %s: stale marks of other MDSs may be missed",
                    exp.label().c_str(), map.file_id, error.c_str());
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: %s", exp.label().c_str(), e.what());
    }
    return out;
}

bool publish_stale_marks(Export& exp, fsal_obj_handle* sub, const ObjectKey& key,
                         const DataFileMap& map, const std::vector<std::uint32_t>& mirrors,
                         std::string& error) noexcept {
    try {
        if (!map_in_namespace(exp) || mirrors.empty())
            return true;
        // The resilverer reaches the object through its host handle.
        const std::vector<std::uint8_t> host = host_handle_of(exp, sub);
        if (host.empty()) {
            error = "no host handle for the namespace object";
            return false;
        }
        if (StoreStatus st = exp.store().record_host_handle(key, host); !st.ok()) {
            error = st.error;
            return false;
        }
        const std::vector<std::uint32_t> before = namespace_stale_mirrors(exp, sub, map);
        std::vector<std::uint32_t> added;
        const std::string me = my_identity(exp);
        for (std::uint32_t m : mirrors) {
            if (std::find(before.begin(), before.end(), m) != before.end())
                continue;
            const fsal_status_t st = set_xattr(exp, sub, stale_mark_name(m), me, SETXATTR4_EITHER);
            if (FSAL_IS_ERROR(st)) {
                error = "marking mirror " + std::to_string(m) +
                        " stale on the namespace object: " + msg_fsal_err(st.major);
                for (std::uint32_t a : added)
                    (void)remove_xattr(exp, sub, stale_mark_name(a));
                return false;
            }
            added.push_back(m);
        }
        // Two MDSs marking different mirrors at once would leave none in sync: as on one
        // MDS, the last in-sync mirror is never marked (the write that missed fails).
        if (namespace_stale_mirrors(exp, sub, map).size() >= map.files.size()) {
            for (std::uint32_t a : added)
                (void)remove_xattr(exp, sub, stale_mark_name(a));
            error = "another MDS marked the file's other mirrors stale meanwhile: no in-sync "
                    "mirror would be left, nothing marked on the namespace object";
            return false;
        }
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

bool publish_stale_marks_by_handle(Export& exp, const std::vector<std::uint8_t>& host,
                                   const ObjectKey& key, const DataFileMap& map,
                                   const std::vector<std::uint32_t>& mirrors,
                                   std::string& error) noexcept {
    try {
        if (!map_in_namespace(exp) || mirrors.empty())
            return true;
        if (host.empty()) {
            error = "no host handle to reach the namespace object";
            return false;
        }
        bool published = false;
        const fsal_status_t st = with_object(exp, host, [&](fsal_obj_handle* sub) {
            published = publish_stale_marks(exp, sub, key, map, mirrors, error);
        });
        if (FSAL_IS_ERROR(st)) {
            error = std::string("finding the file in the namespace: ") + msg_fsal_err(st.major);
            return false;
        }
        return published;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

// The reason this MDS's registry gives a mark it took from the namespace object.
constexpr const char* kAdoptedReason = "marked stale on the namespace object by another MDS";

namespace {

// Marks this MDS took from the namespace object that are gone from it: the MDS that
// removed them resilvered the mirror, after making sure no other MDS (this one included:
// its write leases) wrote the file while it copied. Dropped here too, unless a write
// through this MDS is in flight.
void drop_resilvered_elsewhere(Export& exp, const DataFileMap& map,
                               const std::vector<std::uint32_t>& theirs,
                               const std::vector<std::uint32_t>& mine) {
    if (mine.empty())
        return;
    for (const StaleMirror& mark : exp.stale_mirrors().list()) {
        if (mark.file_id != map.file_id || mark.reason != kAdoptedReason ||
            std::find(theirs.begin(), theirs.end(), mark.mirror) != theirs.end())
            continue;
        const auto epoch = exp.stale_mirrors().quiet_epoch(map.file_id);
        if (!epoch)
            return;
        const auto cleared =
            exp.stale_mirrors().clear_if_quiet(mark.key, map.file_id, mark.mirror, *epoch);
        if (cleared.ok() && cleared.value)
            LogEvent(COMPONENT_FSAL,
                     "%s: fileid %" PRIu64 ": mirror %u was resilvered by another MDS: in sync "
                     "here too",
                     exp.label().c_str(), map.file_id, mark.mirror);
    }
}

} // namespace

void adopt_namespace_stale_marks(Export& exp, Handle& handle, const DataFileMap& map) noexcept {
    try {
        if (!map_in_namespace(exp) || map.files.size() < 2)
            return;
        const std::vector<std::uint32_t> theirs = namespace_stale_mirrors(exp, handle.sub, map);
        const std::vector<std::uint32_t> mine = exp.stale_mirrors().of(map.file_id);
        drop_resilvered_elsewhere(exp, map, theirs, mine);
        std::vector<std::uint32_t> fresh;
        for (std::uint32_t m : theirs)
            if (std::find(mine.begin(), mine.end(), m) == mine.end())
                fresh.push_back(m);
        if (fresh.empty())
            return;
        const std::vector<std::uint8_t> host = host_handle_of(exp, handle.sub);
        StoreStatus st = host.empty() ? StoreStatus{"no host handle for the namespace object"}
                                      : exp.store().record_host_handle(handle.key, host);
        if (st.ok())
            st = exp.stale_mirrors().mark(handle.key, map.file_id,
                                          static_cast<std::uint32_t>(map.files.size()), fresh,
                                          kAdoptedReason);
        if (!st.ok()) {
            LogWarn(COMPONENT_FSAL,
                    "%s: fileid %" PRIu64 ": %zu mirror(s) are stale on the namespace object "
                    "but could not be marked here: %s",
                    exp.label().c_str(), map.file_id, fresh.size(), st.error.c_str());
            return;
        }
        LogEvent(COMPONENT_FSAL,
                 "%s: fileid %" PRIu64 ": %zu mirror(s) another MDS marked stale are left out "
                 "here too until resilvered",
                 exp.label().c_str(), map.file_id, fresh.size());
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: %s", exp.label().c_str(), e.what());
    }
}

fsal_status_t hold_write_lease(Export& exp, Handle& handle) noexcept {
    try {
        if (!map_in_namespace(exp))
            return fsalstat(ERR_FSAL_NO_ERROR, 0);
        const WriteLeaseTimes times;
        const std::int64_t now = wall_clock_ms();
        if (!write_lease_needs_renewal(handle.write_lease_until_ms.load(std::memory_order_acquire),
                                       now, times))
            return fsalstat(ERR_FSAL_NO_ERROR, 0);
        const std::int64_t until = now + times.length.count();
        const fsal_status_t st =
            set_xattr(exp, handle.sub, std::string(kWriteLeasePrefix) + my_identity(exp),
                      write_lease_value(until), SETXATTR4_EITHER);
        if (FSAL_IS_ERROR(st)) {
            LogWarn(COMPONENT_FSAL,
                    "%s: fileid %" PRIu64 ": cannot take the write lease on the namespace "
                    "object (%s): the write is refused for now",
                    exp.label().c_str(), handle.fileid, msg_fsal_err(st.major));
            return fsalstat(ERR_FSAL_DELAY, 0);
        }
        // Concurrent renewals may store an earlier end than the object's: only sooner renewal.
        handle.write_lease_until_ms.store(until, std::memory_order_release);
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: %s", exp.label().c_str(), e.what());
        return fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }
}

NamespaceWriters namespace_writers_by_handle(Export& exp,
                                             const std::vector<std::uint8_t>& host) noexcept {
    NamespaceWriters out;
    try {
        const std::string me = my_identity(exp);
        const WriteLeaseTimes times;
        const std::int64_t now = wall_clock_ms();
        const fsal_status_t st = with_object(exp, host, [&](fsal_obj_handle* sub) {
            std::vector<std::string> names;
            if (!list_xattrs(exp, sub, names, out.error))
                return;
            std::sort(names.begin(), names.end());
            std::string map_text;
            if (get_xattr(exp, sub, kMapXattrName, map_text, out.error, 32 * 1024) == Found::error)
                return;
            out.state = map_text;
            for (const std::string& name : names) {
                const bool rw = name.starts_with(kWriterMarkPrefix);
                const bool wr = name.starts_with(kWriteLeasePrefix);
                if ((!rw && !wr) || name.ends_with(me))
                    continue;
                std::string value;
                if (get_xattr(exp, sub, name, value, out.error, 64) == Found::error)
                    return;
                out.state += name + "=" + value + "\n";
                if (rw) {
                    out.rw_marks.push_back(name);
                } else {
                    const auto until = parse_write_lease(value);
                    // A value no MDS wrote is taken as live: never copy on a doubt.
                    if (!until || write_lease_live(*until, now, times))
                        out.live_leases++;
                }
            }
            out.reached = true;
        });
        if (FSAL_IS_ERROR(st))
            out.error = std::string("finding the file in the namespace: ") + msg_fsal_err(st.major);
    } catch (const std::exception& e) {
        out.reached = false;
        out.error = e.what();
    }
    return out;
}

void clear_namespace_writers_by_handle(Export& exp, const std::vector<std::uint8_t>& host,
                                       const std::vector<std::string>& names) noexcept {
    try {
        (void)with_object(exp, host,
                          [&](fsal_obj_handle* sub) { clear_namespace_writers(exp, sub, names); });
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: %s", exp.label().c_str(), e.what());
    }
}

bool clear_stale_mark_by_handle(Export& exp, const std::vector<std::uint8_t>& host,
                                std::uint32_t mirror, std::string& error) noexcept {
    try {
        fsal_status_t removed = fsalstat(ERR_FSAL_NO_ERROR, 0);
        const fsal_status_t st = with_object(exp, host, [&](fsal_obj_handle* sub) {
            removed = remove_xattr(exp, sub, stale_mark_name(mirror));
        });
        if (st.major == ERR_FSAL_STALE || st.major == ERR_FSAL_NOENT)
            return true; // the file is gone, and its marks with it
        const fsal_status_t failed = FSAL_IS_ERROR(st) ? st : removed;
        if (FSAL_IS_ERROR(failed)) {
            error = std::string("removing the stale mark from the namespace object: ") +
                    msg_fsal_err(failed.major);
            return false;
        }
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

} // namespace flexfiles::mds
