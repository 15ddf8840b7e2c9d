// SPDX-License-Identifier: LGPL-3.0-or-later
//
// DataServer: the event thread, the libnfs RPC contexts and the request life cycle.
// Everything below "event thread only" runs on that thread; see data_server.h for the
// design.
#include "data_server.h"

// clang-format off
#include <nfsc/libnfs.h> // defines EXTERN, used by the others: must come first
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
// clang-format on

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

namespace flexfiles::fleet {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

enum class Step { done, again };

std::string ms_string(Clock::duration d) {
    return std::to_string(duration_cast<milliseconds>(d).count()) + " ms";
}

DsAttrs to_attrs(const fattr3& f) {
    DsAttrs a;
    a.type = static_cast<std::uint32_t>(f.type);
    a.mode = f.mode & 07777;
    a.nlink = f.nlink;
    a.uid = f.uid;
    a.gid = f.gid;
    a.size = f.size;
    a.used = f.used;
    a.fsid = f.fsid;
    a.fileid = f.fileid;
    a.atime = {f.atime.seconds, f.atime.nseconds};
    a.mtime = {f.mtime.seconds, f.mtime.nseconds};
    a.ctime = {f.ctime.seconds, f.ctime.nseconds};
    return a;
}

std::optional<DsAttrs> to_attrs(const post_op_attr& p) {
    if (!p.attributes_follow)
        return std::nullopt;
    return to_attrs(p.post_op_attr_u.attributes);
}

sattr3 to_sattr3(const SetAttrs& s) {
    sattr3 out;
    std::memset(&out, 0, sizeof(out));
    if (s.mode) {
        out.mode.set_it = 1;
        out.mode.set_mode3_u.mode = *s.mode & 07777;
    }
    if (s.uid) {
        out.uid.set_it = 1;
        out.uid.set_uid3_u.uid = *s.uid;
    }
    if (s.gid) {
        out.gid.set_it = 1;
        out.gid.set_gid3_u.gid = *s.gid;
    }
    if (s.size) {
        out.size.set_it = 1;
        out.size.set_size3_u.size = *s.size;
    }
    out.atime.set_it = DONT_CHANGE;
    out.mtime.set_it = DONT_CHANGE;
    if (s.atime) {
        out.atime.set_it = SET_TO_CLIENT_TIME;
        out.atime.set_atime_u.atime.seconds = static_cast<u_int>(s.atime->sec);
        out.atime.set_atime_u.atime.nseconds = s.atime->nsec;
    }
    if (s.mtime) {
        out.mtime.set_it = SET_TO_CLIENT_TIME;
        out.mtime.set_mtime_u.mtime.seconds = static_cast<u_int>(s.mtime->sec);
        out.mtime.set_mtime_u.mtime.nseconds = s.mtime->nsec;
    }
    return out;
}

// Does the server's view already show what we asked for?
bool attrs_match(const DsAttrs& a, const SetAttrs& want) {
    return (!want.mode || (a.mode & 07777) == (*want.mode & 07777)) &&
           (!want.uid || a.uid == *want.uid) && (!want.gid || a.gid == *want.gid) &&
           (!want.size || a.size == *want.size) && (!want.atime || a.atime == *want.atime) &&
           (!want.mtime || a.mtime == *want.mtime);
}

nfs_fh3 to_fh3(const DsFh& fh) {
    nfs_fh3 h;
    h.data.data_len = fh.len;
    h.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(fh.data.data()));
    return h;
}

std::optional<DsFh> from_fh3(const nfs_fh3& h) {
    return DsFh::from_bytes(h.data.data_val, h.data.data_len);
}

// One component in the export root: no separators, not "." or "..", at most 255 bytes.
std::string check_name(const std::string& name) {
    if (name.empty())
        return "empty file name";
    if (name.size() > 255)
        return "file name longer than 255 bytes";
    if (name == "." || name == "..")
        return "file name \"" + name + "\" is not allowed";
    if (name.find('/') != std::string::npos || name.find('\0') != std::string::npos)
        return "file name \"" + name + "\" is not a single component";
    return {};
}

template <class T> WriteVerifier to_verifier(const T& raw) {
    WriteVerifier v{};
    std::memcpy(v.data(), raw, v.size());
    return v;
}

} // namespace

std::string_view to_string(ConnState s) {
    switch (s) {
    case ConnState::connecting:
        return "connecting";
    case ConnState::connected:
        return "connected";
    case ConnState::backoff:
        return "backoff";
    case ConnState::stopped:
        return "stopped";
    }
    return "?";
}

DsStatus DataServerConfig::validate() const {
    auto bad = [](std::string m) {
        return DsStatus::error(DsErrc::invalid_argument, std::move(m));
    };
    if (id == 0)
        return bad("data server: Id must be >= 1");
    std::string who = "data server " + std::to_string(id) + ": ";
    if (host.empty())
        return bad(who + "host is empty");
    if (export_path.empty() || export_path[0] != '/')
        return bad(who + "export path \"" + export_path + "\" is not absolute");
    if (nfs_port == 0 || mount_port == 0)
        return bad(who + "NFS and MOUNT ports must be set (no portmapper is used)");
    if (request_timeout.count() <= 0 || connect_timeout.count() <= 0 ||
        probe_interval.count() <= 0 || probe_timeout.count() <= 0)
        return bad(who + "timeouts and the probe interval must be > 0");
    if (down_after == 0)
        return bad(who + "down_after must be >= 1");
    if (backoff_initial.count() <= 0 || backoff_max < backoff_initial)
        return bad(who + "backoff needs 0 < initial <= max");
    if (max_io_size == 0)
        return bad(who + "max_io_size must be > 0");
    return DsStatus::success();
}

// ---------------------------------------------------------------------------------------
// Requests

struct Call {
    explicit Call(const char* op_name) : op(op_name) {}
    virtual ~Call() = default;

    // Empty when the arguments are fine; checked on the caller's thread.
    virtual std::string check(const DataServer::Impl&) const { return {}; }
    // Queues the current step with libnfs; non-zero when libnfs refused it.
    virtual int issue(DataServer::Impl& ds, rpc_context* rpc) = 0;
    // A reply to the current step arrived; `again` re-issues (next step of a chain).
    virtual Step on_reply(DataServer::Impl& ds, void* data) = 0;
    virtual void fail(DataServer::Impl& ds, DsStatus st) = 0;
    // Names the object in messages ("fh 01ab..", "name ff-...").
    virtual std::string object() const { return {}; }
    // NULL's reply has no body (libnfs passes no data).
    virtual bool void_reply() const { return false; }
    // The file a WRITE or SETATTR changes: such a call is never sent while an earlier one
    // on the same file is unanswered after its deadline (see "Ordering" in README.md).
    virtual const DsFh* mutated_fh() const { return nullptr; }

    const char* op;
    DataServer::Impl* ds = nullptr;
    Deadline deadline{};
    Clock::time_point submitted{};
    Clock::time_point sent{};
    std::multimap<Deadline, Call*>::iterator dl_it{};
    bool indexed = false;    // in Impl::deadlines
    bool in_libnfs = false;  // libnfs holds the pointer (its callback will come)
    bool queued = false;     // in Impl::waiting or Impl::ready
    bool finished = false;   // the caller has its result
    bool probe = false;      // internal health probe (not counted as a request)
    bool held = false;       // in Impl::held, behind an unanswered change of its file
    bool unanswered = false; // timed out after it was sent; no reply or reset since
    rpc_context* sent_on = nullptr;
};

// The key of a data file in the ordering bookkeeping.
std::string fh_key(const DsFh& fh) {
    return std::string(reinterpret_cast<const char*>(fh.bytes()), fh.size());
}

struct DataServer::Impl {
    explicit Impl(DataServerConfig c)
        : cfg(std::move(c)),
          label("ds " + std::to_string(cfg.id) + " (" + cfg.host + ":" + cfg.export_path + ")"),
          health(cfg.down_after), backoff(cfg.backoff_initial, cfg.backoff_max, cfg.id) {}
    ~Impl() {
        if (efd >= 0)
            ::close(efd);
    }

