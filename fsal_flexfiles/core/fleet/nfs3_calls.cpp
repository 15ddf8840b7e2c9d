// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The NFSv3 procedures a DataServer sends: for each, a Call that checks its arguments,
// builds the libnfs request (the raw rpc_nfs3_*_async API, for full replies: filehandles
// and post-op attributes) and turns the reply into the fleet's types; and the DataServer
// methods that start it. When and on which connection a Call goes out is the event loop's
// business (event_loop.cpp), not theirs.
#include "fleet/data_server.hpp"
#include "fleet/data_server_impl.hpp"
#include "fleet/libnfs_nfs3.hpp" // libnfs's headers, in the order they need

#include <algorithm>
#include <cstring>
#include <future>
#include <memory>

namespace flexfiles::fleet {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

// The fleet's attributes are fattr3 with mode's permission bits only (ds_types.hpp).
std::optional<DsAttrs> to_attrs(const post_op_attr& p) {
    auto a = from_libnfs(p);
    if (a)
        a->mode &= 07777;
    return a;
}

DsAttrs to_attrs(const fattr3& f) {
    DsAttrs a = from_libnfs(f);
    a.mode &= 07777;
    return a;
}

// What the fleet sends: mode's permission bits only.
sattr3 to_sattr3(SetAttrs s) {
    if (s.mode)
        *s.mode &= 07777;
    return to_libnfs(s);
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
    h.data.data_len = static_cast<u_int>(fh.size());
    h.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(fh.data()));
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

using Impl = DataServer::Impl;

void reply_cb(rpc_context*, int status, void* data, void* priv) {
    auto* c = static_cast<Call*>(priv);
    if (c->direct)
        on_direct_reply(c, status, data);
    else
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
                             nfs3::status_name(nfs3::Status{status})});
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
        if (!nfs_failed(d, enum_bits(r->status)))
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
        if (nfs_failed(d, enum_bits(r->status)))
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
            if (nfs_failed(d, enum_bits(r->status)))
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
            if (nfs_failed(d, enum_bits(r->status)))
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
            if (enum_bits(r->status) != 0) {
                fail(d, DsStatus{DsErrc::nfs, enum_bits(r->status),
                                 d.label + ": CREATE " + args.name +
                                     ": file created but SETATTR of its attributes failed: " +
                                     nfs3::status_name(
                                         static_cast<nfs3::Status>(enum_bits(r->status)))});
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
        if (!nfs_failed(d, enum_bits(r->status)))
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
        if (!nfs_failed(d, enum_bits(r->status)))
            complete(d, DsResult<SetattrResult>::success(
                            {to_attrs(r->SETATTR3res_u.resok.obj_wcc.after)}));
        return Step::done;
    }
    SetAttrs attrs;
};

struct ReadCall final : TypedCall<ReadResult>, FhCall {
    ReadCall(Callback<ReadResult> cb, const DsFh& f, std::uint64_t off, std::uint32_t cnt,
             std::shared_ptr<ReadSink> into = nullptr, std::size_t into_at = 0)
        : TypedCall("READ", std::move(cb)), offset(off), count(cnt), sink(std::move(into)),
          at(into_at) {
        fh = f;
    }
    std::string check(const Impl& d) const override {
        if (count > d.cfg.max_io_size)
            return "count " + std::to_string(count) + " exceeds max_io_size " +
                   std::to_string(d.cfg.max_io_size);
        if (sink && (at > sink->size() || count > sink->size() - at))
            return "count " + std::to_string(count) + " at " + std::to_string(at) +
                   " does not fit the caller's " + std::to_string(sink->size()) + " bytes";
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
        if (nfs_failed(d, enum_bits(r->status)))
            return Step::done;
        auto& ok = r->READ3res_u.resok;
        ReadResult out;
        std::size_t n = std::min<std::size_t>(ok.data.data_len, count);
        if (n > 0 && ok.data.data_val != nullptr) {
            auto* p = reinterpret_cast<const std::uint8_t*>(ok.data.data_val);
            if (sink)
                out.placed = sink->fill(at, {p, n});
            else
                out.data.assign(p, p + n);
        }
        out.eof = ok.eof != 0;
        out.attrs = to_attrs(ok.file_attributes);
        complete(d, DsResult<ReadResult>::success(std::move(out)));
        return Step::done;
    }
    std::uint64_t offset;
    std::uint32_t count;
    std::shared_ptr<ReadSink> sink; // read_into: where the bytes go
    std::size_t at;
};

