// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The layout store: where the MDS persists, per export, which data files hold each file's
// bytes, which of them are stale mirrors (stale_mirrors.hpp), and which data files still
// have to be removed from the data servers.
//
// Why an embedded SQLite database and not an xattr on the namespace object
//   * Ganesha 4.3's VFS does not implement the FSAL xattr operations (getxattrs/setxattrs),
//     so an xattr through the sub-FSAL is not available; writing one behind the sub-FSAL's
//     back (fsetxattr on its file descriptors) would tie FLEXFILES to VFS and to file
//     systems with user xattrs.
//   * The reaper needs a queue of pending removals that outlives the files they belonged
//     to; an xattr has no object to live on once the file is unlinked.
//   * Removing a file must drop its map and queue its data files in one atomic step, and a
//     create must be able to record what it is about to create before it does (so a crash
//     half-way leaves a record, never an orphan nobody knows of): both are transactions.
//   SQLite in WAL mode with synchronous=FULL makes every committed transaction durable
//   before the call returns (the WAL is fsynced at commit), and a crash at any point leaves
//   the last committed state. locking_mode=EXCLUSIVE keeps a second process (or a second
//   export configured with the same Layout_Store) from opening it at the same time.
//
// Keys. A file is keyed by the sub-FSAL's handle key (handle_to_key bytes): unique per
// object and stable across restarts, the same identity MDCACHE uses. Its fileid is stored
// too (data-file names are derived from it; operators search by it).
//
// The export's identity. Each store holds one random 64-bit number (never 0), drawn from
// getrandom(2) in the transaction that first opens it (a new store, or one made before
// identities, schema version 1 or 2) and never changed afterwards: a damaged one makes
// open() fail rather than be replaced. New data files carry it in their names
// (model/naming.hpp), so exports (of one MDS or of several) that share a data-server export
// never make the same name, and the reaper can tell its own data files from others'. The
// store records every data file's name as it was made (data_files, create_intents,
// pending_removals), so files placed before identities keep their old-form names: nothing
// is renamed. Copying a store to a second MDS copies its identity too: don't.
//
// Thread safety: one connection guarded by a mutex; every call is one short transaction.
// No call does network I/O. Errors are values (StoreStatus), never exceptions.
#pragma once

#include "model/data_files.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace flexfiles::mds {

// The sub-FSAL's handle key of a namespace object.
using ObjectKey = std::vector<std::uint8_t>;

struct StoreStatus {
    std::string error; // empty: success; otherwise names the store, the operation and why

    bool ok() const { return error.empty(); }
};

template <class T> struct StoreResult {
    StoreStatus status;
    T value{};

    bool ok() const { return status.ok(); }
};

// A data file the MDS still has to remove from its data server.
struct PendingRemoval {
    std::int64_t id = 0; // row id in the queue (0 until queued)
    std::uint64_t ds_id = 0;
    std::string name;                 // in the data server's export root
    std::vector<std::uint8_t> fh;     // its filehandle; empty when unknown (interrupted create)
    std::uint64_t file_id = 0;        // the MDS file it belonged to
    std::uint32_t attempts = 0;       // failed attempts so far
    std::int64_t next_attempt_ms = 0; // wall clock (ms since the epoch): due from then on
    std::int64_t queued_ms = 0;
    std::string last_error;

    bool operator==(const PendingRemoval&) const = default;
};

// A data file a create is about to make (recorded before it is made).
struct PlannedDataFile {
    std::uint64_t ds_id = 0;
    std::string name;
};

// A mirror that missed a write the other mirrors took (see store/stale_mirrors.hpp): its
// bytes may differ from the file's until it is resilvered.
struct StaleMirror {
    ObjectKey key;
    std::uint64_t file_id = 0;
    std::uint32_t mirror = 0;
    std::int64_t since_ms = 0; // wall clock of the first missed write
    std::string reason;        // what failed, as logged then

    bool operator==(const StaleMirror&) const = default;
};

// A file some client may hold an RW layout on (recorded before the layout goes out).
struct RwGrantMark {
    ObjectKey key;
    std::uint64_t file_id = 0;
    // The namespace FSAL's host handle of the file (what its create_handle takes), where
    // the export needs one to reach the object without a client's handle: at start, on a
    // namespace several MDSs share (its map is on the object). Empty otherwise.
    std::vector<std::uint8_t> handle;

    bool operator==(const RwGrantMark&) const = default;
};

// What the store holds on one data server (for the admin interface).
struct DataServerUsage {
    std::uint64_t data_files = 0;       // in files' maps
    std::uint64_t stale_data_files = 0; // of which stale mirrors waiting to be resilvered
    std::uint64_t creates_pending = 0;  // recorded by creates still in progress
    std::uint64_t removals_pending = 0; // queued for the reaper

    std::uint64_t total() const { return data_files + creates_pending + removals_pending; }
};

// What remove_file() did.
struct RemovedFile {
    std::optional<DataFileMap> map;     // the file's map, if it had one
    std::vector<PendingRemoval> queued; // its data files, now in the removal queue
};

// Milliseconds since the epoch (the queue's time base: it survives restarts).
std::int64_t wall_clock_ms();

// The removal of data file `df` of MDS file `file_id`, due now, queued because of `why`.
PendingRemoval removal_of(const DataFile& df, std::uint64_t file_id, std::string why);

class LayoutStore {
public:
    // Opens (creating it and its parent folders if needed) the store at `path`. Fails when
    // the file is not a store of this format, is locked by another process, or cannot be
    // created.
    static StoreResult<std::unique_ptr<LayoutStore>> open(const std::string& path);