    // ---- any thread ----
    void log(LogLevel lvl, const std::string& msg) const noexcept {
        if (!cfg.log)
            return;
        try {
            cfg.log(lvl, label + ": " + msg);
        } catch (...) {
        }
    }
    void wake() const noexcept {
        std::uint64_t one = 1;
        ssize_t n = ::write(efd, &one, sizeof(one));
        (void)n; // EAGAIN means the counter is already non-zero: the thread will wake
    }
    void submit(std::unique_ptr<Call> c, Deadline dl) noexcept;
    void on_finished(Call& c, const DsStatus& st) noexcept;
    void note_transition(const HealthTransition& t, const std::string& why) const;
    void stop() noexcept;
    bool on_event_thread() const noexcept {
        return std::this_thread::get_id() == thread_id.load(std::memory_order_acquire);
    }

    // ---- event thread only ----
    void run() noexcept;
    void dispatch(Call* c);
    void send(Call* c);
    void maybe_delete(Call* c) {
        if (c->finished && !c->in_libnfs && !c->queued)
            delete c;
    }
    void on_rpc_reply(Call* c, int status, void* data);
    void expire(Clock::time_point now);
    void start_attempt();
    void attempt_failed(const std::string& why);
    void on_mnt_connected(rpc_context* rpc, int status, void* data);
    void on_mnt_reply(rpc_context* rpc, int status, void* data);
    void on_nfs_connected(rpc_context* rpc, int status, void* data);
    void connection_lost(const std::string& why);
    void drop_connection(const std::string& why, bool retry_now);
    void send_probe(Clock::time_point now);
    void on_probe_done(const DsResult<NullResult>& r, Clock::time_point sent_at, std::uint64_t gen);
    void complete_rpc_errors(bool connection_failed);
    void retire(rpc_context*& rpc) {
        if (rpc != nullptr) {
            // A connection that carried changes still unanswered stays open (and polled)
            // until they are answered or the server closes it: dropped, it could still
            // deliver them after a newer change of the same file sent on the next one.
            if (auto it = unanswered_on.find(rpc);
                !stopping && it != unanswered_on.end() && it->second > 0) {
                draining.push_back(rpc);
                log(LogLevel::warn,
                    "keeping the old connection open until its " + std::to_string(it->second) +
                        " unanswered WRITE/SETATTR(s) are answered, so that none lands after a "
                        "newer change of the same file");
            } else {
                graveyard.push_back(rpc);
            }
        }
        rpc = nullptr;
    }
    void note_unanswered(Call* c);
    void note_answered(Call* c);
    void release_held();
    void service_draining(const pollfd* fds, rpc_context* const* ctxs, nfds_t n);
    void bury();
    void fail_waiting(DsErrc code, const std::string& why);
    void issue_ready();
    void poll_once(Clock::time_point now);
    void shutdown();
    DsStatus unavailable_status(const Call& c) const;

    const DataServerConfig cfg;
    const std::string label;
    HealthTracker health;
    Backoff backoff; // event thread only

    std::atomic<ConnState> conn{ConnState::connecting};

    std::atomic<std::uint64_t> c_requests{0}, c_errors{0}, c_timeouts{0}, c_reported{0},
        c_probes{0}, c_probe_failures{0}, c_connects{0}, c_connect_failures{0};
    std::atomic<std::uint32_t> c_in_flight{0};
    std::atomic<std::int64_t> last_probe_ns{-1};
    std::atomic<bool> last_probe_ok{false};
    std::atomic<std::int64_t> last_probe_rtt_us{0};

    int efd = -1;
    std::mutex inbox_mu;
    std::vector<Call*> inbox; // guarded by inbox_mu
    bool accepting = true;    // guarded by inbox_mu
    std::atomic<bool> stop_requested{false};
    std::atomic<bool> probe_requested{false};
    std::mutex join_mu;
    std::thread thread;
    std::atomic<std::thread::id> thread_id{};

    // event thread only
    bool stopping = false;
    rpc_context* mnt = nullptr;
    rpc_context* nfs = nullptr;
    std::vector<rpc_context*> graveyard;
    DsFh root_fh;
    std::multimap<Deadline, Call*> deadlines;
    std::deque<Call*> waiting; // submitted while a connection attempt runs
    std::deque<Call*> ready;   // next step of a chained operation
    // Ordering of changes (WRITE, SETATTR) per data file: those sent and unanswered after
    // their deadline, by file and by connection; calls held behind them; connections kept
    // open only for their answers.
    std::map<std::string, unsigned> unanswered;
    std::map<rpc_context*, unsigned> unanswered_on;
    std::deque<Call*> held;
    std::vector<rpc_context*> draining;
    bool release_pending = false; // a file's last unanswered change was settled
    Clock::time_point attempt_started{}, attempt_deadline{}, next_attempt{}, next_probe{};
    const char* attempt_stage = "";
    std::string last_error;
    bool probe_in_flight = false;
    std::uint64_t probe_gen = 0; // bumped per probe and per dropped connection
    // Requests libnfs failed with RPC_STATUS_ERROR during the current rpc_service(): a
    // dying connection (libnfs fails everything in flight) or an RPC-level rejection. Which
    // one is known only when rpc_service() returns, so they complete then.
    std::vector<std::pair<Call*, std::string>> rpc_errored;
    std::string teardown_reason; // non-empty: drop the connection when safe
};

namespace {

using Impl = DataServer::Impl;

void reply_cb(rpc_context*, int status, void* data, void* priv) {
    auto* c = static_cast<Call*>(priv);
    c->ds->on_rpc_reply(c, status, data);
}

template <class T> struct TypedCall : Call {
    TypedCall(const char* op_name, Callback<T> callback) : Call(op_name), cb(std::move(callback)) {}

    void fail(Impl& d, DsStatus st) override { complete(d, DsResult<T>::failure(std::move(st))); }
    void complete(Impl& d, DsResult<T> r) {
        d.on_finished(*this, r.status);
        if (cb) {
            try {
                cb(std::move(r));
            } catch (...) {
                d.log(LogLevel::error, std::string(op) + ": completion callback threw; ignored");
            }
            cb = nullptr; // drop captured state now, not when libnfs lets go of the call
        }
    }
    // The NFS status of a reply, as a failure (returns true) or success.
    bool nfs_failed(Impl& d, std::uint32_t status) {
        if (status == 0)
            return false;
        std::string obj = object();
        fail(d, DsStatus{DsErrc::nfs, status,
                         d.label + ": " + op + (obj.empty() ? "" : " " + obj) + ": " +
                             nfs3_status_name(status)});
        return true;
    }

    Callback<T> cb;
};

struct NullCall final : TypedCall<NullResult> {
    using TypedCall::TypedCall;
    bool void_reply() const override { return true; }
    int issue(Impl&, rpc_context* rpc) override { return rpc_nfs3_null_async(rpc, reply_cb, this); }
    Step on_reply(Impl& d, void*) override {
        complete(d,
                 DsResult<NullResult>::success({duration_cast<microseconds>(Clock::now() - sent)}));
        return Step::done;
    }
};

struct FhCall {
    DsFh fh;
    std::string fh_object() const { return "fh " + fh.hex(); }
    std::string fh_check() const { return fh.empty() ? "empty filehandle" : std::string(); }
};

struct GetattrCall final : TypedCall<DsAttrs>, FhCall {
    GetattrCall(Callback<DsAttrs> cb, const DsFh& f) : TypedCall("GETATTR", std::move(cb)) {
        fh = f;
    }
    std::string check(const Impl&) const override { return fh_check(); }
    std::string object() const override { return fh_object(); }
    int issue(Impl&, rpc_context* rpc) override {
        GETATTR3args a;
        std::memset(&a, 0, sizeof(a));
        a.object = to_fh3(fh);
        return rpc_nfs3_getattr_async(rpc, reply_cb, &a, this);
    }
    Step on_reply(Impl& d, void* data) override {
        auto* r = static_cast<GETATTR3res*>(data);
        if (!nfs_failed(d, r->status))
            complete(d,
                     DsResult<DsAttrs>::success(to_attrs(r->GETATTR3res_u.resok.obj_attributes)));
        return Step::done;
    }
};

struct NameCall {
    std::string name;
    std::string name_object() const { return "name " + name; }
};

struct LookupCall final : TypedCall<LookupResult>, NameCall {
    LookupCall(Callback<LookupResult> cb, std::string n) : TypedCall("LOOKUP", std::move(cb)) {
        name = std::move(n);
    }
    std::string check(const Impl&) const override { return check_name(name); }
    std::string object() const override { return name_object(); }
    int issue(Impl& d, rpc_context* rpc) override {
        LOOKUP3args a;
        std::memset(&a, 0, sizeof(a));
        a.what.dir = to_fh3(d.root_fh);
        a.what.name = name.data();
        return rpc_nfs3_lookup_async(rpc, reply_cb, &a, this);
    }
    Step on_reply(Impl& d, void* data) override {
        auto* r = static_cast<LOOKUP3res*>(data);
        if (nfs_failed(d, r->status))
            return Step::done;
        auto& ok = r->LOOKUP3res_u.resok;
        auto fh = from_fh3(ok.object);
        if (!fh) {
            fail(d, DsStatus::error(DsErrc::rpc, d.label + ": LOOKUP " + name +
                                                     ": server returned an invalid filehandle"));
            return Step::done;
        }
        complete(d, DsResult<LookupResult>::success({*fh, to_attrs(ok.obj_attributes)}));
        return Step::done;
    }
};

struct CreateCall final : TypedCall<CreateResult> {
    enum Stage { create, lookup, setattr };

