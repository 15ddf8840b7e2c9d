// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/nfs3_client.hpp"

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <functional>
#include <mutex>
#include <poll.h>

// libnfs 4.0: the raw layer's *_async calls plus a poll loop make each call synchronous
// while keeping the full XDR reply (rpc_nfs3_*_task is the later libnfs name). The fleet's
// conversion header brings libnfs.h, libnfs-raw.h and libnfs-raw-nfs.h in the order they
// need; the MOUNT protocol's comes after them.
#include "fleet/libnfs_nfs3.hpp"

#include <nfsc/libnfs-raw-mount.h>

namespace flexfiles::harness {

namespace {

using Clock = std::chrono::steady_clock;

struct ParsedUrl {
    std::string server;
    std::string path;
    int nfs_port = -1;
    int mount_port = -1;
};

int parse_port(const std::string& url, const std::string& key, const std::string& value) {
    int port = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
    if (ec != std::errc() || ptr != value.data() + value.size() || port < 1 || port > 65535)
        throw std::invalid_argument("NFS URL " + url + ": bad " + key + " '" + value + "'");
    return port;
}

ParsedUrl parse_url(const std::string& url) {
    const std::string scheme = "nfs://";
    if (url.rfind(scheme, 0) != 0)
        throw std::invalid_argument("NFS URL must start with nfs://: " + url);
    ParsedUrl out;
    const auto rest = url.substr(scheme.size());
    const auto slash = rest.find('/');
    const auto qmark = rest.find('?');
    if (slash == std::string::npos || (qmark != std::string::npos && qmark < slash))
        throw std::invalid_argument("NFS URL has no path: " + url);
    out.server = rest.substr(0, slash);
    out.path = rest.substr(slash, qmark == std::string::npos ? std::string::npos : qmark - slash);
    if (out.server.empty())
        throw std::invalid_argument("NFS URL has no server: " + url);
    if (qmark != std::string::npos) {
        std::string query = rest.substr(qmark + 1);
        std::size_t pos = 0;
        while (pos <= query.size()) {
            const auto amp = query.find('&', pos);
            const std::string item =
                query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
            const auto eq = item.find('=');
            const std::string key = item.substr(0, eq);
            const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
            if (key == "nfsport")
                out.nfs_port = parse_port(url, key, value);
            else if (key == "mountport")
                out.mount_port = parse_port(url, key, value);
            else if (!(key == "version" && value == "3") && !item.empty())
                throw std::invalid_argument("NFS URL " + url + ": unsupported argument '" + item +
                                            "' (this client knows nfsport, mountport, version=3)");
            if (amp == std::string::npos)
                break;
            pos = amp + 1;
        }
    }
    if (out.nfs_port < 0 || out.mount_port < 0)
        throw std::invalid_argument("NFS URL " + url +
                                    " needs nfsport= and mountport= (no portmapper lookups)");
    return out;
}

using fleet::from_libnfs;
using fleet::to_libnfs;

Nfs3Fh to_fh(const nfs_fh3& fh) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(fh.data.data_val);
    return Nfs3Fh{std::vector<std::uint8_t>(p, p + fh.data.data_len)};
}

nfs_fh3 wire_fh(const Nfs3Fh& fh) {
    nfs_fh3 out{};
    out.data.data_len = static_cast<u_int>(fh.bytes.size());
    out.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(fh.bytes.data()));
    return out;
}

// One call in flight; the callback copies what it needs out of libnfs's reply, which is
// freed as soon as the callback returns.
struct Pending {
    bool done = false;
    int rpc_status = RPC_STATUS_ERROR;
    std::string error;
    std::function<void(void*)> on_reply;
};

void on_complete(struct rpc_context* /*rpc*/, int status, void* data, void* private_data) {
    auto* p = static_cast<Pending*>(private_data);
    p->done = true;
    p->rpc_status = status;
    if (status == RPC_STATUS_SUCCESS) {
        if (p->on_reply)
            p->on_reply(data);
    } else if (status == RPC_STATUS_ERROR && data != nullptr) {
        p->error = static_cast<const char*>(data);
    } else if (status == RPC_STATUS_CANCEL) {
        p->error = "cancelled";
    } else {
        p->error = "RPC status " + std::to_string(status);
    }
}

void ignore_sigpipe_once() {
    // A server killed mid-call must fail the call, not the test process.
    static std::once_flag once;
    std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

} // namespace