    ~LayoutStore();
    LayoutStore(const LayoutStore&) = delete;
    LayoutStore& operator=(const LayoutStore&) = delete;

    const std::string& path() const { return path_; }
    // The export's identity (see above); fixed once open() succeeded.
    std::uint64_t identity() const { return identity_; }

    // ---- Maps ----
    // The file's map, or std::nullopt when it has none.
    StoreResult<std::optional<DataFileMap>> get(const ObjectKey& key);
    // Sets the file's map (replacing any) and drops its create intents, atomically; with
    // mark_rw, also marks the file as under an RW layout (with `rw_handle`: see RwGrantMark)
    // and drops the marks of `drop_rw`, in the same transaction (a create, whose RW layout
    // follows at once: see update_rw_grants).
    StoreStatus put(const ObjectKey& key, const DataFileMap& map, bool mark_rw = false,
                    const std::vector<ObjectKey>& drop_rw = {},
                    const std::vector<std::uint8_t>& rw_handle = {});
    // Drops the file's map and queues its data files for removal (due now), atomically.
    StoreResult<RemovedFile> remove_file(const ObjectKey& key);
    StoreResult<std::uint64_t> file_count();
    // Every file's fileid (the admin interface flushes the attribute cache with it).
    StoreResult<std::vector<std::uint64_t>> file_ids();
    // Per data-server Id, everything the store holds on it; a data server holding nothing
    // is absent.
    StoreResult<std::map<std::uint64_t, DataServerUsage>> usage_by_data_server();

    // ---- Stale mirrors ----
    // Marks mirrors of the file (which must have them) stale, all or none; a mirror
    // already stale keeps its first mark.
    StoreStatus mark_stale(const ObjectKey& key, std::uint64_t file_id,
                           const std::vector<std::uint32_t>& mirrors, const std::string& reason);
    // The mirror is in sync again (nothing to do if it was not marked).
    StoreStatus clear_stale(const ObjectKey& key, std::uint32_t mirror);
    // Every mark, oldest first. remove_file() drops a file's marks with its map.
    StoreResult<std::vector<StaleMirror>> stale_mirrors();
    // On a namespace several MDSs share: the namespace FSAL's host handle of a file with a
    // stale mirror, so that the resilverer reaches the file's namespace object (the marks
    // other MDSs see, their writers). remove_file() drops it with the map. Empty: none.
    StoreStatus record_host_handle(const ObjectKey& key, const std::vector<std::uint8_t>& handle);
    StoreResult<std::vector<std::uint8_t>> host_handle(const ObjectKey& key);

    // ---- Files under RW layouts ----
    // Layouts live in the MDS's memory; these marks outlive it, so that the next instance
    // (a restart, or the standby of a failover pair) can fence what the last one granted.
    // Drops `drop`, then adds `add` (an existing mark is kept), in one transaction.
    StoreStatus update_rw_grants(const std::vector<RwGrantMark>& add,
                                 const std::vector<ObjectKey>& drop);
    StoreResult<std::vector<RwGrantMark>> rw_grants();

    // ---- Creates in progress ----
    // Before a create makes data files on the data servers: what it is about to make.
    StoreStatus record_create_intent(const ObjectKey& key, std::uint64_t file_id,
                                     const std::vector<PlannedDataFile>& planned);
    // A create that failed: drops its intents and queues the data files it made but could
    // not remove itself (`leftovers`), atomically.
    StoreStatus abandon_create(const ObjectKey& key, const std::vector<PendingRemoval>& leftovers);
    // At start: intents left by a crash become pending removals (filehandle unknown), since
    // their create never reached put(). Returns how many.
    StoreResult<std::uint64_t> recover_interrupted_creates();

    // ---- The removal queue ----
    // Queues removals (ids are assigned; returned in order).
    StoreResult<std::vector<PendingRemoval>> queue_removals(std::vector<PendingRemoval> removals);
    // Due at now_ms (next_attempt_ms <= now_ms), or on one of `ds_ids` whatever their time,
    // oldest first, at most `limit`.
    StoreResult<std::vector<PendingRemoval>>
    due_removals(std::int64_t now_ms, std::size_t limit,
                 const std::vector<std::uint64_t>& ds_ids = {});
    StoreResult<std::vector<PendingRemoval>> all_removals();
    StoreResult<bool> removal_exists(std::int64_t id);
    StoreStatus removal_done(std::int64_t id);
    // Several at once (one transaction).
    StoreStatus removals_done(const std::vector<std::int64_t>& ids);
    StoreStatus removal_failed(std::int64_t id, std::uint32_t attempts,
                               std::int64_t next_attempt_ms, const std::string& error);
    // Drops queued removals of `name` on `ds_id` (a new data file is about to take the
    // name). Returns how many were dropped.
    StoreResult<std::uint64_t> cancel_removals(std::uint64_t ds_id, const std::string& name);
    StoreResult<std::uint64_t> pending_removal_count();

private:
    LayoutStore(std::string path, sqlite3* db);

    class Txn;
    StoreResult<std::optional<DataFileMap>> get_locked(const ObjectKey& key);
    StoreStatus exec(const char* sql, const char* what);
    StoreStatus fail(const char* what) const;
    std::string why() const;
    StoreStatus queue_locked(std::vector<PendingRemoval>& removals);
    // Inside a transaction: drops `drop`, then adds `add`.
    StoreStatus write_rw_grants_locked(const std::vector<RwGrantMark>& add,
                                       const std::vector<ObjectKey>& drop);
    StoreStatus load_or_create_identity();

    const std::string path_;
    std::mutex mu_;
    sqlite3* db_ = nullptr;
    std::uint64_t identity_ = 0;
};

} // namespace flexfiles::mds