    CreateCall(Callback<CreateResult> cb, CreateArgs a)
        : TypedCall("CREATE", std::move(cb)), args(std::move(a)) {}
    std::string check(const Impl&) const override { return check_name(args.name); }
    std::string object() const override { return "name " + args.name; }

    int issue(Impl& d, rpc_context* rpc) override {
        switch (stage) {
        case create: {
            CREATE3args a;
            std::memset(&a, 0, sizeof(a));
            a.where.dir = to_fh3(d.root_fh);
            a.where.name = args.name.data();
            switch (args.mode) {
            case CreateMode::unchecked:
                a.how.mode = UNCHECKED;
                a.how.createhow3_u.obj_attributes = to_sattr3(args.attrs);
                break;
            case CreateMode::guarded:
                a.how.mode = GUARDED;
                a.how.createhow3_u.g_obj_attributes = to_sattr3(args.attrs);
                break;
            case CreateMode::exclusive:
                a.how.mode = EXCLUSIVE;
                std::memcpy(a.how.createhow3_u.verf, args.verifier.data(), args.verifier.size());
                break;
            }
            return rpc_nfs3_create_async(rpc, reply_cb, &a, this);
        }
        case lookup: {
            LOOKUP3args a;
            std::memset(&a, 0, sizeof(a));
            a.what.dir = to_fh3(d.root_fh);
            a.what.name = args.name.data();
            return rpc_nfs3_lookup_async(rpc, reply_cb, &a, this);
        }
        case setattr: {
            SETATTR3args a;
            std::memset(&a, 0, sizeof(a));
            a.object = to_fh3(fh);
            a.new_attributes = to_sattr3(args.attrs);
            a.guard.check = 0;
            return rpc_nfs3_setattr_async(rpc, reply_cb, &a, this);
        }
        }
        return -1;
    }

    Step on_reply(Impl& d, void* data) override {
        switch (stage) {
        case create: {
            auto* r = static_cast<CREATE3res*>(data);
            if (nfs_failed(d, r->status))
                return Step::done;
            auto& ok = r->CREATE3res_u.resok;
            attrs = to_attrs(ok.obj_attributes);
            std::optional<DsFh> f;
            if (ok.obj.handle_follows)
                f = from_fh3(ok.obj.post_op_fh3_u.handle);
            if (!f) {
                stage = lookup; // the server created it but did not say which handle
                return Step::again;
            }
            fh = *f;
            return after_handle(d);
        }
        case lookup: {
            auto* r = static_cast<LOOKUP3res*>(data);
            if (nfs_failed(d, r->status))
                return Step::done;
            auto f = from_fh3(r->LOOKUP3res_u.resok.object);
            if (!f) {
                fail(d,
                     DsStatus::error(DsErrc::rpc, d.label + ": CREATE " + args.name +
                                                      ": server returned an invalid filehandle"));
                return Step::done;
            }
            fh = *f;
            attrs = to_attrs(r->LOOKUP3res_u.resok.obj_attributes);
            return after_handle(d);
        }
        case setattr: {
            auto* r = static_cast<SETATTR3res*>(data);
            if (r->status != 0) {
                fail(d, DsStatus{DsErrc::nfs, static_cast<std::uint32_t>(r->status),
                                 d.label + ": CREATE " + args.name +
                                     ": file created but SETATTR of its attributes failed: " +
                                     nfs3_status_name(r->status)});
                return Step::done;
            }
            if (auto a = to_attrs(r->SETATTR3res_u.resok.obj_wcc.after))
                attrs = a;
            complete(d, DsResult<CreateResult>::success({fh, attrs}));
            return Step::done;
        }
        }
        return Step::done;
    }

    Step after_handle(Impl& d) {
        bool need_setattr = !args.attrs.empty() && (args.mode == CreateMode::exclusive || !attrs ||
                                                    !attrs_match(*attrs, args.attrs));
        if (need_setattr) {
            stage = setattr;
            return Step::again;
        }
        complete(d, DsResult<CreateResult>::success({fh, attrs}));
        return Step::done;
    }

