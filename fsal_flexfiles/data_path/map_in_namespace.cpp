// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Map_In_Namespace: each file's data-file map is also the extended attribute
// "flexfiles.map" of its namespace object (model/map_text.hpp), written and read through
// the sub-FSAL's NFSv4.2 xattr operations, so that every MDS serving one namespace (a
// CephFS) finds the data files of a file another MDS placed. The namespace object's map is
// the truth; each MDS's layout store keeps a copy of the maps it used, so that its removal
// queue and RW-layout marks work as on a single MDS (docs/scale-out.md). Stale marks and
// write leases, which the other MDSs must see, are namespace_marks.cpp's.
//
// Who places a file: the MDS whose map reaches the namespace object first. A create
// publishes its map with XATTR_CREATE after its store has it; when another MDS published
// first (both placed the same new file at once), the loser takes the winner's map and
// queues its own data files for removal. A map in the store that never reached the
// namespace (a crash in between) is published when the file is next loaded.
//
// Writers. An MDS that hands out an RW layout on a file marks it "flexfiles.rw.<its
// identity>" first, so that another MDS on which a client opens the file for write finds
// that it must fence (new data-file owners) layouts it never granted. The fencer removes
// the marks it acted on; the marking MDS sets its mark again with its next RW layout.
//
// The MDS's own credentials (root) read and write the attribute, whoever the client is:
// the map is the MDS's, not the file owner's. Clients neither see nor change it (xattrs.cpp).
#include "data_path/data_path.hpp"
#include "data_path/namespace_object.hpp"
#include "export.hpp"
#include "model/map_text.hpp"
#include "model/namespace_marks.hpp"
#include "model/naming.hpp"

#include <algorithm>
#include <cinttypes>