struct Nfs3Client::Impl {
    std::string url;
    ParsedUrl target;
    Nfs3Credentials creds;
    std::chrono::milliseconds timeout;
    struct rpc_context* rpc = nullptr; // the NFS connection
    Nfs3Fh root;

    ~Impl() { drop(); }

    void drop() {
        if (rpc != nullptr)
            rpc_destroy_context(rpc);
        rpc = nullptr;
    }

    std::string where() const { return target.server + " (" + url + ")"; }

    // Drives `ctx` until `p` completes; throws Nfs3TransportError on failure or timeout.
    // On any failure the connection is closed, which completes every call in flight, so
    // no callback can reach a Pending that no longer exists.
    void run(struct rpc_context* ctx, Pending& p, const std::string& what) {
        const auto deadline = Clock::now() + timeout;
        while (!p.done) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())
                    .count();
            if (left <= 0) {
                rpc_disconnect(ctx, "timed out");
                if (ctx == rpc)
                    drop();
                throw Nfs3TransportError(what + " to " + where() + ": no reply within " +
                                         std::to_string(timeout.count()) + " ms");
            }
            pollfd pfd{rpc_get_fd(ctx), static_cast<short>(rpc_which_events(ctx)), 0};
            const int r = poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 100)));
            if (r < 0 && errno != EINTR)
                throw Nfs3TransportError(what + ": poll: " + std::strerror(errno));
            if (rpc_service(ctx, r > 0 ? pfd.revents : 0) < 0 && !p.done) {
                const std::string err = rpc_get_error(ctx) ? rpc_get_error(ctx) : "rpc_service";
                rpc_disconnect(ctx, err.c_str());
                if (ctx == rpc)
                    drop();
                throw Nfs3TransportError(what + " to " + where() + ": " + err);
            }
        }
        if (p.rpc_status != RPC_STATUS_SUCCESS) {
            if (ctx == rpc)
                drop();
            throw Nfs3TransportError(what + " to " + where() + ": " + p.error);
        }
    }

    struct rpc_context* connect(int port, int program, int version, const std::string& what) {
        struct rpc_context* ctx = rpc_init_context();
        if (ctx == nullptr)
            throw Nfs3TransportError("rpc_init_context failed");
        rpc_set_uid(ctx, static_cast<int>(creds.uid));
        rpc_set_gid(ctx, static_cast<int>(creds.gid));
        Pending p;
        if (rpc_connect_port_async(ctx, target.server.c_str(), port, program, version, on_complete,
                                   &p) != 0) {
            const std::string err = rpc_get_error(ctx) ? rpc_get_error(ctx) : "?";
            rpc_destroy_context(ctx);
            throw Nfs3TransportError(what + ": cannot connect to " + where() + ": " + err);
        }
        try {
            run(ctx, p, what + " connect");
        } catch (...) {
            rpc_destroy_context(ctx);
            throw;
        }
        return ctx;
    }

    void mount() {
        drop();
        struct rpc_context* m = connect(target.mount_port, MOUNT_PROGRAM, MOUNT_V3, "MOUNT");
        Pending p;
        mountstat3 status = MNT3ERR_SERVERFAULT;
        Nfs3Fh fh;
        p.on_reply = [&](void* data) {
            const auto* res = static_cast<const mountres3*>(data);
            status = res->fhs_status;
            if (status == MNT3_OK) {
                const auto& h = res->mountres3_u.mountinfo.fhandle;
                const auto* b = reinterpret_cast<const std::uint8_t*>(h.fhandle3_val);
                fh.bytes.assign(b, b + h.fhandle3_len);
            }
        };
        std::string path = target.path;
        try {
            if (rpc_mount3_mnt_async(m, on_complete, path.data(), &p) != 0)
                throw Nfs3TransportError("MOUNT: cannot queue the call");
            run(m, p, "MOUNT");
        } catch (...) {
            rpc_destroy_context(m);
            throw;
        }
        rpc_destroy_context(m);
        if (status != MNT3_OK)
            throw Nfs3TransportError("MOUNT " + target.path + " on " + where() +
                                     " failed: status " + std::to_string(status));
        root = std::move(fh);
        rpc = connect(target.nfs_port, NFS_PROGRAM, NFS_V3, "NFS");
    }

    struct rpc_context* nfs(const char* what) {
        if (rpc == nullptr)
            throw Nfs3TransportError(std::string(what) + ": not connected to " + where() +
                                     " (an earlier call failed; reconnect())");
        return rpc;
    }

    template <typename Args, typename Fn>
    void call(const char* what, int (*send)(struct rpc_context*, rpc_cb, Args*, void*), Args& args,
              Fn&& on_reply) {
        struct rpc_context* ctx = nfs(what);
        Pending p;
        p.on_reply = std::forward<Fn>(on_reply);
        if (send(ctx, on_complete, &args, &p) != 0)
            throw Nfs3TransportError(std::string(what) + ": cannot queue the call");
        run(ctx, p, what);
    }
};