    CreateArgs args;
    Stage stage = create;
    DsFh fh;
    std::optional<DsAttrs> attrs;
};

struct RemoveCall final : TypedCall<Empty>, NameCall {
    RemoveCall(Callback<Empty> cb, std::string n) : TypedCall("REMOVE", std::move(cb)) {
        name = std::move(n);
    }
    std::string check(const Impl&) const override { return check_name(name); }
    std::string object() const override { return name_object(); }
    int issue(Impl& d, rpc_context* rpc) override {
        REMOVE3args a;
        std::memset(&a, 0, sizeof(a));
        a.object.dir = to_fh3(d.root_fh);
        a.object.name = name.data();
        return rpc_nfs3_remove_async(rpc, reply_cb, &a, this);
    }
    Step on_reply(Impl& d, void* data) override {
        auto* r = static_cast<REMOVE3res*>(data);
        if (!nfs_failed(d, r->status))
            complete(d, DsResult<Empty>::success({}));
        return Step::done;
    }
};

struct SetattrCall final : TypedCall<SetattrResult>, FhCall {
    SetattrCall(Callback<SetattrResult> cb, const DsFh& f, SetAttrs s)
        : TypedCall("SETATTR", std::move(cb)), attrs(s) {
        fh = f;
    }
    std::string check(const Impl&) const override { return fh_check(); }
    std::string object() const override { return fh_object(); }
    const DsFh* mutated_fh() const override { return &fh; }
    int issue(Impl&, rpc_context* rpc) override {
        SETATTR3args a;
        std::memset(&a, 0, sizeof(a));
        a.object = to_fh3(fh);
        a.new_attributes = to_sattr3(attrs);
        a.guard.check = 0;
        return rpc_nfs3_setattr_async(rpc, reply_cb, &a, this);
    }
    Step on_reply(Impl& d, void* data) override {
        auto* r = static_cast<SETATTR3res*>(data);
        if (!nfs_failed(d, r->status))
            complete(d, DsResult<SetattrResult>::success(
                            {to_attrs(r->SETATTR3res_u.resok.obj_wcc.after)}));
        return Step::done;
    }
    SetAttrs attrs;
};

struct ReadCall final : TypedCall<ReadResult>, FhCall {
    ReadCall(Callback<ReadResult> cb, const DsFh& f, std::uint64_t off, std::uint32_t cnt)
        : TypedCall("READ", std::move(cb)), offset(off), count(cnt) {
        fh = f;
    }
    std::string check(const Impl& d) const override {
        if (count > d.cfg.max_io_size)
            return "count " + std::to_string(count) + " exceeds max_io_size " +
                   std::to_string(d.cfg.max_io_size);
        return fh_check();
    }
    std::string object() const override { return fh_object(); }
    int issue(Impl&, rpc_context* rpc) override {
        READ3args a;
        std::memset(&a, 0, sizeof(a));
        a.file = to_fh3(fh);
        a.offset = offset;
        a.count = count;
        return rpc_nfs3_read_async(rpc, reply_cb, &a, this);
    }
    Step on_reply(Impl& d, void* data) override {
        auto* r = static_cast<READ3res*>(data);
        if (nfs_failed(d, r->status))
            return Step::done;
        auto& ok = r->READ3res_u.resok;
        ReadResult out;
        std::size_t n = std::min<std::size_t>(ok.data.data_len, count);
        if (n > 0 && ok.data.data_val != nullptr) {
            auto* p = reinterpret_cast<const std::uint8_t*>(ok.data.data_val);
            out.data.assign(p, p + n);
        }
        out.eof = ok.eof != 0;
        out.attrs = to_attrs(ok.file_attributes);
        complete(d, DsResult<ReadResult>::success(std::move(out)));
        return Step::done;
    }
    std::uint64_t offset;
    std::uint32_t count;
};

struct WriteCall final : TypedCall<WriteResult>, FhCall {
    WriteCall(Callback<WriteResult> cb, const DsFh& f, std::uint64_t off,
              std::vector<std::uint8_t> d, StableHow s)
        : TypedCall("WRITE", std::move(cb)), offset(off), data(std::move(d)), stable(s) {
        fh = f;
    }
    std::string check(const Impl& d) const override {
        if (data.size() > d.cfg.max_io_size)
            return "length " + std::to_string(data.size()) + " exceeds max_io_size " +
                   std::to_string(d.cfg.max_io_size);
        return fh_check();
    }
    std::string object() const override { return fh_object(); }
    const DsFh* mutated_fh() const override { return &fh; }
    int issue(Impl&, rpc_context* rpc) override {
        WRITE3args a;
        std::memset(&a, 0, sizeof(a));
        a.file = to_fh3(fh);
        a.offset = offset;
        a.count = static_cast<count3>(data.size());
        a.stable = static_cast<stable_how>(stable);
        a.data.data_len = static_cast<u_int>(data.size());
        a.data.data_val = reinterpret_cast<char*>(data.data());
        int rc = rpc_nfs3_write_async(rpc, reply_cb, &a, this);
        if (rc == 0)
            std::vector<std::uint8_t>().swap(data); // libnfs encoded a copy
        return rc;
    }
    Step on_reply(Impl& d, void* raw) override {
        auto* r = static_cast<WRITE3res*>(raw);
        if (nfs_failed(d, r->status))
            return Step::done;
        auto& ok = r->WRITE3res_u.resok;
        WriteResult out;
        out.count = ok.count;
        out.committed = static_cast<StableHow>(ok.committed);
        out.verifier = to_verifier(ok.verf);
        out.attrs = to_attrs(ok.file_wcc.after);
        complete(d, DsResult<WriteResult>::success(out));
        return Step::done;
    }
    std::uint64_t offset;
    std::vector<std::uint8_t> data;
    StableHow stable;
};

struct CommitCall final : TypedCall<CommitResult>, FhCall {
    CommitCall(Callback<CommitResult> cb, const DsFh& f, std::uint64_t off, std::uint32_t cnt)
        : TypedCall("COMMIT", std::move(cb)), offset(off), count(cnt) {
        fh = f;
    }
    std::string check(const Impl&) const override { return fh_check(); }
    std::string object() const override { return fh_object(); }
    int issue(Impl&, rpc_context* rpc) override {
        COMMIT3args a;
        std::memset(&a, 0, sizeof(a));
        a.file = to_fh3(fh);
        a.offset = offset;
        a.count = count;
        return rpc_nfs3_commit_async(rpc, reply_cb, &a, this);
    }
    Step on_reply(Impl& d, void* data) override {
        auto* r = static_cast<COMMIT3res*>(data);
        if (nfs_failed(d, r->status))
            return Step::done;
        auto& ok = r->COMMIT3res_u.resok;
        complete(d, DsResult<CommitResult>::success(
                        {to_verifier(ok.verf), to_attrs(ok.file_wcc.after)}));
        return Step::done;
    }
    std::uint64_t offset;
    std::uint32_t count;
};

void mnt_connect_cb(rpc_context* rpc, int status, void* data, void* priv) {
    static_cast<Impl*>(priv)->on_mnt_connected(rpc, status, data);
}
void mnt_reply_cb(rpc_context* rpc, int status, void* data, void* priv) {
    static_cast<Impl*>(priv)->on_mnt_reply(rpc, status, data);
}
void nfs_connect_cb(rpc_context* rpc, int status, void* data, void* priv) {
    static_cast<Impl*>(priv)->on_nfs_connected(rpc, status, data);
}

std::string rpc_error(rpc_context* rpc) {
    const char* e = rpc != nullptr ? rpc_get_error(rpc) : nullptr;
    // libnfs sets no message when the peer simply closes the socket.
    return e != nullptr && *e != '\0' ? e : "socket closed or failed (no detail from libnfs)";
}

} // namespace

// ---------------------------------------------------------------------------------------
// Any thread

void DataServer::Impl::submit(std::unique_ptr<Call> c, Deadline dl) noexcept {
    auto now = Clock::now();
    c->ds = this;
    c->submitted = now;
    c->deadline = dl == Deadline{} ? now + cfg.request_timeout : dl;
    c_requests.fetch_add(1, std::memory_order_relaxed);
    c_in_flight.fetch_add(1, std::memory_order_relaxed);
    if (std::string err = c->check(*this); !err.empty()) {
        std::string obj = c->object();
        c->fail(*this, DsStatus::error(DsErrc::invalid_argument,
                                       label + ": " + c->op + (obj.empty() ? "" : " " + obj) +
                                           ": " + err));
        return;
    }
    std::unique_lock lk(inbox_mu);
    if (!accepting) {
        lk.unlock();
        c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                       label + ": " + c->op + ": data server client stopped"));
        return;
    }
    bool was_empty = inbox.empty();
    inbox.push_back(c.release());
    lk.unlock();
    if (was_empty)
        wake();
}

void DataServer::Impl::on_finished(Call& c, const DsStatus& st) noexcept {
    c.finished = true;
    if (c.indexed) {
        deadlines.erase(c.dl_it);
        c.indexed = false;
    }
    if (c.probe)
        return;
    c_in_flight.fetch_sub(1, std::memory_order_relaxed);
    if (!st.ok())
        c_errors.fetch_add(1, std::memory_order_relaxed);
    if (st.code == DsErrc::timeout) {
        c_timeouts.fetch_add(1, std::memory_order_relaxed);
        // Only a request the server had and did not answer counts against it; one that
        // never left (deadline already past, or waiting for a connection that failing
        // attempts already account for) does not.
        if (c.in_libnfs)
            note_transition(health.error_reported(ErrorKind::timeout), st.message);
    }
}

void DataServer::Impl::note_transition(const HealthTransition& t, const std::string& why) const {
    if (!t.changed())
        return;
    LogLevel lvl = t.to == Health::up     ? LogLevel::info
                   : t.to == Health::down ? LogLevel::error
                                          : LogLevel::warn;
    log(lvl, std::string("health ") + std::string(to_string(t.from)) + " -> " +
                 std::string(to_string(t.to)) + (why.empty() ? "" : ": " + why));
}

