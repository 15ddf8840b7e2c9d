// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The one place the pNFS operations reach into the export's data path (fleet, layout store,
// attribute cache) and a handle's data files: everything else in pnfs/ goes through these, so a
// change of the export/handle API touches this file only.
#pragma once

#include "model/data_files.hpp"
#include "store/layout_store.hpp"

#include <optional>
#include <string>
#include <vector>

namespace flexfiles {
struct Export;
struct Handle;
} // namespace flexfiles

namespace flexfiles::fleet {
class Fleet;
}
namespace flexfiles::mds {
class FenceRetrier;
}
namespace flexfiles::wcc {
class AttrCache;
}

namespace flexfiles::layout::mds_access {

// The export's data-server fleet; nullptr when it has none (yet).
fleet::Fleet* fleet(Export& exp) noexcept;

// The export's WCC attribute cache; nullptr when it has none.
wcc::AttrCache* cache(Export& exp) noexcept;

// The file's data files, or std::nullopt when it has none (not a regular file, created
// before the export had data servers, or its map could not be read: logged by the caller).
std::optional<mds::DataFileMap> data_files(Export& exp, Handle& handle) noexcept;
// On a namespace several MDSs serve (Map_In_Namespace; data_path/map_in_namespace.cpp):
// whether this export is on one, this MDS's writer mark (before an RW layout goes out), and
// the other MDSs' marks (their RW layouts, to fence on a conflicting open) and their removal.
bool shared_namespace(const Export& exp) noexcept;
bool mark_namespace_writer(Export& exp, Handle& handle, std::string& error) noexcept;
std::vector<std::string> other_namespace_writers(Export& exp, Handle& handle) noexcept;
void clear_namespace_writers(Export& exp, Handle& handle,
                             const std::vector<std::string>& marks) noexcept;

// A file's map and its change where no client's handle exists (the start-time fence), by
// the store key and the host handle its RW-layout mark recorded: the namespace object's with
// Map_In_Namespace, else the store's.
mds::StoreResult<std::optional<mds::DataFileMap>>
map_of_mark(Export& exp, const mds::RwGrantMark& mark) noexcept;
mds::StoreStatus record_map_of_mark(Export& exp, const mds::RwGrantMark& mark,
                                    const mds::DataFileMap& map) noexcept;
// The host handle an RW-layout mark records on a shared namespace (empty elsewhere).
std::vector<std::uint8_t> mark_handle(Export& exp, Handle& handle) noexcept;

// Removes other MDSs' RW-layout marks from the object the host handle names.
void clear_namespace_writers_by_handle(Export& exp, const std::vector<std::uint8_t>& host,
                                       const std::vector<std::string>& marks) noexcept;

// The same, read again where another MDS of the namespace may have changed it
// (Handle::current_data_files): before a layout is handed out or fenced.
std::optional<mds::DataFileMap> current_data_files(Export& exp, Handle& handle) noexcept;

// The file's stale mirrors, to leave out of a layout (store/stale_mirrors.hpp); for an RW
// layout this also tells the resilverer a client may now write the in-sync mirrors.
std::vector<std::uint32_t> mirrors_to_leave_out(Export& exp, std::uint64_t file_id,
                                                bool read_write) noexcept;

// Marks the file's mirror stale (a client reports that its write to it failed). false with
// `error` set when it was not marked: it is the last in-sync mirror, or the store failed.
// On a shared namespace the mark goes onto the namespace object too (other MDSs leave the
// mirror out); false when it cannot (the mark stays here).
// `reporter`: the client whose report it is (its own layouts are not recalled).
bool mark_mirror_stale(Export& exp, Handle& handle, std::uint32_t mirror, std::uint64_t reporter,
                       const std::string& reason, std::string& error) noexcept;

// The export's fence retries; nullptr when it has none (no data path).
mds::FenceRetrier* fence_retrier(Export& exp) noexcept;

// The file's stale mirrors now (ascending).
std::vector<std::uint32_t> stale_mirrors(Export& exp, std::uint64_t file_id) noexcept;

// Marks `mirrors` of the file stale at once (a fence failed on them); like
// mark_mirror_stale otherwise.
bool mark_mirrors_stale(Export& exp, Handle& handle, const std::vector<std::uint32_t>& mirrors,
                        std::uint64_t reporter, const std::string& reason,
                        std::string& error) noexcept;
// The same for a file known by its store key and map (no client's handle: at start, or
// the resilverer's fence), and on a shared namespace by its host handle (mark_handle).
bool mark_mirrors_stale(Export& exp, const mds::ObjectKey& key, const mds::DataFileMap& map,
                        const std::vector<std::uint32_t>& mirrors, std::uint64_t reporter,
                        const std::string& reason, std::string& error,
                        const std::vector<std::uint8_t>& host) noexcept;

// Replaces the file's map (in the layout store and wherever the handle keeps it), e.g.
// with new fencing ids. false with `error` set when it could not be persisted.
bool set_data_files(Export& exp, Handle& handle, const mds::DataFileMap& map,
                    std::string& error) noexcept;

} // namespace flexfiles::layout::mds_access