Nfs3Client::Nfs3Client(const std::string& url, Nfs3Credentials creds,
                       std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
    ignore_sigpipe_once();
    impl_->url = url;
    impl_->target = parse_url(url);
    impl_->creds = creds;
    impl_->timeout = timeout;
    impl_->mount();
}

Nfs3Client::~Nfs3Client() = default;

const Nfs3Fh& Nfs3Client::root() const {
    return impl_->root;
}

const std::string& Nfs3Client::server() const {
    return impl_->target.server;
}

void Nfs3Client::set_credentials(Nfs3Credentials creds) {
    impl_->creds = creds;
    if (impl_->rpc != nullptr) {
        rpc_set_uid(impl_->rpc, static_cast<int>(creds.uid));
        rpc_set_gid(impl_->rpc, static_cast<int>(creds.gid));
    }
}

void Nfs3Client::reconnect() {
    impl_->mount();
}

Nfs3GetattrResult Nfs3Client::getattr(const Nfs3Fh& fh) {
    GETATTR3args args{};
    args.object = wire_fh(fh);
    Nfs3GetattrResult out;
    impl_->call("GETATTR", rpc_nfs3_getattr_async, args, [&](void* data) {
        const auto* res = static_cast<const GETATTR3res*>(data);
        out.status = static_cast<Nfs3Status>(res->status);
        if (res->status == NFS3_OK)
            out.attr = from_libnfs(res->GETATTR3res_u.resok.obj_attributes);
    });
    return out;
}

Nfs3LookupResult Nfs3Client::lookup(const Nfs3Fh& dir, const std::string& name) {
    std::string n = name;
    LOOKUP3args args{};
    args.what.dir = wire_fh(dir);
    args.what.name = n.data();
    Nfs3LookupResult out;
    impl_->call("LOOKUP", rpc_nfs3_lookup_async, args, [&](void* data) {
        const auto* res = static_cast<const LOOKUP3res*>(data);
        out.status = static_cast<Nfs3Status>(res->status);
        if (res->status == NFS3_OK) {
            out.fh = to_fh(res->LOOKUP3res_u.resok.object);
            out.attr = from_libnfs(res->LOOKUP3res_u.resok.obj_attributes);
            out.dir_attr = from_libnfs(res->LOOKUP3res_u.resok.dir_attributes);
        } else {
            out.dir_attr = from_libnfs(res->LOOKUP3res_u.resfail.dir_attributes);
        }
    });
    return out;
}

Nfs3CreateResult Nfs3Client::create(const Nfs3Fh& dir, const std::string& name, std::uint32_t mode,
                                    bool guarded) {
    std::string n = name;
    CREATE3args args{};
    args.where.dir = wire_fh(dir);
    args.where.name = n.data();
    args.how.mode = guarded ? GUARDED : UNCHECKED;
    Nfs3SetAttrs attrs;
    attrs.mode = mode;
    args.how.createhow3_u.obj_attributes = to_libnfs(attrs);
    Nfs3CreateResult out;
    impl_->call("CREATE", rpc_nfs3_create_async, args, [&](void* data) {
        const auto* res = static_cast<const CREATE3res*>(data);
        out.status = static_cast<Nfs3Status>(res->status);
        if (res->status == NFS3_OK) {
            const auto& ok = res->CREATE3res_u.resok;
            if (ok.obj.handle_follows)
                out.fh = to_fh(ok.obj.post_op_fh3_u.handle);
            out.attr = from_libnfs(ok.obj_attributes);
            out.dir_wcc = from_libnfs(ok.dir_wcc);
        } else {
            out.dir_wcc = from_libnfs(res->CREATE3res_u.resfail.dir_wcc);
        }
    });
    return out;
}

