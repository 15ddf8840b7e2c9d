// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The MDS data path as the FSAL operations use it: the glue between Ganesha (op_ctx,
// fsal_status_t, fsal_io_arg, the sub-FSAL's handles) and the plain C++ parts in mds/
// (layout store, placement, proxy I/O, reaper) and fleet/.
//
//   export_data_path.cpp    build the export's store, cache, fleet, proxy and reaper; tear down
//   create_remove.cpp       placement at create / adoption, removal at the last unlink
//   proxy_io.cpp            read2/write2/commit2 and SETATTR(size) sent to the data files
//   status.cpp              fleet errors as FSAL statuses
//   map_in_namespace.cpp    Map_In_Namespace: the map on the namespace object, writer marks
//   namespace_marks.cpp     stale marks and write leases other MDSs of the namespace see
//   namespace_object.cpp    the object's extended attributes, as the MDS (internal)
//
// The namespace object on the sub-FSAL holds no bytes (size 0): a regular file's bytes
// live in its data files on the data servers, and GETATTR takes size and times from there
// (wcc::overlay_data_attrs).
#pragma once

#include "fleet/ds_types.hpp"
#include "ganesha/ganesha.hpp"
#include "model/config.hpp"
#include "model/data_files.hpp"
#include "store/layout_store.hpp"

#include <memory>

namespace flexfiles {
struct Export;
struct Handle;
} // namespace flexfiles