void DataServer::Impl::stop() noexcept {
    stop_requested.store(true, std::memory_order_release);
    if (efd >= 0)
        wake();
    if (on_event_thread())
        return; // run() ends once the current callback returns
    std::lock_guard lk(join_mu);
    if (thread.joinable())
        thread.join();
}

// ---------------------------------------------------------------------------------------
// Event thread

void DataServer::Impl::run() noexcept {
    thread_id.store(std::this_thread::get_id(), std::memory_order_release);
    {
        std::string name = "ff-ds" + std::to_string(cfg.id);
        if (name.size() > 15)
            name.resize(15);
        pthread_setname_np(pthread_self(), name.c_str());
    }
    log(LogLevel::info, "client started (NFS port " + std::to_string(cfg.nfs_port) +
                            ", MOUNT port " + std::to_string(cfg.mount_port) + ")");
    start_attempt();
    while (!stop_requested.load(std::memory_order_acquire)) {
        std::vector<Call*> batch;
        {
            std::lock_guard lk(inbox_mu);
            batch.swap(inbox);
        }
        for (Call* c : batch)
            dispatch(c);
        issue_ready();

        auto now = Clock::now();
        expire(now);
        release_held();
        if (conn == ConnState::connecting && now >= attempt_deadline)
            attempt_failed(std::string("no answer within ") + ms_string(cfg.connect_timeout) +
                           " (" + attempt_stage + ")");
        if (conn == ConnState::backoff && (now >= next_attempt || probe_requested.exchange(false)))
            start_attempt();
        if (conn == ConnState::connected && !probe_in_flight &&
            (now >= next_probe || probe_requested.exchange(false)))
            send_probe(now);
        if (!teardown_reason.empty()) {
            std::string why;
            why.swap(teardown_reason);
            drop_connection(why, false);
        }
        bury();
        if (!ready.empty() || release_pending)
            continue;
        poll_once(Clock::now());
        if (!teardown_reason.empty()) {
            std::string why;
            why.swap(teardown_reason);
            drop_connection(why, false);
        }
        bury();
    }
    shutdown();
}

void DataServer::Impl::poll_once(Clock::time_point now) {
    auto next = now + milliseconds(1000);
    if (!deadlines.empty())
        next = std::min(next, deadlines.begin()->first);
    if (conn == ConnState::connecting)
        next = std::min(next, attempt_deadline);
    if (conn == ConnState::backoff)
        next = std::min(next, next_attempt);
    if (conn == ConnState::connected && !probe_in_flight)
        next = std::min(next, next_probe);
    int timeout_ms = 0;
    if (next > now)
        timeout_ms =
            static_cast<int>(duration_cast<milliseconds>(next - now + microseconds(999)).count());

    constexpr nfds_t kMaxDraining = 8; // more are polled on later rounds
    pollfd fds[3 + kMaxDraining];
    rpc_context* drain_ctx[kMaxDraining];
    nfds_t n = 0;
    fds[n++] = {efd, POLLIN, 0};
    int mi = -1, ni = -1;
    if (mnt != nullptr && rpc_get_fd(mnt) >= 0) {
        mi = static_cast<int>(n);
        fds[n++] = {rpc_get_fd(mnt), static_cast<short>(rpc_which_events(mnt)), 0};
    }
    if (nfs != nullptr && rpc_get_fd(nfs) >= 0) {
        ni = static_cast<int>(n);
        fds[n++] = {rpc_get_fd(nfs), static_cast<short>(rpc_which_events(nfs)), 0};
    }
    const nfds_t di = n;
    nfds_t nd = 0;
    for (rpc_context* d : draining) {
        if (nd == kMaxDraining)
            break;
        if (rpc_get_fd(d) < 0)
            continue;
        drain_ctx[nd++] = d;
        fds[n++] = {rpc_get_fd(d), static_cast<short>(rpc_which_events(d)), 0};
    }
    int rc = ::poll(fds, n, timeout_ms);
    if (rc < 0) {
        if (errno != EINTR)
            log(LogLevel::error, std::string("poll failed: ") + std::strerror(errno));
        return;
    }
    if (rc == 0)
        return;
    if (fds[0].revents & POLLIN) {
        std::uint64_t v;
        ssize_t r = ::read(efd, &v, sizeof(v));
        (void)r;
    }
    if (mi >= 0 && fds[mi].revents != 0) {
        rpc_context* m = mnt;
        if (rpc_service(m, fds[mi].revents) < 0 && m == mnt)
            attempt_failed(std::string("MOUNT connection failed (") + attempt_stage +
                           "): " + rpc_error(m));
    }
    if (ni >= 0 && fds[ni].revents != 0) {
        rpc_context* c = nfs;
        bool failed = rpc_service(c, fds[ni].revents) < 0;
        complete_rpc_errors(failed);
        if (failed && c == nfs) {
            if (conn == ConnState::connecting)
                attempt_failed(std::string("NFS connection failed (") + attempt_stage +
                               "): " + rpc_error(c));
            else
                connection_lost(rpc_error(c));
        }
    }
    service_draining(fds + di, drain_ctx, nd);
    complete_rpc_errors(false); // none expected here; never leave one unanswered
}

// Late replies on kept connections. One the server closed goes: whatever it had not run,
// it never will, and destroying the context settles its calls (libnfs calls back).
void DataServer::Impl::service_draining(const pollfd* fds, rpc_context* const* ctxs, nfds_t n) {
    for (nfds_t i = 0; i < n; ++i) {
        if (fds[i].revents == 0)
            continue;
        rpc_context* d = ctxs[i];
        const bool failed = rpc_service(d, fds[i].revents) < 0;
        complete_rpc_errors(true);
        if (failed) {
            if (auto it = std::find(draining.begin(), draining.end(), d); it != draining.end()) {
                draining.erase(it);
                graveyard.push_back(d);
                log(LogLevel::info, "old connection closed by the server");
            }
        }
    }
}

void DataServer::Impl::dispatch(Call* c) {
    auto now = Clock::now();
    if (c->deadline <= now) {
        c->fail(*this, DsStatus::error(DsErrc::timeout,
                                       label + ": " + c->op + ": deadline passed before sending"));
        maybe_delete(c);
        return;
    }
    c->dl_it = deadlines.emplace(c->deadline, c);
    c->indexed = true;
    if (conn == ConnState::connected) {
        send(c);
        return;
    }
    if (conn == ConnState::connecting && health.state() != Health::down) {
        c->queued = true;
        waiting.push_back(c);
        return;
    }
    c->fail(*this, unavailable_status(*c));
    maybe_delete(c);
}

DsStatus DataServer::Impl::unavailable_status(const Call& c) const {
    std::string why;
    if (health.state() == Health::down)
        why = "data server is Down";
    else
        why = "not connected";
    if (!last_error.empty())
        why += " (last error: " + last_error + ")";
    if (conn == ConnState::backoff) {
        auto left = next_attempt - Clock::now();
        why += "; next connection attempt in " + ms_string(std::max(left, Clock::duration{}));
    }
    return DsStatus::error(DsErrc::unavailable, label + ": " + c.op + ": " + why);
}

void DataServer::Impl::send(Call* c) {
    if (const DsFh* fh = c->mutated_fh();
        fh != nullptr && !unanswered.empty() && unanswered.count(fh_key(*fh)) != 0) {
        c->held = true;
        c->queued = true;
        held.push_back(c);
        return;
    }
    c->sent = Clock::now();
    c->in_libnfs = true;
    c->sent_on = nfs;
    if (c->issue(*this, nfs) != 0) {
        c->in_libnfs = false;
        c->fail(*this, DsStatus::error(DsErrc::rpc,
                                       label + ": " + c->op +
                                           ": could not queue the request: " + rpc_error(nfs)));
        maybe_delete(c);
    }
}