Nfs3WriteResult Nfs3Client::write(const Nfs3Fh& fh, std::uint64_t offset,
                                  const std::vector<std::uint8_t>& data, Nfs3Stable stable) {
    WRITE3args args{};
    args.file = wire_fh(fh);
    args.offset = offset;
    args.count = static_cast<count3>(data.size());
    args.stable = static_cast<stable_how>(stable);
    args.data.data_len = static_cast<u_int>(data.size());
    args.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(data.data()));
    Nfs3WriteResult out;
    impl_->call("WRITE", rpc_nfs3_write_async, args, [&](void* reply) {
        const auto* res = static_cast<const WRITE3res*>(reply);
        out.status = static_cast<Nfs3Status>(res->status);
        if (res->status == NFS3_OK) {
            const auto& ok = res->WRITE3res_u.resok;
            out.file_wcc = from_libnfs(ok.file_wcc);
            out.count = ok.count;
            out.committed = static_cast<Nfs3Stable>(ok.committed);
            out.verf = from_libnfs(ok.verf);
        } else {
            out.file_wcc = from_libnfs(res->WRITE3res_u.resfail.file_wcc);
        }
    });
    return out;
}

Nfs3ReadResult Nfs3Client::read(const Nfs3Fh& fh, std::uint64_t offset, std::uint32_t count) {
    READ3args args{};
    args.file = wire_fh(fh);
    args.offset = offset;
    args.count = count;
    Nfs3ReadResult out;
    impl_->call("READ", rpc_nfs3_read_async, args, [&](void* reply) {
        const auto* res = static_cast<const READ3res*>(reply);
        out.status = static_cast<Nfs3Status>(res->status);
        if (res->status == NFS3_OK) {
            const auto& ok = res->READ3res_u.resok;
            out.attr = from_libnfs(ok.file_attributes);
            const auto* b = reinterpret_cast<const std::uint8_t*>(ok.data.data_val);
            out.data.assign(b, b + ok.data.data_len);
            out.eof = ok.eof != 0;
        } else {
            out.attr = from_libnfs(res->READ3res_u.resfail.file_attributes);
        }
    });
    return out;
}

Nfs3CommitResult Nfs3Client::commit(const Nfs3Fh& fh, std::uint64_t offset, std::uint32_t count) {
    COMMIT3args args{};
    args.file = wire_fh(fh);
    args.offset = offset;
    args.count = count;
    Nfs3CommitResult out;
    impl_->call("COMMIT", rpc_nfs3_commit_async, args, [&](void* reply) {
        const auto* res = static_cast<const COMMIT3res*>(reply);
        out.status = static_cast<Nfs3Status>(res->status);
        if (res->status == NFS3_OK) {
            out.file_wcc = from_libnfs(res->COMMIT3res_u.resok.file_wcc);
            out.verf = from_libnfs(res->COMMIT3res_u.resok.verf);
        } else {
            out.file_wcc = from_libnfs(res->COMMIT3res_u.resfail.file_wcc);
        }
    });
    return out;
}

Nfs3SetattrResult Nfs3Client::setattr(const Nfs3Fh& fh, const Nfs3SetAttrs& attrs) {
    SETATTR3args args{};
    args.object = wire_fh(fh);
    args.new_attributes = to_libnfs(attrs);
    Nfs3SetattrResult out;
    impl_->call("SETATTR", rpc_nfs3_setattr_async, args, [&](void* reply) {
        const auto* res = static_cast<const SETATTR3res*>(reply);
        out.status = static_cast<Nfs3Status>(res->status);
        out.obj_wcc = from_libnfs(res->status == NFS3_OK ? res->SETATTR3res_u.resok.obj_wcc
                                                         : res->SETATTR3res_u.resfail.obj_wcc);
    });
    return out;
}

Nfs3RemoveResult Nfs3Client::remove(const Nfs3Fh& dir, const std::string& name) {
    std::string n = name;
    REMOVE3args args{};
    args.object.dir = wire_fh(dir);
    args.object.name = n.data();
    Nfs3RemoveResult out;
    impl_->call("REMOVE", rpc_nfs3_remove_async, args, [&](void* reply) {
        const auto* res = static_cast<const REMOVE3res*>(reply);
        out.status = static_cast<Nfs3Status>(res->status);
        out.dir_wcc = from_libnfs(res->status == NFS3_OK ? res->REMOVE3res_u.resok.dir_wcc
                                                         : res->REMOVE3res_u.resfail.dir_wcc);
    });
    return out;
}

} // namespace flexfiles::harness