namespace flexfiles::mds {

// ---- export_data_path.cpp ----

// Opens the layout store (recovering creates a crash interrupted), makes the attribute
// cache, starts one data-server client per Data_Server block (MOUNT + health probes; an
// unreachable one is not an error: it stays Down and placement avoids it), waits a little
// for them to come Up, and starts the reaper. On error (logged, naming the export) nothing
// is left running.
fsal_status_t open_data_path(Export& exp, int export_id) noexcept;
// Stops the reaper and the data-server clients, closes the store. Idempotent.
void close_data_path(Export& exp) noexcept;
// Starts the client of a data server added at run time (dbus/), configured as
// open_data_path configures the others, and gives proxy I/O its Rsize/Wsize. Errors as
// fleet::Fleet::add (nothing is left running).
fleet::DsStatus start_data_server(Export& exp, const config::DataServer& ds) noexcept;

// ---- fsal_status.cpp ----

// The FSAL status for a data-server failure: NFS errors that mean something to a client
// (NOSPC, DQUOT, FBIG, ROFS) keep their meaning; fewer configured, undrained data servers
// than Mirrors is NOSPC (no room to place the mirrors), enough of them but fewer Up is
// DELAY (transient: they come back); everything else (timeouts, unreachable data servers, I/O
// errors, stale data files) is IO. The minor code is the errno.
fsal_status_t to_fsal_status(const fleet::DsStatus& st) noexcept;

// ---- fsal_create_remove.cpp ----

// Places a regular file's data files and persists its map before returning (see
// placement_at_create.hpp for the steps). `name` is for log lines (may be null). On error
// nothing is left on the data servers (or what is left is queued for the reaper) and
// handle's map is unchanged.
fsal_status_t place_data_files(Export& exp, Handle& handle, const char* name) noexcept;

// The file's data files, placing them first if it has none (a file created before the
// export used FLEXFILES, or whose create a crash interrupted). Errors as place_data_files.
fsal_status_t ensure_data_files(Export& exp, Handle& handle,
                                std::shared_ptr<const DataFileMap>* out) noexcept;

// Whether the last link of the sub-FSAL object is gone (after an unlink or a rename over
// it): its attributes cannot be read any more (STALE) or say 0 links. Any other answer,
// including an error, says no: a data file is never removed on a doubt.
bool last_link_gone(Export& exp, fsal_obj_handle* sub) noexcept;

// The file's last link went: drop its map and queue its data files (one transaction), try
// removing them now; failures stay queued for the reaper. Forgets the file in the
// attribute cache. `handle` may be null (rename over a file MDCACHE does not hold).
void remove_data_files(Export& exp, const ObjectKey& key, std::uint64_t file_id, Handle* handle,
                       const char* name) noexcept;

// ---- map_in_namespace.cpp ----
// Whether the export keeps each file's map on its namespace object too (Map_In_Namespace).
bool map_in_namespace(const Export& exp) noexcept;
// The file's map: the store's; with Map_In_Namespace the namespace object's, which the
// store then takes (queueing data files of its own that the namespace's does not name),
// and a map only the store has is published first. An error when neither can be read.
StoreResult<std::optional<DataFileMap>> load_map(Export& exp, fsal_obj_handle* sub,
                                                 const ObjectKey& key) noexcept;
// The namespace FSAL's host handle of `sub` (what its create_handle takes), recorded with
// an RW-layout mark so that the next start can reach the object; empty on failure.
std::vector<std::uint8_t> host_handle_of(Export& exp, fsal_obj_handle* sub) noexcept;
// load_map where no client's handle exists (at start), through the object's host handle;
// the store's map when the export keeps no map in the namespace or `host` is empty. A file
// removed from the namespace has no map.
StoreResult<std::optional<DataFileMap>>
load_map_by_handle(Export& exp, const ObjectKey& key,
                   const std::vector<std::uint8_t>& host) noexcept;
// Records a file's changed map there: the store, and with Map_In_Namespace the object too
// (when `host` is known).
StoreStatus record_map_by_handle(Export& exp, const ObjectKey& key,
                                 const std::vector<std::uint8_t>& host,
                                 const DataFileMap& map) noexcept;
// Writes `map` as the namespace object's map (call after the store has it). With
// create_only, ERR_FSAL_EXIST says the object has one already (another MDS placed the file
// first). On other errors `error` says what failed.
fsal_status_t publish_map(Export& exp, fsal_obj_handle* sub, const DataFileMap& map,
                          bool create_only, std::string& error) noexcept;

// Marks the file as under an RW layout of this MDS (call before one goes out); false and
// `error` when the mark could not be written.
bool mark_namespace_writer(Export& exp, fsal_obj_handle* sub, std::string& error) noexcept;
// The marks of other MDSs of the namespace (each may have RW layouts out on the file), and
// their removal (after the fence that made those layouts useless).
std::vector<std::string> other_namespace_writers(Export& exp, fsal_obj_handle* sub) noexcept;
void clear_namespace_writers(Export& exp, fsal_obj_handle* sub,
                             const std::vector<std::string>& names) noexcept;

// ---- namespace_marks.cpp (model/namespace_marks.hpp) ----

// The mirrors of `map` the namespace object marks stale (none without Map_In_Namespace).
std::vector<std::uint32_t> namespace_stale_mirrors(Export& exp, fsal_obj_handle* sub,
                                                   const DataFileMap& map) noexcept;
// Marks `mirrors` stale on the namespace object too (call after this MDS's registry has
// them), recording the object's host handle in the store for the resilverer. false and
// `error` when it could not, or when no in-sync mirror would be left (another MDS marked
// the others meanwhile): then nothing of this call stays on the object.
bool publish_stale_marks(Export& exp, fsal_obj_handle* sub, const ObjectKey& key,
                         const DataFileMap& map, const std::vector<std::uint32_t>& mirrors,
                         std::string& error) noexcept;
// The same through the object's host handle (no client's handle at hand).
bool publish_stale_marks_by_handle(Export& exp, const std::vector<std::uint8_t>& host,
                                   const ObjectKey& key, const DataFileMap& map,
                                   const std::vector<std::uint32_t>& mirrors,
                                   std::string& error) noexcept;
// Takes the mirrors other MDSs marked stale on the namespace object into this MDS's
// registry (its layouts, reads and GETATTR then leave them out, its layouts naming them
// are recalled). Logged, never an error.
void adopt_namespace_stale_marks(Export& exp, Handle& handle, const DataFileMap& map) noexcept;
// Before this MDS writes a file's data files itself: its write lease on the file, renewed
// when less than WriteLeaseTimes::renew_below is left. ERR_FSAL_DELAY when it cannot be
// written (the write must wait).
fsal_status_t hold_write_lease(Export& exp, Handle& handle) noexcept;

// What other MDSs may be doing to a file (for the resilverer, through the host handle).
struct NamespaceWriters {
    bool reached = false;              // the object was read (else `error`)
    std::vector<std::string> rw_marks; // other MDSs' RW-layout marks
    std::size_t live_leases = 0;       // other MDSs' write leases still live
    std::string state;                 // the map and every other MDS's mark and lease
    std::string error;
};
NamespaceWriters namespace_writers_by_handle(Export& exp,
                                             const std::vector<std::uint8_t>& host) noexcept;
void clear_namespace_writers_by_handle(Export& exp, const std::vector<std::uint8_t>& host,
                                       const std::vector<std::string>& names) noexcept;
// The mirror is in sync again: its mark leaves the namespace object.
bool clear_stale_mark_by_handle(Export& exp, const std::vector<std::uint8_t>& host,
                                std::uint32_t mirror, std::string& error) noexcept;

// ---- fsal_proxy_io.cpp ----

// read2/write2/commit2 of a regular file, sent to its data files. They complete (call
// done_cb) before returning.
void proxy_read(Export& exp, Handle& handle, fsal_async_cb done_cb, fsal_io_arg* read_arg,
                void* caller_arg) noexcept;
void proxy_write(Export& exp, Handle& handle, fsal_async_cb done_cb, fsal_io_arg* write_arg,
                 void* caller_arg) noexcept;
fsal_status_t proxy_commit(Export& exp, Handle& handle, off_t offset, size_t len) noexcept;
// Truncates or extends every data file to `size` (placing them first for a file without).
fsal_status_t proxy_truncate(Export& exp, Handle& handle, std::uint64_t size) noexcept;

} // namespace flexfiles::mds
