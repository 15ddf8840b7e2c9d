// SPDX-License-Identifier: LGPL-3.0-or-later
#include "store/layout_store.hpp"

#include "model/naming.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sqlite3.h>
#include <sys/random.h>
#include <system_error>

namespace flexfiles::mds {
namespace {

// Bumped when the schema changes. A store of an older version this code knows is upgraded
// in place (every change so far only adds tables, which kSchema creates); any other
// version is refused, not guessed at.
//   1  files, data_files, create_intents, pending_removals
//   2  + stale_mirrors
//   3  + store_identity (the export's identity, model/naming.hpp; drawn at the upgrade)
//   4  + rw_grants (files an RW layout may be out on; fenced at the next start)
//   5  + rw_grant_handles (their namespace FSAL's host handles, where the export knows them)
//   6  + host_handles (files' host handles on a shared namespace, for the resilverer)
constexpr int kSchemaVersion = 6;
constexpr int kOldestUpgradable = 1;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS files (
    key BLOB PRIMARY KEY,
    file_id INTEGER NOT NULL,
    stripe_unit INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS files_by_file_id ON files(file_id);
CREATE TABLE IF NOT EXISTS data_files (
    key BLOB NOT NULL REFERENCES files(key) ON DELETE CASCADE,
    mirror INTEGER NOT NULL,
    ds_id INTEGER NOT NULL,
    deviceid BLOB NOT NULL,
    fh BLOB NOT NULL,
    name TEXT NOT NULL,
    fencing_uid INTEGER NOT NULL,
    fencing_gid INTEGER NOT NULL,
    PRIMARY KEY (key, mirror)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS create_intents (
    key BLOB NOT NULL,
    ds_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    file_id INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (key, ds_id, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending_removals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ds_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    fh BLOB NOT NULL,
    file_id INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_ms INTEGER NOT NULL,
    queued_ms INTEGER NOT NULL,
    last_error TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pending_removals_due ON pending_removals(next_attempt_ms);
CREATE INDEX IF NOT EXISTS pending_removals_name ON pending_removals(ds_id, name);
CREATE TABLE IF NOT EXISTS store_identity (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    value TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS stale_mirrors (
    key BLOB NOT NULL,
    mirror INTEGER NOT NULL,
    file_id INTEGER NOT NULL,
    since_ms INTEGER NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (key, mirror)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rw_grants (
    key BLOB PRIMARY KEY,
    file_id INTEGER NOT NULL,
    since_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rw_grant_handles (
    key BLOB PRIMARY KEY REFERENCES rw_grants(key) ON DELETE CASCADE,
    handle BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS host_handles (
    key BLOB PRIMARY KEY,
    handle BLOB NOT NULL
) WITHOUT ROWID;
)sql";

// SQLite integers are signed 64-bit: unsigned ids are stored bit for bit.
sqlite3_int64 to_db(std::uint64_t v) {
    sqlite3_int64 out;
    std::memcpy(&out, &v, sizeof(out));
    return out;
}
std::uint64_t from_db(sqlite3_int64 v) {
    std::uint64_t out;
    std::memcpy(&out, &v, sizeof(out));
    return out;
}

// One prepared statement, finalized whatever happens.
class Stmt {
public:
    Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
    ~Stmt() { sqlite3_finalize(stmt_); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    bool prepared() const { return rc_ == SQLITE_OK && stmt_ != nullptr; }

    Stmt& bind(int i, std::uint64_t v) {
        keep(sqlite3_bind_int64(stmt_, i, to_db(v)));
        return *this;
    }
    Stmt& bind_signed(int i, std::int64_t v) {
        keep(sqlite3_bind_int64(stmt_, i, v));
        return *this;
    }
    Stmt& bind(int i, const std::string& v) {
        keep(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
        return *this;
    }
    Stmt& bind(int i, const std::vector<std::uint8_t>& v) {
        // A zero-length blob, not NULL, for an empty vector.
        static const std::uint8_t kNothing = 0;
        keep(sqlite3_bind_blob(stmt_, i, v.empty() ? &kNothing : v.data(),
                               static_cast<int>(v.size()), SQLITE_TRANSIENT));
        return *this;
    }
    template <std::size_t N> Stmt& bind(int i, const std::array<std::uint8_t, N>& v) {
        keep(sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(N), SQLITE_TRANSIENT));
        return *this;
    }

    // SQLITE_ROW, SQLITE_DONE or an error code.
    int step() {
        if (rc_ != SQLITE_OK)
            return rc_;
        return sqlite3_step(stmt_);
    }
    // Runs a statement that returns no rows.
    bool run() { return step() == SQLITE_DONE; }

    std::uint64_t u64(int col) const { return from_db(sqlite3_column_int64(stmt_, col)); }
    std::int64_t i64(int col) const { return sqlite3_column_int64(stmt_, col); }
    std::string text(int col) const {
        const auto* p = sqlite3_column_text(stmt_, col);
        return p == nullptr
                   ? std::string()
                   : std::string(reinterpret_cast<const char*>(p),
                                 static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
    }
    std::vector<std::uint8_t> blob(int col) const {
        const auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt_, col));
        const auto n = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col));
        return p == nullptr ? std::vector<std::uint8_t>() : std::vector<std::uint8_t>(p, p + n);
    }

private:
    void keep(int rc) {
        if (rc_ == SQLITE_OK && rc != SQLITE_OK)
            rc_ = rc;
    }

    sqlite3_stmt* stmt_ = nullptr;
    int rc_ = SQLITE_OK;
};

PendingRemoval removal_from_row(const Stmt& s) {
    // Columns: id, ds_id, name, fh, file_id, attempts, next_attempt_ms, queued_ms, last_error
    PendingRemoval r;
    r.id = s.i64(0);
    r.ds_id = s.u64(1);
    r.name = s.text(2);
    r.fh = s.blob(3);
    r.file_id = s.u64(4);
    r.attempts = static_cast<std::uint32_t>(s.i64(5));
    r.next_attempt_ms = s.i64(6);
    r.queued_ms = s.i64(7);
    r.last_error = s.text(8);
    return r;
}

constexpr const char* kRemovalColumns =
    "id, ds_id, name, fh, file_id, attempts, next_attempt_ms, queued_ms, last_error";

} // namespace

std::int64_t wall_clock_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

PendingRemoval removal_of(const DataFile& df, std::uint64_t file_id, std::string why) {
    PendingRemoval r;
    r.ds_id = df.ds_id;
    r.name = df.name;
    r.fh = df.fh.to_vector();
    r.file_id = file_id;
    r.next_attempt_ms = wall_clock_ms();
    r.last_error = std::move(why);
    return r;
}

// BEGIN IMMEDIATE ... COMMIT, rolled back unless commit() succeeded.
class LayoutStore::Txn {
public:
    explicit Txn(LayoutStore& store) : store_(store) {
        began_ = sqlite3_exec(store.db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
    }
    ~Txn() {
        if (began_ && !committed_)
            sqlite3_exec(store_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    Txn(const Txn&) = delete;
    Txn& operator=(const Txn&) = delete;

    bool began() const { return began_; }
    bool commit() {
        committed_ = sqlite3_exec(store_.db_, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK;
        return committed_;
    }

private:
    LayoutStore& store_;
    bool began_ = false;
    bool committed_ = false;
};

StoreResult<std::unique_ptr<LayoutStore>> LayoutStore::open(const std::string& path) {
    StoreResult<std::unique_ptr<LayoutStore>> out;
    const std::string who = "layout store " + path + ": ";
    if (path.empty() || path.front() != '/') {
        out.status.error = who + "the path must be absolute";
        return out;
    }
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::filesystem::create_directories(parent, ec);
    if (ec) {
        out.status.error = who + "cannot create folder " + parent.string() + ": " + ec.message();
        return out;
    }

    sqlite3* db = nullptr;
    // NOMUTEX: this object's mutex serialises every use of the connection.
    const int rc =
        sqlite3_open_v2(path.c_str(), &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        out.status.error =
            who + "cannot open: " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return out;
    }
    std::unique_ptr<LayoutStore> store(new LayoutStore(path, db));

    // Not a database at all (or a corrupt one) fails at the first statement.
    for (const auto& [sql, what] : {
             std::pair{"PRAGMA locking_mode=EXCLUSIVE", "set locking_mode=EXCLUSIVE"},
             std::pair{"PRAGMA journal_mode=WAL", "set journal_mode=WAL"},
             std::pair{"PRAGMA synchronous=FULL", "set synchronous=FULL"},
             std::pair{"PRAGMA foreign_keys=ON", "enable foreign keys"},
         }) {
        if (auto st = store->exec(sql, what); !st.ok()) {
            out.status = st;
            return out;
        }
    }
    {
        // journal_mode answers with the mode it ended up in: anything but WAL means the
        // durability argument above does not hold.
        Stmt mode(db, "PRAGMA journal_mode");
        if (mode.step() != SQLITE_ROW || mode.text(0) != "wal") {
            out.status.error = who + "could not switch to WAL journal mode";
            return out;
        }
    }
    int version = 0;
    {
        Stmt v(db, "PRAGMA user_version");
        if (v.step() != SQLITE_ROW) {
            out.status = store->fail("read the schema version");
            return out;
        }
        version = static_cast<int>(v.i64(0));
    }
    if (version != 0 && (version < kOldestUpgradable || version > kSchemaVersion)) {
        out.status.error = who + "schema version " + std::to_string(version) +
                           " is not one this version supports (" +
                           std::to_string(kOldestUpgradable) + " to " +
                           std::to_string(kSchemaVersion) + ")";
        return out;
    }
    {
        // Also takes the exclusive lock (held until close): a second opener fails here.
        Txn txn(*store);
        if (!txn.began()) {
            out.status = store->fail("take the exclusive lock");
            return out;
        }
        if (auto st = store->exec(kSchema, "create the schema"); !st.ok()) {
            out.status = st;
            return out;
        }
        if (auto st = store->load_or_create_identity(); !st.ok()) {
            out.status = st;
            return out;
        }
        const std::string set_version = "PRAGMA user_version=" + std::to_string(kSchemaVersion);
        if (auto st = store->exec(set_version.c_str(), "set the schema version"); !st.ok()) {
            out.status = st;
            return out;
        }
        if (!txn.commit()) {
            out.status = store->fail("commit the schema");
            return out;
        }
    }
    out.value = std::move(store);
    return out;
}

// Inside open()'s transaction: the identity row, drawn now if the store has none yet.
StoreStatus LayoutStore::load_or_create_identity() {
    {
        Stmt s(db_, "SELECT value FROM store_identity WHERE one = 1");
        const int rc = s.step();
        if (rc == SQLITE_ROW) {
            const std::string text = s.text(0);
            const auto id = fleet::parse_identity_hex(text);
            if (!id || *id == 0)
                return StoreStatus{"layout store " + path_ + ": its export identity \"" + text +
                                   "\" is not 16 hex digits (or is zero): the store is damaged; "
                                   "refused (a new identity would disown its data files)"};
            identity_ = *id;
            return {};
        }
        if (rc != SQLITE_DONE)
            return fail("read the export identity");
    }
    std::uint64_t id = 0;
    while (id == 0) {
        const ssize_t n = getrandom(&id, sizeof(id), 0);
        if (n != static_cast<ssize_t>(sizeof(id)))
            return StoreStatus{"layout store " + path_ +
                               ": cannot draw an export identity: getrandom failed: " +
                               std::error_code(errno, std::generic_category()).message()};
    }
    Stmt ins(db_, "INSERT INTO store_identity (one, value, created_ms) VALUES (1, ?, ?)");
    if (!ins.bind(1, fleet::identity_hex(id)).bind_signed(2, wall_clock_ms()).run())
        return fail("record the export identity");
    identity_ = id;
    return {};
}

LayoutStore::LayoutStore(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {
    sqlite3_busy_timeout(db_, 2000);
}

LayoutStore::~LayoutStore() {
    sqlite3_close(db_);
}

// SQLite's message, and what a lock conflict most likely means.
std::string LayoutStore::why() const {
    std::string out = sqlite3_errmsg(db_);
    const int code = sqlite3_errcode(db_) & 0xff;
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
        out += " (is another ganesha.nfsd, or another export, using this Layout_Store?)";
    return out;
}

StoreStatus LayoutStore::fail(const char* what) const {
    return StoreStatus{"layout store " + path_ + ": cannot " + what + ": " + why()};
}

StoreStatus LayoutStore::exec(const char* sql, const char* what) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) == SQLITE_OK)
        return {};
    StoreStatus st{"layout store " + path_ + ": cannot " + what + ": " + why()};
    sqlite3_free(err);
    return st;
}

// ---------------------------------------------------------------------------------------
// Maps

StoreResult<std::optional<DataFileMap>> LayoutStore::get(const ObjectKey& key) {
    std::lock_guard lk(mu_);
    return get_locked(key);
}

StoreResult<std::optional<DataFileMap>> LayoutStore::get_locked(const ObjectKey& key) {
    StoreResult<std::optional<DataFileMap>> out;
    Stmt file(db_, "SELECT file_id, stripe_unit FROM files WHERE key = ?");
    file.bind(1, key);
    const int rc = file.step();
    if (rc == SQLITE_DONE)
        return out;
    if (rc != SQLITE_ROW) {
        out.status = fail("read a file's map");
        return out;
    }
    DataFileMap map;
    map.file_id = file.u64(0);
    map.stripe_unit = file.u64(1);

    Stmt rows(db_, "SELECT mirror, ds_id, deviceid, fh, name, fencing_uid, fencing_gid "
                   "FROM data_files WHERE key = ? ORDER BY mirror");
    rows.bind(1, key);
    int step;
    while ((step = rows.step()) == SQLITE_ROW) {
        DataFile df;
        df.mirror = static_cast<std::uint32_t>(rows.i64(0));
        df.ds_id = rows.u64(1);
        const auto dev = rows.blob(2);
        if (dev.size() != df.deviceid.size()) {
            out.status.error = "layout store " + path_ + ": file " + std::to_string(map.file_id) +
                               " mirror " + std::to_string(df.mirror) +
                               ": deviceid is not 16 bytes";
            return out;
        }
        std::memcpy(df.deviceid.data(), dev.data(), dev.size());
        const auto fh = rows.blob(3);
        if (fh.size() > nfs3::Fh::kMaxSize) {
            out.status.error = "layout store " + path_ + ": file " + std::to_string(map.file_id) +
                               " mirror " + std::to_string(df.mirror) + ": the filehandle has " +
                               std::to_string(fh.size()) + " bytes, NFSv3 allows 64";
            return out;
        }
        df.fh = fh;
        df.name = rows.text(4);
        df.fencing_uid = static_cast<std::uint32_t>(rows.i64(5));
        df.fencing_gid = static_cast<std::uint32_t>(rows.i64(6));
        map.files.push_back(std::move(df));
    }
    if (step != SQLITE_DONE) {
        out.status = fail("read a file's data files");
        return out;
    }
    out.value = std::move(map);
    return out;
}

StoreStatus LayoutStore::put(const ObjectKey& key, const DataFileMap& map, bool mark_rw,
                             const std::vector<ObjectKey>& drop_rw,
                             const std::vector<std::uint8_t>& rw_handle) {
    std::lock_guard lk(mu_);
    Txn txn(*this);
    if (!txn.began())
        return fail("begin a transaction");
    Stmt clear(db_, "DELETE FROM data_files WHERE key = ?");
    if (!clear.bind(1, key).run())
        return fail("replace a file's data files");
    Stmt file(db_, "INSERT OR REPLACE INTO files (key, file_id, stripe_unit, updated_ms) "
                   "VALUES (?, ?, ?, ?)");
    if (!file.bind(1, key)
             .bind(2, map.file_id)
             .bind(3, map.stripe_unit)
             .bind_signed(4, wall_clock_ms())
             .run())
        return fail("write a file's map");
    for (const DataFile& df : map.files) {
        Stmt row(db_, "INSERT INTO data_files (key, mirror, ds_id, deviceid, fh, name, "
                      "fencing_uid, fencing_gid) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        if (!row.bind(1, key)
                 .bind(2, std::uint64_t{df.mirror})
                 .bind(3, df.ds_id)
                 .bind(4, df.deviceid)
                 .bind(5, df.fh.to_vector())
                 .bind(6, df.name)
                 .bind(7, std::uint64_t{df.fencing_uid})
                 .bind(8, std::uint64_t{df.fencing_gid})
                 .run())
            return fail("write a data file");
    }
    Stmt intents(db_, "DELETE FROM create_intents WHERE key = ?");
    if (!intents.bind(1, key).run())
        return fail("drop a create's intents");
    if (mark_rw) {
        if (auto st = write_rw_grants_locked({RwGrantMark{key, map.file_id, rw_handle}}, drop_rw);
            !st.ok())
            return st;
    }
    if (!txn.commit())
        return fail("commit a file's map");
    return {};
}

StoreResult<RemovedFile> LayoutStore::remove_file(const ObjectKey& key) {
    std::lock_guard lk(mu_);
    StoreResult<RemovedFile> out;
    Txn txn(*this);
    if (!txn.began()) {
        out.status = fail("begin a transaction");
        return out;
    }
    StoreResult<std::optional<DataFileMap>> existing = get_locked(key);
    if (!existing.ok()) {
        out.status = existing.status;
        return out;
    }
    std::vector<PendingRemoval> queued;
    if (existing.value) {
        const std::int64_t now = wall_clock_ms();
        for (const DataFile& df : existing.value->files) {
            PendingRemoval r;
            r.ds_id = df.ds_id;
            r.name = df.name;
            r.fh = df.fh.to_vector();
            r.file_id = existing.value->file_id;
            r.next_attempt_ms = now;
            r.queued_ms = now;
            queued.push_back(std::move(r));
        }
    }
    // The map and its data-file rows (ON DELETE CASCADE) and stale marks go, the removals
    // come, together.
    Stmt file(db_, "DELETE FROM files WHERE key = ?");
    if (!file.bind(1, key).run()) {
        out.status = fail("delete a file's map");
        return out;
    }
    Stmt marks(db_, "DELETE FROM stale_mirrors WHERE key = ?");
    if (!marks.bind(1, key).run()) {
        out.status = fail("delete a file's stale-mirror marks");
        return out;
    }
    Stmt host(db_, "DELETE FROM host_handles WHERE key = ?");
    if (!host.bind(1, key).run()) {
        out.status = fail("delete a file's host handle");
        return out;
    }
    if (auto st = queue_locked(queued); !st.ok()) {
        out.status = st;
        return out;
    }
    if (!txn.commit()) {
        out.status = fail("commit a file's removal");
        return out;
    }
    out.value.map = std::move(existing.value);
    out.value.queued = std::move(queued);
    return out;
}

StoreResult<std::uint64_t> LayoutStore::file_count() {
    std::lock_guard lk(mu_);
    StoreResult<std::uint64_t> out;
    Stmt s(db_, "SELECT count(*) FROM files");
    if (s.step() != SQLITE_ROW)
        out.status = fail("count files");
    else
        out.value = s.u64(0);
    return out;
}

StoreResult<std::vector<std::uint64_t>> LayoutStore::file_ids() {
    std::lock_guard lk(mu_);
    StoreResult<std::vector<std::uint64_t>> out;
    Stmt s(db_, "SELECT DISTINCT file_id FROM files");
    int rc;
    while ((rc = s.step()) == SQLITE_ROW)
        out.value.push_back(s.u64(0));
    if (rc != SQLITE_DONE)
        out.status = fail("list file ids");
    return out;
}

StoreResult<std::map<std::uint64_t, DataServerUsage>> LayoutStore::usage_by_data_server() {
    std::lock_guard lk(mu_);
    StoreResult<std::map<std::uint64_t, DataServerUsage>> out;
    // One statement, so the three counts are of the same moment.
    Stmt s(db_, "SELECT ds_id, 0, count(*) FROM data_files GROUP BY ds_id "
                "UNION ALL SELECT ds_id, 1, count(*) FROM create_intents GROUP BY ds_id "
                "UNION ALL SELECT ds_id, 2, count(*) FROM pending_removals GROUP BY ds_id "
                "UNION ALL SELECT d.ds_id, 3, count(*) FROM stale_mirrors s JOIN data_files d "
                "ON d.key = s.key AND d.mirror = s.mirror GROUP BY d.ds_id");
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        DataServerUsage& u = out.value[s.u64(0)];
        const std::uint64_t n = s.u64(2);
        switch (s.i64(1)) {
        case 0:
            u.data_files = n;
            break;
        case 1:
            u.creates_pending = n;
            break;
        case 3:
            u.stale_data_files = n;
            break;
        default:
            u.removals_pending = n;
            break;
        }
    }
    if (rc != SQLITE_DONE)
        out.status = fail("count data files per data server");
    return out;
}

// ---------------------------------------------------------------------------------------
// Stale mirrors

StoreStatus LayoutStore::mark_stale(const ObjectKey& key, std::uint64_t file_id,
                                    const std::vector<std::uint32_t>& mirrors,
                                    const std::string& reason) {
    std::lock_guard lk(mu_);
    Txn txn(*this);
    if (!txn.began())
        return fail("begin a transaction");
    const std::int64_t now = wall_clock_ms();
    for (std::uint32_t mirror : mirrors) {
        Stmt exists(db_, "SELECT 1 FROM data_files WHERE key = ? AND mirror = ?");
        const int rc = exists.bind(1, key).bind(2, std::uint64_t{mirror}).step();
        if (rc == SQLITE_DONE)
            return StoreStatus{"layout store " + path_ + ": file " + std::to_string(file_id) +
                               " has no mirror " + std::to_string(mirror) + " to mark stale"};
        if (rc != SQLITE_ROW)
            return fail("look up a mirror");
        // A mirror already stale keeps its first mark: since_ms says how long it has been.
        Stmt mark(db_, "INSERT OR IGNORE INTO stale_mirrors (key, mirror, file_id, since_ms, "
                       "reason) VALUES (?, ?, ?, ?, ?)");
        if (!mark.bind(1, key)
                 .bind(2, std::uint64_t{mirror})
                 .bind(3, file_id)
                 .bind_signed(4, now)
                 .bind(5, reason)
                 .run())
            return fail("mark a mirror stale");
    }
    if (!txn.commit())
        return fail("commit stale-mirror marks");
    return {};
}

StoreStatus LayoutStore::clear_stale(const ObjectKey& key, std::uint32_t mirror) {
    std::lock_guard lk(mu_);
    Stmt clear(db_, "DELETE FROM stale_mirrors WHERE key = ? AND mirror = ?");
    if (!clear.bind(1, key).bind(2, std::uint64_t{mirror}).run())
        return fail("clear a stale-mirror mark");
    return {};
}

StoreStatus LayoutStore::record_host_handle(const ObjectKey& key,
                                            const std::vector<std::uint8_t>& handle) {
    std::lock_guard lk(mu_);
    Stmt s(db_, "INSERT OR REPLACE INTO host_handles (key, handle) VALUES (?, ?)");
    if (!s.bind(1, key).bind(2, handle).run())
        return fail("record a file's host handle");
    return {};
}

StoreResult<std::vector<std::uint8_t>> LayoutStore::host_handle(const ObjectKey& key) {
    std::lock_guard lk(mu_);
    StoreResult<std::vector<std::uint8_t>> out;
    Stmt s(db_, "SELECT handle FROM host_handles WHERE key = ?");
    const int rc = s.bind(1, key).step();
    if (rc == SQLITE_ROW)
        out.value = s.blob(0);
    else if (rc != SQLITE_DONE)
        out.status = fail("look up a file's host handle");
    return out;
}

StoreResult<std::vector<StaleMirror>> LayoutStore::stale_mirrors() {
    std::lock_guard lk(mu_);
    StoreResult<std::vector<StaleMirror>> out;
    Stmt s(db_, "SELECT key, mirror, file_id, since_ms, reason FROM stale_mirrors "
                "ORDER BY since_ms, file_id, mirror");
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        StaleMirror m;
        m.key = s.blob(0);
        m.mirror = static_cast<std::uint32_t>(s.i64(1));
        m.file_id = s.u64(2);
        m.since_ms = s.i64(3);
        m.reason = s.text(4);
        out.value.push_back(std::move(m));
    }
    if (rc != SQLITE_DONE)
        out.status = fail("list stale mirrors");
    return out;
}

// ---------------------------------------------------------------------------------------
// Files under RW layouts

StoreStatus LayoutStore::update_rw_grants(const std::vector<RwGrantMark>& add,
                                          const std::vector<ObjectKey>& drop) {
    if (add.empty() && drop.empty())
        return {};
    std::lock_guard lk(mu_);
    Txn txn(*this);
    if (!txn.began())
        return fail("begin a transaction");
    if (auto st = write_rw_grants_locked(add, drop); !st.ok())
        return st;
    if (!txn.commit())
        return fail("commit RW-layout marks");
    return {};
}

StoreStatus LayoutStore::write_rw_grants_locked(const std::vector<RwGrantMark>& add,
                                                const std::vector<ObjectKey>& drop) {
    for (const ObjectKey& key : drop) {
        Stmt h(db_, "DELETE FROM rw_grant_handles WHERE key = ?");
        Stmt s(db_, "DELETE FROM rw_grants WHERE key = ?");
        if (!h.bind(1, key).run() || !s.bind(1, key).run())
            return fail("drop an RW-layout mark");
    }
    const std::int64_t now = wall_clock_ms();
    for (const RwGrantMark& m : add) {
        Stmt s(db_, "INSERT OR IGNORE INTO rw_grants (key, file_id, since_ms) VALUES (?, ?, ?)");
        if (!s.bind(1, m.key).bind(2, m.file_id).bind_signed(3, now).run())
            return fail("mark a file as under an RW layout");
        if (m.handle.empty())
            continue;
        Stmt h(db_, "INSERT OR REPLACE INTO rw_grant_handles (key, handle) VALUES (?, ?)");
        if (!h.bind(1, m.key).bind(2, m.handle).run())
            return fail("record the handle of a file under an RW layout");
    }
    return {};
}

StoreResult<std::vector<RwGrantMark>> LayoutStore::rw_grants() {
    std::lock_guard lk(mu_);
    StoreResult<std::vector<RwGrantMark>> out;
    Stmt s(db_, "SELECT g.key, g.file_id, h.handle FROM rw_grants g "
                "LEFT JOIN rw_grant_handles h ON h.key = g.key ORDER BY g.file_id");
    int rc;
    while ((rc = s.step()) == SQLITE_ROW)
        out.value.push_back(RwGrantMark{s.blob(0), s.u64(1), s.blob(2)});
    if (rc != SQLITE_DONE)
        out.status = fail("list RW-layout marks");
    return out;
}

// ---------------------------------------------------------------------------------------
// Creates in progress

StoreStatus LayoutStore::record_create_intent(const ObjectKey& key, std::uint64_t file_id,
                                              const std::vector<PlannedDataFile>& planned) {
    std::lock_guard lk(mu_);
    Txn txn(*this);
    if (!txn.began())
        return fail("begin a transaction");
    const std::int64_t now = wall_clock_ms();
    for (const PlannedDataFile& p : planned) {
        Stmt s(db_, "INSERT OR REPLACE INTO create_intents (key, ds_id, name, file_id, "
                    "created_ms) VALUES (?, ?, ?, ?, ?)");
        if (!s.bind(1, key)
                 .bind(2, p.ds_id)
                 .bind(3, p.name)
                 .bind(4, file_id)
                 .bind_signed(5, now)
                 .run())
            return fail("record a create intent");
    }
    if (!txn.commit())
        return fail("commit a create intent");
    return {};
}

StoreStatus LayoutStore::abandon_create(const ObjectKey& key,
                                        const std::vector<PendingRemoval>& leftovers) {
    std::lock_guard lk(mu_);
    Txn txn(*this);
    if (!txn.began())
        return fail("begin a transaction");
    Stmt s(db_, "DELETE FROM create_intents WHERE key = ?");
    if (!s.bind(1, key).run())
        return fail("drop a create's intents");
    std::vector<PendingRemoval> copy = leftovers;
    if (auto st = queue_locked(copy); !st.ok())
        return st;
    if (!txn.commit())
        return fail("commit an abandoned create");
    return {};
}

StoreResult<std::uint64_t> LayoutStore::recover_interrupted_creates() {
    std::lock_guard lk(mu_);
    StoreResult<std::uint64_t> out;
    Txn txn(*this);
    if (!txn.began()) {
        out.status = fail("begin a transaction");
        return out;
    }
    std::vector<PendingRemoval> removals;
    {
        Stmt s(db_, "SELECT ds_id, name, file_id FROM create_intents");
        int rc;
        const std::int64_t now = wall_clock_ms();
        while ((rc = s.step()) == SQLITE_ROW) {
            PendingRemoval r;
            r.ds_id = s.u64(0);
            r.name = s.text(1);
            r.file_id = s.u64(2);
            r.next_attempt_ms = now;
            r.queued_ms = now;
            r.last_error = "left by a create the MDS did not finish (restart)";
            removals.push_back(std::move(r));
        }
        if (rc != SQLITE_DONE) {
            out.status = fail("read create intents");
            return out;
        }
    }
    if (auto st = queue_locked(removals); !st.ok()) {
        out.status = st;
        return out;
    }
    if (auto st = exec("DELETE FROM create_intents", "drop recovered create intents"); !st.ok()) {
        out.status = st;
        return out;
    }
    if (!txn.commit()) {
        out.status = fail("commit recovered create intents");
        return out;
    }
    out.value = removals.size();
    return out;
}

// ---------------------------------------------------------------------------------------
// The removal queue

StoreStatus LayoutStore::queue_locked(std::vector<PendingRemoval>& removals) {
    for (PendingRemoval& r : removals) {
        Stmt s(db_, "INSERT INTO pending_removals (ds_id, name, fh, file_id, attempts, "
                    "next_attempt_ms, queued_ms, last_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        if (r.queued_ms == 0)
            r.queued_ms = wall_clock_ms();
        if (!s.bind(1, r.ds_id)
                 .bind(2, r.name)
                 .bind(3, r.fh)
                 .bind(4, r.file_id)
                 .bind(5, std::uint64_t{r.attempts})
                 .bind_signed(6, r.next_attempt_ms)
                 .bind_signed(7, r.queued_ms)
                 .bind(8, r.last_error)
                 .run())
            return fail("queue a data-file removal");
        r.id = sqlite3_last_insert_rowid(db_);
    }
    return {};
}

StoreResult<std::vector<PendingRemoval>>
LayoutStore::queue_removals(std::vector<PendingRemoval> removals) {
    std::lock_guard lk(mu_);
    StoreResult<std::vector<PendingRemoval>> out;
    Txn txn(*this);
    if (!txn.began()) {
        out.status = fail("begin a transaction");
        return out;
    }
    if (auto st = queue_locked(removals); !st.ok()) {
        out.status = st;
        return out;
    }
    if (!txn.commit()) {
        out.status = fail("commit queued removals");
        return out;
    }
    out.value = std::move(removals);
    return out;
}

StoreResult<std::vector<PendingRemoval>>
LayoutStore::due_removals(std::int64_t now_ms, std::size_t limit,
                          const std::vector<std::uint64_t>& ds_ids) {
    std::lock_guard lk(mu_);
    StoreResult<std::vector<PendingRemoval>> out;
    std::string sql = std::string("SELECT ") + kRemovalColumns +
                      " FROM pending_removals WHERE next_attempt_ms <= ?";
    for (std::size_t i = 0; i < ds_ids.size(); ++i)
        sql += " OR ds_id = ?";
    sql += " ORDER BY next_attempt_ms, id LIMIT ?";
    Stmt s(db_, sql.c_str());
    int col = 1;
    s.bind_signed(col++, now_ms);
    for (std::uint64_t id : ds_ids)
        s.bind(col++, id);
    s.bind_signed(col, static_cast<std::int64_t>(limit));
    int rc;
    while ((rc = s.step()) == SQLITE_ROW)
        out.value.push_back(removal_from_row(s));
    if (rc != SQLITE_DONE)
        out.status = fail("read due removals");
    return out;
}

StoreResult<std::vector<PendingRemoval>> LayoutStore::all_removals() {
    std::lock_guard lk(mu_);
    StoreResult<std::vector<PendingRemoval>> out;
    const std::string sql =
        std::string("SELECT ") + kRemovalColumns + " FROM pending_removals ORDER BY id";
    Stmt s(db_, sql.c_str());
    int rc;
    while ((rc = s.step()) == SQLITE_ROW)
        out.value.push_back(removal_from_row(s));
    if (rc != SQLITE_DONE)
        out.status = fail("read removals");
    return out;
}

StoreResult<bool> LayoutStore::removal_exists(std::int64_t id) {
    std::lock_guard lk(mu_);
    StoreResult<bool> out;
    Stmt s(db_, "SELECT 1 FROM pending_removals WHERE id = ?");
    s.bind_signed(1, id);
    const int rc = s.step();
    if (rc == SQLITE_ROW)
        out.value = true;
    else if (rc != SQLITE_DONE)
        out.status = fail("look up a removal");
    return out;
}

StoreStatus LayoutStore::removal_done(std::int64_t id) {
    std::lock_guard lk(mu_);
    Stmt s(db_, "DELETE FROM pending_removals WHERE id = ?");
    if (!s.bind_signed(1, id).run())
        return fail("drop a finished removal");
    return {};
}

StoreStatus LayoutStore::removals_done(const std::vector<std::int64_t>& ids) {
    if (ids.empty())
        return {};
    std::lock_guard lk(mu_);
    Txn txn(*this);
    if (!txn.began())
        return fail("begin a transaction");
    for (std::int64_t id : ids) {
        Stmt s(db_, "DELETE FROM pending_removals WHERE id = ?");
        if (!s.bind_signed(1, id).run())
            return fail("drop a finished removal");
    }
    if (!txn.commit())
        return fail("commit finished removals");
    return {};
}

StoreStatus LayoutStore::removal_failed(std::int64_t id, std::uint32_t attempts,
                                        std::int64_t next_attempt_ms, const std::string& error) {
    std::lock_guard lk(mu_);
    Stmt s(db_, "UPDATE pending_removals SET attempts = ?, next_attempt_ms = ?, last_error = ? "
                "WHERE id = ?");
    if (!s.bind(1, std::uint64_t{attempts})
             .bind_signed(2, next_attempt_ms)
             .bind(3, error)
             .bind_signed(4, id)
             .run())
        return fail("reschedule a removal");
    return {};
}

StoreResult<std::uint64_t> LayoutStore::cancel_removals(std::uint64_t ds_id,
                                                        const std::string& name) {
    std::lock_guard lk(mu_);
    StoreResult<std::uint64_t> out;
    Stmt s(db_, "DELETE FROM pending_removals WHERE ds_id = ? AND name = ?");
    if (!s.bind(1, ds_id).bind(2, name).run())
        out.status = fail("cancel removals");
    else
        out.value = static_cast<std::uint64_t>(sqlite3_changes(db_));
    return out;
}

StoreResult<std::uint64_t> LayoutStore::pending_removal_count() {
    std::lock_guard lk(mu_);
    StoreResult<std::uint64_t> out;
    Stmt s(db_, "SELECT count(*) FROM pending_removals");
    if (s.step() != SQLITE_ROW)
        out.status = fail("count removals");
    else
        out.value = s.u64(0);
    return out;
}

} // namespace flexfiles::mds