void DataServer::Impl::issue_ready() {
    while (!ready.empty()) {
        Call* c = ready.front();
        ready.pop_front();
        c->queued = false;
        if (c->finished) {
            maybe_delete(c);
        } else if (conn == ConnState::connected) {
            send(c);
        } else {
            c->fail(*this,
                    DsStatus::error(DsErrc::disconnected,
                                    label + ": " + c->op + ": connection lost mid-operation"));
            maybe_delete(c);
        }
    }
}

void DataServer::Impl::on_rpc_reply(Call* c, int status, void* data) {
    c->in_libnfs = false;
    if (c->unanswered) // a late reply, or its connection is gone: it cannot land later
        note_answered(c);
    if (c->finished) { // timed out earlier: drop the late reply
        maybe_delete(c);
        return;
    }
    if (status == RPC_STATUS_SUCCESS && (data != nullptr || c->void_reply())) {
        if (c->on_reply(*this, data) == Step::again) {
            c->queued = true;
            ready.push_back(c);
            return;
        }
    } else if (status == RPC_STATUS_SUCCESS) {
        c->fail(*this, DsStatus::error(DsErrc::rpc, label + ": " + c->op + ": empty reply"));
    } else if (status == RPC_STATUS_TIMEOUT) {
        c->fail(*this, DsStatus::error(DsErrc::timeout, label + ": " + c->op + ": RPC timed out"));
    } else if (status == RPC_STATUS_ERROR && !stopping) {
        c->queued = true; // completed by complete_rpc_errors() after rpc_service() returns
        rpc_errored.emplace_back(c, data != nullptr ? static_cast<const char*>(data) : "");
        return;
    } else {
        c->fail(*this, DsStatus::error(
                           stopping ? DsErrc::shutdown : DsErrc::disconnected,
                           label + ": " + c->op + ": " +
                               (stopping ? "data server client stopped" : "connection reset")));
    }
    maybe_delete(c);
}

void DataServer::Impl::complete_rpc_errors(bool connection_failed) {
    std::vector<std::pair<Call*, std::string>> errs;
    errs.swap(rpc_errored);
    for (auto& [c, why] : errs) {
        c->queued = false;
        if (!c->finished) {
            std::string detail = why.empty() ? std::string() : ": " + why;
            if (connection_failed)
                c->fail(*this,
                        DsStatus::error(DsErrc::disconnected,
                                        label + ": " + c->op + ": connection failed" + detail));
            else
                c->fail(*this, DsStatus::error(DsErrc::rpc,
                                               label + ": " + c->op + ": RPC error" + detail));
        }
        maybe_delete(c);
    }
}

void DataServer::Impl::note_unanswered(Call* c) {
    c->unanswered = true;
    ++unanswered[fh_key(*c->mutated_fh())];
    ++unanswered_on[c->sent_on];
}

void DataServer::Impl::note_answered(Call* c) {
    c->unanswered = false;
    if (auto it = unanswered.find(fh_key(*c->mutated_fh()));
        it != unanswered.end() && --it->second == 0) {
        unanswered.erase(it);
        release_pending = true;
    }
    if (auto it = unanswered_on.find(c->sent_on); it != unanswered_on.end() && --it->second == 0) {
        unanswered_on.erase(it);
        // A kept connection whose last unanswered change is settled can go now; never
        // destroyed here, inside its own rpc_service().
        if (auto d = std::find(draining.begin(), draining.end(), c->sent_on); d != draining.end()) {
            draining.erase(d);
            graveyard.push_back(c->sent_on);
            log(LogLevel::info, "old connection closed: its unanswered changes are settled");
        }
    }
}

// Calls held behind a change that is now settled go out, in the order they came.
void DataServer::Impl::release_held() {
    if (!release_pending)
        return;
    release_pending = false;
    std::deque<Call*> h;
    h.swap(held);
    for (Call* c : h) {
        c->queued = false;
        c->held = false;
        if (c->finished) {
            maybe_delete(c);
        } else if (conn == ConnState::connected) {
            send(c); // held again if its file still has an unanswered change
        } else if (conn == ConnState::connecting && health.state() != Health::down) {
            c->queued = true;
            waiting.push_back(c);
        } else {
            c->fail(*this, unavailable_status(*c));
            maybe_delete(c);
        }
    }
}

void DataServer::Impl::expire(Clock::time_point now) {
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
        Call* c = deadlines.begin()->second;
        std::string where = c->in_libnfs ? "no reply"
                            : c->held    ? "not sent: an earlier change of this file is "
                                           "still unanswered"
                                         : "not sent (waiting for a connection)";
        if (c->in_libnfs && c->mutated_fh() != nullptr)
            note_unanswered(c);
        if (c->held) { // it leaves the queue with its answer
            std::erase(held, c);
            c->held = false;
            c->queued = false;
        }
        std::string obj = c->object();
        c->fail(*this, DsStatus::error(DsErrc::timeout,
                                       label + ": " + c->op + (obj.empty() ? "" : " " + obj) +
                                           ": timed out after " + ms_string(now - c->submitted) +
                                           ", " + where));
        maybe_delete(c);
    }
}

void DataServer::Impl::start_attempt() {
    retire(mnt);
    retire(nfs);
    conn = ConnState::connecting;
    attempt_started = Clock::now();
    attempt_deadline = attempt_started + cfg.connect_timeout;
    attempt_stage = "MOUNT connect";
    mnt = rpc_init_context();
    if (mnt == nullptr) {
        attempt_failed("rpc_init_context failed");
        return;
    }
    rpc_set_uid(mnt, static_cast<int>(cfg.uid));
    rpc_set_gid(mnt, static_cast<int>(cfg.gid));
    // Plain TCP connect to the fixed port. (rpc_connect_port_async would also send a
    // portmapper NULL to that port first, and leaks its state if the context is destroyed
    // while connecting.)
    if (rpc_connect_async(mnt, cfg.host.c_str(), cfg.mount_port, mnt_connect_cb, this) != 0)
        attempt_failed("MOUNT connect to port " + std::to_string(cfg.mount_port) + ": " +
                       rpc_error(mnt));
}

void DataServer::Impl::on_mnt_connected(rpc_context* rpc, int status, void* data) {
    if (rpc != mnt || mnt == nullptr)
        return; // a retired context
    if (status != RPC_STATUS_SUCCESS) {
        attempt_failed("MOUNT connect to port " + std::to_string(cfg.mount_port) + ": " +
                       (data != nullptr ? static_cast<const char*>(data) : rpc_error(rpc)));
        return;
    }
    attempt_stage = "MNT";
    if (rpc_mount3_mnt_async(mnt, mnt_reply_cb, const_cast<char*>(cfg.export_path.c_str()), this) !=
        0)
        attempt_failed("MNT " + cfg.export_path + ": " + rpc_error(mnt));
}

void DataServer::Impl::on_mnt_reply(rpc_context* rpc, int status, void* data) {
    if (rpc != mnt || mnt == nullptr)
        return;
    if (status != RPC_STATUS_SUCCESS || data == nullptr) {
        attempt_failed("MNT " + cfg.export_path + ": " +
                       (status == RPC_STATUS_ERROR && data != nullptr
                            ? static_cast<const char*>(data)
                            : rpc_error(rpc)));
        return;
    }
    auto* res = static_cast<mountres3*>(data);
    if (res->fhs_status != MNT3_OK) {
        attempt_failed("MNT " + cfg.export_path + ": " + mountstat3_to_str(res->fhs_status) +
                       " (is it the export's Path?)");
        return;
    }
    auto fh = DsFh::from_bytes(res->mountres3_u.mountinfo.fhandle.fhandle3_val,
                               res->mountres3_u.mountinfo.fhandle.fhandle3_len);
    if (!fh) {
        attempt_failed("MNT " + cfg.export_path + ": invalid root filehandle");
        return;
    }
    root_fh = *fh;
    retire(mnt);
    attempt_stage = "NFS connect";
    nfs = rpc_init_context();
    if (nfs == nullptr) {
        attempt_failed("rpc_init_context failed");
        return;
    }
    rpc_set_uid(nfs, static_cast<int>(cfg.uid));
    rpc_set_gid(nfs, static_cast<int>(cfg.gid));
    if (rpc_connect_async(nfs, cfg.host.c_str(), cfg.nfs_port, nfs_connect_cb, this) != 0)
        attempt_failed("NFS connect to port " + std::to_string(cfg.nfs_port) + ": " +
                       rpc_error(nfs));
}