struct WriteCall final : TypedCall<WriteResult>, FhCall {
    WriteCall(Callback<WriteResult> cb, const DsFh& f, std::uint64_t off,
              std::shared_ptr<WriteSource> src, std::size_t at, std::size_t len, StableHow s)
        : TypedCall("WRITE", std::move(cb)), offset(off), source(std::move(src)), start(at),
          length(len), stable(s) {
        fh = f;
    }
    std::string check(const Impl& d) const override {
        if (length > d.cfg.max_io_size)
            return "length " + std::to_string(length) + " exceeds max_io_size " +
                   std::to_string(d.cfg.max_io_size);
        if (source == nullptr || start > source->size() || length > source->size() - start)
            return "the data to write lies outside its buffer";
        return fh_check();
    }
    std::string object() const override { return fh_object(); }
    const DsFh* mutated_fh() const override { return &fh; }
    int issue(Impl&, rpc_context* rpc) override {
        WRITE3args a;
        std::memset(&a, 0, sizeof(a));
        a.file = to_fh3(fh);
        a.offset = offset;
        a.count = static_cast<count3>(length);
        a.stable = static_cast<stable_how>(stable);
        a.data.data_len = static_cast<u_int>(length);
        int rc = 0;
        const bool encoded = source->use([&](std::span<const std::uint8_t> bytes) {
            // libnfs only reads it (to encode its copy).
            a.data.data_val =
                const_cast<char*>(reinterpret_cast<const char*>(bytes.data() + start));
            rc = rpc_nfs3_write_async(rpc, reply_cb, &a, this);
        });
        if (!encoded)
            return kIssueWithdrawn;
        if (rc == 0)
            source.reset(); // libnfs encoded a copy
        return rc;
    }
    Step on_reply(Impl& d, void* raw) override {
        auto* r = static_cast<WRITE3res*>(raw);
        if (nfs_failed(d, enum_bits(r->status)))
            return Step::done;
        auto& ok = r->WRITE3res_u.resok;
        WriteResult out;
        out.count = ok.count;
        out.committed = static_cast<StableHow>(enum_bits(ok.committed));
        out.verifier = from_libnfs(ok.verf);
        out.attrs = to_attrs(ok.file_wcc.after);
        out.times = {submitted, sent, Clock::now()};
        complete(d, DsResult<WriteResult>::success(out));
        return Step::done;
    }
    std::uint64_t offset;
    std::shared_ptr<WriteSource> source; // released once encoded
    std::size_t start = 0;
    std::size_t length = 0;
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
        if (nfs_failed(d, enum_bits(r->status)))
            return Step::done;
        auto& ok = r->COMMIT3res_u.resok;
        complete(d, DsResult<CommitResult>::success(
                        {from_libnfs(ok.verf), to_attrs(ok.file_wcc.after)}));
        return Step::done;
    }
    std::uint64_t offset;
    std::uint32_t count;
};

} // namespace

std::string issue_failure(int rc, rpc_context* rpc) {
    return rc == kIssueWithdrawn ? "not sent: its caller stopped waiting and took its data back"
                                 : std::string("could not queue the request: ") + rpc_error(rpc);
}

std::unique_ptr<Call> make_null_call(const char* op_name, Callback<NullResult> cb) {
    return std::make_unique<NullCall>(op_name, std::move(cb));
}

std::unique_ptr<Call> make_write_call(Callback<WriteResult> cb, const DsFh& fh,
                                      std::uint64_t offset, std::shared_ptr<WriteSource> source,
                                      std::size_t at, std::size_t length, StableHow stable) {
    return std::make_unique<WriteCall>(std::move(cb), fh, offset, std::move(source), at, length,
                                       stable);
}

// ---------------------------------------------------------------------------------------
// The operations of data_server.hpp

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
void DataServer::read_into(const DsFh& fh, std::uint64_t offset, std::uint32_t count,
                           std::shared_ptr<ReadSink> sink, std::size_t at, Deadline dl,
                           Callback<ReadResult> cb) noexcept {
    impl_->submit(std::make_unique<ReadCall>(std::move(cb), fh, offset, count, std::move(sink), at),
                  dl);
}
void DataServer::write(const DsFh& fh, std::uint64_t offset, std::vector<std::uint8_t> data,
                       StableHow stable, Deadline dl, Callback<WriteResult> cb) noexcept {
    const std::size_t length = data.size();
    write(fh, offset, std::make_shared<WriteSource>(std::move(data)), 0, length, stable, dl,
          std::move(cb));
}
void DataServer::write(const DsFh& fh, std::uint64_t offset, std::shared_ptr<WriteSource> source,
                       std::size_t at, std::size_t length, StableHow stable, Deadline dl,
                       Callback<WriteResult> cb) noexcept {
    impl_->submit(std::make_unique<WriteCall>(std::move(cb), fh, offset, std::move(source), at,
                                              length, stable),
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
std::future<DsResult<ReadResult>> DataServer::read_into(const DsFh& fh, std::uint64_t offset,
                                                        std::uint32_t count,
                                                        std::shared_ptr<ReadSink> sink,
                                                        std::size_t at, Deadline dl) {
    return as_future<ReadResult>([&](Callback<ReadResult> cb) {
        read_into(fh, offset, count, std::move(sink), at, dl, std::move(cb));
    });
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