namespace flexfiles::mds {
namespace {

// The largest map text the MDS reads (kMaxMapTextDataFiles lines of at most ~330 bytes).
constexpr std::size_t kMaxMapText = 32 * 1024;

struct NamespaceMap {
    Found found = Found::error;
    std::optional<DataFileMap> map;
    std::string error;
};

NamespaceMap read_namespace_map(Export& exp, fsal_obj_handle* sub) {
    std::string text, error;
    const Found found = get_xattr(exp, sub, kMapXattrName, text, error, kMaxMapText);
    if (found != Found::yes)
        return {found, std::nullopt,
                found == Found::error ? "its map on the namespace: " + error : std::string()};
    ParsedMapText parsed = parse_map_text(text);
    if (!parsed.map)
        return {Found::error, std::nullopt,
                "the map on the namespace object is not valid (" + parsed.error + ")"};
    return {Found::yes, std::move(parsed.map), {}};
}

// The store takes `theirs` (the namespace's) in place of `ours`; data files of ours that
// theirs does not name (a placement that lost the race) are queued for removal first.
StoreStatus adopt(Export& exp, const ObjectKey& key, const DataFileMap& theirs,
                  const std::optional<DataFileMap>& ours) {
    if (ours) {
        std::vector<PendingRemoval> orphans;
        for (const DataFile& mine : ours->files) {
            const bool kept =
                std::any_of(theirs.files.begin(), theirs.files.end(), [&](const DataFile& t) {
                    return t.ds_id == mine.ds_id && t.name == mine.name;
                });
            if (!kept)
                orphans.push_back(
                    removal_of(mine, ours->file_id, "another MDS placed the file first"));
        }
        if (!orphans.empty()) {
            auto queued = exp.store().queue_removals(std::move(orphans));
            if (!queued.ok())
                return queued.status;
            LogEvent(COMPONENT_FSAL,
                     "%s: fileid %" PRIu64
                     ": another MDS of the namespace placed the file first; %zu data file(s) "
                     "of this MDS's placement queued for removal",
                     exp.label().c_str(), theirs.file_id, queued.value.size());
            exp.reaper().kick();
        }
    }
    return exp.store().put(key, theirs);
}

// This MDS's writer mark: its export's identity names it.
std::string writer_name(Export& exp) {
    return std::string(kWriterMarkPrefix) + fleet::identity_hex(exp.store().identity());
}

} // namespace

bool mark_namespace_writer(Export& exp, fsal_obj_handle* sub, std::string& error) noexcept {
    try {
        const std::string name = writer_name(exp);
        std::string value;
        const Found found = get_xattr(exp, sub, name, value, error, 8);
        if (found == Found::yes)
            return true; // marked already
        const fsal_status_t st = set_xattr(exp, sub, name, "1", SETXATTR4_EITHER);
        if (FSAL_IS_ERROR(st)) {
            error = std::string("marking the file as written through this MDS: ") +
                    msg_fsal_err(st.major);
            return false;
        }
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

std::vector<std::string> other_namespace_writers(Export& exp, fsal_obj_handle* sub) noexcept {
    std::vector<std::string> out;
    try {
        const std::string mine = writer_name(exp);
        std::vector<std::string> names;
        std::string error;
        if (!list_xattrs(exp, sub, names, error))
            LogWarn(COMPONENT_FSAL,
                    "%s: fileid %" PRIu64 ": %s: RW layouts of other MDSs cannot be found",
                    exp.label().c_str(), sub->fileid, error.c_str());
        for (std::string& name : names)
            if (name.starts_with(kWriterMarkPrefix) && name != mine)
                out.push_back(std::move(name));
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: %s", exp.label().c_str(), e.what());
    }
    return out;
}

void clear_namespace_writers(Export& exp, fsal_obj_handle* sub,
                             const std::vector<std::string>& names) noexcept {
    for (const std::string& name : names) {
        const fsal_status_t st = remove_xattr(exp, sub, name);
        if (FSAL_IS_ERROR(st))
            LogWarn(COMPONENT_FSAL, "%s: fileid %" PRIu64 ": cannot remove %s (%s)",
                    exp.label().c_str(), sub->fileid, name.c_str(), msg_fsal_err(st.major));
    }
}

std::vector<std::uint8_t> host_handle_of(Export& exp, fsal_obj_handle* sub) noexcept {
    try {
        std::vector<std::uint8_t> buf(NFS4_FHSIZE);
        gsh_buffdesc desc{buf.data(), buf.size()};
        fsal_status_t st = sub_call(
            &exp, [&] { return sub->obj_ops->handle_to_wire(sub, FSAL_DIGEST_NFSV4, &desc); });
        if (!FSAL_IS_ERROR(st))
            st = sub_call(&exp, [&] {
                return exp.sub_export->exp_ops.wire_to_host(exp.sub_export, FSAL_DIGEST_NFSV4,
                                                            &desc, 0);
            });
        if (FSAL_IS_ERROR(st) || desc.len > buf.size())
            return {};
        const auto* bytes = static_cast<const std::uint8_t*>(desc.addr);
        return std::vector<std::uint8_t>(bytes, bytes + desc.len);
    } catch (...) {
        return {};
    }
}

StoreResult<std::optional<DataFileMap>>
load_map_by_handle(Export& exp, const ObjectKey& key,
                   const std::vector<std::uint8_t>& host) noexcept {
    try {
        if (!map_in_namespace(exp) || host.empty())
            return exp.store().get(key);
        StoreResult<std::optional<DataFileMap>> out;
        const fsal_status_t st =
            with_object(exp, host, [&](fsal_obj_handle* sub) { out = load_map(exp, sub, key); });
        if (st.major == ERR_FSAL_STALE || st.major == ERR_FSAL_NOENT)
            return {}; // removed (through another MDS): no map
        if (FSAL_IS_ERROR(st))
            return {StoreStatus{std::string("finding the file in the namespace: ") +
                                msg_fsal_err(st.major)},
                    std::nullopt};
        return out;
    } catch (const std::exception& e) {
        return {StoreStatus{e.what()}, std::nullopt};
    }
}

StoreStatus record_map_by_handle(Export& exp, const ObjectKey& key,
                                 const std::vector<std::uint8_t>& host,
                                 const DataFileMap& map) noexcept {
    try {
        if (StoreStatus st = exp.store().put(key, map); !st.ok() || !map_in_namespace(exp))
            return st;
        if (host.empty()) {
            LogWarn(COMPONENT_FSAL,
                    "%s: fileid %" PRIu64 ": its mark recorded no handle to reach the "
                    "namespace object: the new owners are in this MDS's layout store only, "
                    "and the namespace's map (which every MDS follows) keeps the old ones",
                    exp.label().c_str(), map.file_id);
            return {};
        }
        std::string error;
        fsal_status_t published = fsalstat(ERR_FSAL_NO_ERROR, 0);
        const fsal_status_t st = with_object(exp, host, [&](fsal_obj_handle* sub) {
            published = publish_map(exp, sub, map, false, error);
        });
        if (FSAL_IS_ERROR(st))
            return {std::string("finding the file in the namespace: ") + msg_fsal_err(st.major)};
        if (FSAL_IS_ERROR(published))
            return {error};
        return {};
    } catch (const std::exception& e) {
        return {e.what()};
    }
}

bool map_in_namespace(const Export& exp) noexcept {
    return exp.settings.map_in_namespace;
}

fsal_status_t publish_map(Export& exp, fsal_obj_handle* sub, const DataFileMap& map,
                          bool create_only, std::string& error) noexcept {
    try {
        const fsal_status_t st = set_xattr(exp, sub, kMapXattrName, encode_map_text(map),
                                           create_only ? SETXATTR4_CREATE : SETXATTR4_EITHER);
        if (FSAL_IS_ERROR(st) && st.major != ERR_FSAL_EXIST)
            error = std::string("writing its map to the namespace: ") + msg_fsal_err(st.major);
        return st;
    } catch (const std::exception& e) {
        error = e.what();
        return fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }
}

StoreResult<std::optional<DataFileMap>> load_map(Export& exp, fsal_obj_handle* sub,
                                                 const ObjectKey& key) noexcept {
    try {
        if (!map_in_namespace(exp))
            return exp.store().get(key);
        for (int attempt = 0; attempt < 2; attempt++) {
            NamespaceMap ns = read_namespace_map(exp, sub);
            if (ns.found == Found::error)
                return {StoreStatus{ns.error}, std::nullopt};
            auto local = exp.store().get(key);
            if (!local.ok())
                return local;
            if (ns.found == Found::yes) {
                if (!local.value || *local.value != *ns.map)
                    if (StoreStatus st = adopt(exp, key, *ns.map, local.value); !st.ok())
                        return {st, std::nullopt};
                return {{}, std::move(ns.map)};
            }
            if (!local.value)
                return local; // no data files anywhere yet
            // The store has a map the namespace lacks: a crash came between the two
            // writes of a placement. Publish it, unless another MDS placed the file since.
            std::string error;
            const fsal_status_t st = publish_map(exp, sub, *local.value, true, error);
            if (st.major == ERR_FSAL_EXIST)
                continue; // another MDS's map arrived: take it
            if (FSAL_IS_ERROR(st))
                return {StoreStatus{error}, std::nullopt};
            LogEvent(COMPONENT_FSAL,
                     "%s: fileid %" PRIu64 ": its map was in the layout store only; now on the "
                     "namespace object too",
                     exp.label().c_str(), local.value->file_id);
            return local;
        }
        return {StoreStatus{"the map on the namespace object kept changing"}, std::nullopt};
    } catch (const std::exception& e) {
        return {StoreStatus{e.what()}, std::nullopt};
    }
}

} // namespace flexfiles::mds