void DataServer::Impl::on_nfs_connected(rpc_context* rpc, int status, void* data) {
    if (rpc != nfs || nfs == nullptr)
        return;
    if (status != RPC_STATUS_SUCCESS) {
        attempt_failed("NFS connect to port " + std::to_string(cfg.nfs_port) + ": " +
                       (data != nullptr ? static_cast<const char*>(data) : rpc_error(rpc)));
        return;
    }
    conn = ConnState::connected;
    c_connects.fetch_add(1, std::memory_order_relaxed);
    // The backoff is reset by the first good probe, not here: a server that accepts
    // connections but does not answer NFS must not be reconnected to in a tight loop.
    last_error.clear();
    log(LogLevel::info, "connected in " + ms_string(Clock::now() - attempt_started) + " (root fh " +
                            root_fh.hex() + ")");
    next_probe = Clock::now(); // prove it with a NULL right away
    std::deque<Call*> w;
    w.swap(waiting);
    for (Call* c : w) {
        c->queued = false;
        if (c->finished)
            maybe_delete(c);
        else
            send(c);
    }
}

void DataServer::Impl::fail_waiting(DsErrc code, const std::string& why) {
    std::deque<Call*> w;
    w.swap(waiting);
    for (Call* c : w) {
        c->queued = false;
        if (!c->finished)
            c->fail(*this, DsStatus::error(code, label + ": " + c->op + ": " + why));
        maybe_delete(c);
    }
}

void DataServer::Impl::attempt_failed(const std::string& why) {
    retire(mnt);
    retire(nfs);
    c_connect_failures.fetch_add(1, std::memory_order_relaxed);
    last_error = why;
    conn = ConnState::backoff;
    auto delay = backoff.next();
    next_attempt = Clock::now() + delay;
    // Log the first failure of a series and then only every 10th, to keep logs readable
    // while a server is away.
    unsigned n = backoff.failures();
    if (n == 1 || n % 10 == 0)
        log(LogLevel::warn, "connection attempt " + std::to_string(n) + " failed: " + why +
                                "; retrying in " + ms_string(delay));
    note_transition(health.probe_failed(), "cannot connect: " + why);
    fail_waiting(DsErrc::unavailable, "connection attempt failed: " + why);
}

void DataServer::Impl::connection_lost(const std::string& why) {
    log(LogLevel::warn, "connection lost: " + why);
    note_transition(health.probe_failed(), "connection lost: " + why);
    drop_connection("connection lost: " + why, health.state() != Health::down);
}

void DataServer::Impl::drop_connection(const std::string& why, bool retry_now) {
    retire(nfs);
    retire(mnt);
    probe_in_flight = false;
    ++probe_gen; // the cancelled probe's completion is ignored
    last_error = why;
    if (retry_now) {
        start_attempt();
    } else {
        conn = ConnState::backoff;
        auto delay = backoff.next();
        next_attempt = Clock::now() + delay;
        unsigned n = backoff.failures(); // first of a series, then every 10th
        if (n == 1 || n % 10 == 0)
            log(LogLevel::warn,
                "dropped the connection (" + why + "); reconnecting in " + ms_string(delay));
    }
}

void DataServer::Impl::send_probe(Clock::time_point now) {
    probe_in_flight = true;
    Clock::time_point sent_at = now;
    std::uint64_t gen = ++probe_gen;
    auto* c = new NullCall("NULL (probe)", [this, sent_at, gen](DsResult<NullResult> r) {
        on_probe_done(r, sent_at, gen);
    });
    c->ds = this;
    c->probe = true;
    c->submitted = now;
    c->deadline = now + cfg.probe_timeout;
    dispatch(c);
}

void DataServer::Impl::on_probe_done(const DsResult<NullResult>& r, Clock::time_point sent_at,
                                     std::uint64_t gen) {
    if (stopping || gen != probe_gen)
        return; // stopping, or the probe of a connection already dropped
    probe_in_flight = false;
    if (r.status.code == DsErrc::disconnected)
        return; // the connection-loss path counts it
    next_probe = sent_at + cfg.probe_interval;
    c_probes.fetch_add(1, std::memory_order_relaxed);
    auto wall = std::chrono::system_clock::now().time_since_epoch();
    last_probe_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count(),
                        std::memory_order_relaxed);
    if (r.ok()) {
        backoff.reset();
        last_probe_ok.store(true, std::memory_order_relaxed);
        last_probe_rtt_us.store(r.value.rtt.count(), std::memory_order_relaxed);
        note_transition(health.probe_succeeded(), "probe answered");
        return;
    }
    c_probe_failures.fetch_add(1, std::memory_order_relaxed);
    last_probe_ok.store(false, std::memory_order_relaxed);
    auto t = health.probe_failed();
    note_transition(t, r.status.message);
    if (t.to == Health::down && conn == ConnState::connected)
        teardown_reason = "Down after " + std::to_string(cfg.down_after) + " failed probes";
}

void DataServer::Impl::bury() {
    // Destroying a context cancels its requests, whose callbacks may queue more work but
    // never touch a retired context; new retirements land in `graveyard` again.
    while (!graveyard.empty()) {
        rpc_context* rpc = graveyard.back();
        graveyard.pop_back();
        rpc_destroy_context(rpc);
    }
}

void DataServer::Impl::shutdown() {
    complete_rpc_errors(true);
    stopping = true;
    std::vector<Call*> batch;
    {
        std::lock_guard lk(inbox_mu);
        accepting = false;
        batch.swap(inbox);
    }
    for (Call* c : batch) {
        c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                       label + ": " + c->op + ": data server client stopped"));
        maybe_delete(c);
    }
    fail_waiting(DsErrc::shutdown, "data server client stopped");
    for (Call* c : held) {
        c->queued = false;
        c->held = false;
        if (!c->finished)
            c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                           label + ": " + c->op + ": data server client stopped"));
        maybe_delete(c);
    }
    held.clear();
    for (rpc_context* d : draining)
        graveyard.push_back(d);
    draining.clear();
    while (!ready.empty()) {
        Call* c = ready.front();
        ready.pop_front();
        c->queued = false;
        if (!c->finished)
            c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                           label + ": " + c->op + ": data server client stopped"));
        maybe_delete(c);
    }
    retire(mnt);
    retire(nfs);
    bury();
    // Anything still indexed was neither queued nor in libnfs: cannot happen, but never
    // leave a caller without an answer.
    while (!deadlines.empty()) {
        Call* c = deadlines.begin()->second;
        c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                       label + ": " + c->op + ": data server client stopped"));
        maybe_delete(c);
    }
    conn = ConnState::stopped;
    log(LogLevel::info, "client stopped");
}

// ---------------------------------------------------------------------------------------
// DataServer

DsResult<std::shared_ptr<DataServer>> DataServer::start(DataServerConfig config) {
    using R = DsResult<std::shared_ptr<DataServer>>;
    if (auto st = config.validate(); !st.ok())
        return R::failure(st);
    auto impl = std::make_shared<Impl>(std::move(config));
    impl->efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (impl->efd < 0)
        return R::failure(
            DsStatus::error(DsErrc::rpc, impl->label + ": eventfd: " + std::strerror(errno)));
    std::shared_ptr<DataServer> ds(new DataServer(impl));
    try {
        std::lock_guard lk(impl->join_mu);
        impl->thread = std::thread([self = impl] { self->run(); });
    } catch (const std::system_error& e) {
        return R::failure(
            DsStatus::error(DsErrc::rpc, impl->label + ": cannot start event thread: " + e.what()));
    }
    return R::success(std::move(ds));
}

DataServer::DataServer(std::shared_ptr<Impl> impl)
    : impl_(std::move(impl)), id_(impl_->cfg.id),
      deviceid_(make_deviceid(impl_->cfg.id, impl_->cfg.fsal_id)) {}

DataServer::~DataServer() {
    impl_->stop();
    if (impl_->on_event_thread()) {
        // The last reference went away inside a callback: let the thread finish by itself
        // (it holds its own reference to the state).
        std::lock_guard lk(impl_->join_mu);
        if (impl_->thread.joinable())
            impl_->thread.detach();
    }
}

void DataServer::stop() noexcept {
    impl_->stop();
}

const DataServerConfig& DataServer::config() const noexcept {
    return impl_->cfg;
}
const std::string& DataServer::label() const noexcept {
    return impl_->label;
}
Health DataServer::health() const noexcept {
    return impl_->health.state();
}
ConnState DataServer::conn_state() const noexcept {
    return impl_->conn.load();
}
std::uint32_t DataServer::in_flight() const noexcept {
    return impl_->c_in_flight.load(std::memory_order_relaxed);
}

DsCounters DataServer::counters() const noexcept {
    const Impl& d = *impl_;
    DsCounters c;
    c.requests = d.c_requests.load(std::memory_order_relaxed);
    c.errors = d.c_errors.load(std::memory_order_relaxed);
    c.timeouts = d.c_timeouts.load(std::memory_order_relaxed);
    c.reported_errors = d.c_reported.load(std::memory_order_relaxed);
    c.probes = d.c_probes.load(std::memory_order_relaxed);
    c.probe_failures = d.c_probe_failures.load(std::memory_order_relaxed);
    c.connects = d.c_connects.load(std::memory_order_relaxed);
    c.connect_failures = d.c_connect_failures.load(std::memory_order_relaxed);
    c.in_flight = d.c_in_flight.load(std::memory_order_relaxed);
    auto ns = d.last_probe_ns.load(std::memory_order_relaxed);
    if (ns >= 0)
        c.last_probe = std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                std::chrono::nanoseconds(ns)));
    c.last_probe_ok = d.last_probe_ok.load(std::memory_order_relaxed);
    c.last_probe_rtt = microseconds(d.last_probe_rtt_us.load(std::memory_order_relaxed));
    return c;
}

void DataServer::report_error(ErrorKind kind) noexcept {
    impl_->c_reported.fetch_add(1, std::memory_order_relaxed);
    impl_->note_transition(impl_->health.error_reported(kind),
                           std::string("error reported: ") + std::string(to_string(kind)));
}

void DataServer::probe_now() noexcept {
    impl_->probe_requested.store(true, std::memory_order_release);
    impl_->wake();
}

void DataServer::null(Deadline dl, Callback<NullResult> cb) noexcept {
    impl_->submit(std::make_unique<NullCall>("NULL", std::move(cb)), dl);
}
void DataServer::getattr(const DsFh& fh, Deadline dl, Callback<DsAttrs> cb) noexcept {
    impl_->submit(std::make_unique<GetattrCall>(std::move(cb), fh), dl);
}
void DataServer::lookup(std::string name, Deadline dl, Callback<LookupResult> cb) noexcept {
    impl_->submit(std::make_unique<LookupCall>(std::move(cb), std::move(name)), dl);
}
void DataServer::create(CreateArgs args, Deadline dl, Callback<CreateResult> cb) noexcept {
    impl_->submit(std::make_unique<CreateCall>(std::move(cb), std::move(args)), dl);
}
void DataServer::remove(std::string name, Deadline dl, Callback<Empty> cb) noexcept {
    impl_->submit(std::make_unique<RemoveCall>(std::move(cb), std::move(name)), dl);
}
void DataServer::setattr(const DsFh& fh, SetAttrs attrs, Deadline dl,
                         Callback<SetattrResult> cb) noexcept {
    impl_->submit(std::make_unique<SetattrCall>(std::move(cb), fh, attrs), dl);
}
void DataServer::read(const DsFh& fh, std::uint64_t offset, std::uint32_t count, Deadline dl,
                      Callback<ReadResult> cb) noexcept {
    impl_->submit(std::make_unique<ReadCall>(std::move(cb), fh, offset, count), dl);
}
void DataServer::write(const DsFh& fh, std::uint64_t offset, std::vector<std::uint8_t> data,
                       StableHow stable, Deadline dl, Callback<WriteResult> cb) noexcept {
    impl_->submit(std::make_unique<WriteCall>(std::move(cb), fh, offset, std::move(data), stable),
                  dl);
}
void DataServer::commit(const DsFh& fh, std::uint64_t offset, std::uint32_t count, Deadline dl,
                        Callback<CommitResult> cb) noexcept {
    impl_->submit(std::make_unique<CommitCall>(std::move(cb), fh, offset, count), dl);
}

namespace {
template <class T, class Submit> std::future<DsResult<T>> as_future(Submit&& submit) {
    auto p = std::make_shared<std::promise<DsResult<T>>>();
    auto f = p->get_future();
    submit([p](DsResult<T> r) { p->set_value(std::move(r)); });
    return f;
}
} // namespace

std::future<DsResult<NullResult>> DataServer::null(Deadline dl) {
    return as_future<NullResult>([&](Callback<NullResult> cb) { null(dl, std::move(cb)); });
}
std::future<DsResult<DsAttrs>> DataServer::getattr(const DsFh& fh, Deadline dl) {
    return as_future<DsAttrs>([&](Callback<DsAttrs> cb) { getattr(fh, dl, std::move(cb)); });
}
std::future<DsResult<LookupResult>> DataServer::lookup(std::string name, Deadline dl) {
    return as_future<LookupResult>(
        [&](Callback<LookupResult> cb) { lookup(std::move(name), dl, std::move(cb)); });
}
std::future<DsResult<CreateResult>> DataServer::create(CreateArgs args, Deadline dl) {
    return as_future<CreateResult>(
        [&](Callback<CreateResult> cb) { create(std::move(args), dl, std::move(cb)); });
}
std::future<DsResult<Empty>> DataServer::remove(std::string name, Deadline dl) {
    return as_future<Empty>(
        [&](Callback<Empty> cb) { remove(std::move(name), dl, std::move(cb)); });
}
std::future<DsResult<SetattrResult>> DataServer::setattr(const DsFh& fh, SetAttrs attrs,
                                                         Deadline dl) {
    return as_future<SetattrResult>(
        [&](Callback<SetattrResult> cb) { setattr(fh, attrs, dl, std::move(cb)); });
}
std::future<DsResult<ReadResult>> DataServer::read(const DsFh& fh, std::uint64_t offset,
                                                   std::uint32_t count, Deadline dl) {
    return as_future<ReadResult>(
        [&](Callback<ReadResult> cb) { read(fh, offset, count, dl, std::move(cb)); });
}
std::future<DsResult<WriteResult>> DataServer::write(const DsFh& fh, std::uint64_t offset,
                                                     std::vector<std::uint8_t> data,
                                                     StableHow stable, Deadline dl) {
    return as_future<WriteResult>([&](Callback<WriteResult> cb) {
        write(fh, offset, std::move(data), stable, dl, std::move(cb));
    });
}
std::future<DsResult<CommitResult>> DataServer::commit(const DsFh& fh, std::uint64_t offset,
                                                       std::uint32_t count, Deadline dl) {
    return as_future<CommitResult>(
        [&](Callback<CommitResult> cb) { commit(fh, offset, count, dl, std::move(cb)); });
}

} // namespace flexfiles::fleet
